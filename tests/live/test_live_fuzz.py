"""The fuzz tier's live part: hostile frames through a real Daphne, where a close code that is not
an int, a frame UTF-8 cannot encode or an exception escaping a consumer becomes a 1011 close.

Seeded like tests/fuzz (``A2UI_FUZZ_SEED``); a few dozen frames per socket (under the default
rate limit of the server, 60 a minute per session).
"""

import asyncio
import json
import socket
import uuid
import zlib

import pytest
from websockets.exceptions import ConnectionClosed

from tests.fuzz import templates
from tests.fuzz.grammar import Frame, Fuzzer, fixed_frames
from tests.fuzz.harness import KNOWN_CODES, V09_CODES
from tests.fuzz.seed import SEED, cases
from tests.live.client import TIMEOUT, Client, ahttp, init_session

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.fuzz]

SURROGATES = [
    Frame("fixed", '{"jsonrpc":"1.0","id":"\\ud800"}'),
    Frame("fixed", '{"jsonrpc":"2.0","id":"\\ud800","method":"x\\ud800"}'),
]


def _sendable(frames):
    """What a real client can send: text frames are UTF-8 (else binary), at most 1 MiB."""
    out = []
    for frame in frames:
        if len(frame.as_bytes()) > 1_000_000:
            continue
        if frame.text is not None:
            try:
                frame.text.encode("utf-8")
            except UnicodeEncodeError:
                frame = Frame(frame.label + ":as-binary", data=frame.as_bytes())
        out.append(frame)
    return out


class LiveSocket:
    def __init__(self, url, headers, probe, problems, on_open=None):
        self.url, self.headers, self.probe_body = url, headers, probe
        self.problems, self.on_open = problems, on_open
        self.n = 0

    async def open(self):
        self.client = await Client.open(self.url, self.headers)
        if self.on_open is not None:
            await self.on_open(self.client)

    async def case(self, frame):
        self.n += 1
        probe_id = f"probe-{self.n}"
        try:
            await self.client.ws.send(frame.data if frame.data is not None else frame.text)
            await self.client.send({"jsonrpc": "2.0", "id": probe_id, **self.probe_body})
            reply = await self.client.recv_until(
                lambda m: m.get("id") == probe_id and "method" not in m, timeout=TIMEOUT)
        except ConnectionClosed as exc:
            code = exc.rcvd.code if exc.rcvd else None
            self.problems.append(f"{frame.short()} -> socket closed with {code}")
            await self.open()
            return
        if "result" not in reply:
            self.problems.append(f"{frame.short()} -> the probe was refused: {reply}")
        for obj in self.client.skipped:
            error = obj.get("error") if "method" not in obj else None
            if error is not None and error.get("code") not in KNOWN_CODES:
                self.problems.append(f"{frame.short()} -> {json.dumps(obj)[:200]}")


async def test_hostile_frames_through_daphne(daphne_server, stream_token, agent_key, agent):
    server = daphne_server()
    fuzzer = Fuzzer(zlib.crc32(f"{SEED}:live".encode()))
    problems = []

    # /ws/v09 refusals arrive as their close codes through a real close (an IntEnum was 1011).
    client = await Client.open(f"{server.ws_url}/ws/v09/a2ui?token=nope")
    code, _, before = await client.expect_close()
    assert (code, before[0]["error"]["code"]) == (4006, "AUTH_FAILED"), (code, before)
    client = await Client.open(f"{server.ws_url}/ws/v09/a2ui?token={stream_token}"
                               f"&session_id={uuid.uuid4()}")
    await client.send(templates.v09_handshake())
    code, _, before = await client.expect_close()
    assert (code, before[0]["error"]["code"]) == (4000, "SESSION_NOT_FOUND"), (code, before)

    # The JSON-RPC user socket.
    async def init(c):
        self_sid.append(await init_session(c))

    self_sid = []
    user = LiveSocket(f"{server.ws_url}/ws/v4/a2ui?token={stream_token}", None,
                      {"method": "user.cancel", "params": {"task_id": "probe"}}, problems, init)
    await user.open()
    frames = SURROGATES + fixed_frames(templates.user_messages()[0], "user")[:10]
    frames += [fuzzer.frame(fuzzer.choice(templates.user_messages()), "user")
               for _ in range(cases(12))]
    for frame in _sendable(frames):
        await user.case(frame)

    # The agent socket, on the user's session.
    agent_socket = LiveSocket(f"{server.ws_url}/ws/v4/a2ui/agent",
                              {"Authorization": f"Bearer {agent_key}"},
                              {"method": "a2ui.sessions", "params": {}}, problems)
    await agent_socket.open()
    messages = templates.agent_messages(self_sid[0])
    frames = SURROGATES + [Frame("fixed", '{"jsonrpc":"2.0","id":3,"method":"ui.notify","params":'
                                 '{"session_id":"\\ud800","level":"info","title":"x"}}')]
    frames += [fuzzer.frame(fuzzer.choice(messages), "agent") for _ in range(cases(25))]
    for frame in _sendable(frames):
        await agent_socket.case(frame)

    # The v0.9 socket: every refusal is an error frame, never a close.
    v09 = await Client.open(f"{server.ws_url}/ws/v09/a2ui?token={stream_token}")
    await v09.send(templates.v09_handshake())
    await v09.recv_until(lambda m: "session" in m)
    v09_frames = [fuzzer.frame(fuzzer.choice(templates.v09_client_messages()), "v09",
                               jsonrpc=False) for _ in range(cases(20))]
    for frame in _sendable(SURROGATES + v09_frames):
        try:
            await v09.ws.send(frame.data if frame.data is not None else frame.text)
            await v09.send({**templates.v09_action("probe-surface")})
            reply = await v09.recv_until(
                lambda m: m.get("error", {}).get("surfaceId") == "probe-surface")
        except ConnectionClosed as exc:
            problems.append(f"{frame.short()} -> v0.9 socket closed with "
                            f"{exc.rcvd.code if exc.rcvd else None}")
            break
        for obj in v09.skipped:
            if obj.get("error", {}).get("code") not in V09_CODES:
                problems.append(f"{frame.short()} -> {json.dumps(obj)[:200]}")
        assert reply["error"]["code"] == "VALIDATION_FAILED"

    # REST: a surrogate echoed in an error is a 4xx, not a 500.
    status, body = await ahttp(
        "POST", f"{server.url}/api/v4/sessions/{self_sid[0]}/messages",
        {"jsonrpc": "2.0", "method": "x\ud800", "params": {}},
        headers={"Authorization": f"Bearer {agent_key}"})
    if not 400 <= status < 500:
        problems.append(f"REST surrogate method -> HTTP {status}: {body!r:.200}")

    # A Host header outside ALLOWED_HOSTS: 400, one WARNING line, no traceback (Django logs it
    # at ERROR with one; a2ui.logfilters.RefusedRequest in the project's LOGGING).
    for path in ("/a2ui/", "/api/v4/consents"):
        status, body = await ahttp("GET", f"{server.url}{path}", headers={"Host": "evil.example"})
        if status != 400:
            problems.append(f"Host evil.example {path} -> HTTP {status}: {body!r:.200}")

    # A static path out of the static roots, as a raw request line (clients normalize "..").
    status_line = await asyncio.to_thread(_raw_get, server.port, "/static/../../etc/passwd")
    if not status_line.startswith(b"HTTP/1.1 4"):
        problems.append(f"/static/../../etc/passwd -> {status_line!r}")

    log = server.log()
    if "Invalid HTTP_HOST header" not in log:
        problems.append("the refused Host header is not in the server log")
    for marker in ("Traceback", "Exception inside application", "Internal Server Error"):
        if marker in log:
            problems.append(f"server log has {marker!r}:\n{log[-3000:]}")
    assert not problems, (f"replay with A2UI_FUZZ_SEED={SEED}\n" + "\n".join(problems[:40]))


def _raw_get(port, path):
    """The status line of a GET whose path is sent exactly as given."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
        return sock.recv(200).split(b"\r\n")[0]


def _slow_requests():
    """Whole requests to every kind of endpoint, as bytes; a slow client sends a prefix."""
    def post(path, body, extra=b""):
        return (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\n").encode() + extra + b"\r\n" + body

    upgrade = (b"Host: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
    return [
        b"GET /a2ui/ HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/html\r\n\r\n",
        b"GET /ws/v4/a2ui?token=x HTTP/1.1\r\n" + upgrade,
        b"GET /ws/v09/a2ui?token=x HTTP/1.1\r\n" + upgrade,
        post("/api/v4/sessions", json.dumps({"title": "x" * 300}).encode()),
        post("/mcp", json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                 "params": {"protocolVersion": "2025-06-18"}}).encode(),
             b"Accept: application/json, text/event-stream\r\n"),
        post("/api/v4/agui/run", json.dumps({"threadId": "t", "runId": "r",
                                             "messages": []}).encode()),
        b"POST /api/v4/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n"
        b"\r\n5\r\n{\"a\":\r\n3\r\n 1}\r\n0\r\n\r\n",
    ]


async def test_slow_clients_through_daphne(daphne_server):
    """Seeded slow clients: a prefix of a real request (its head or its body cut anywhere, never
    whole) sent in random pieces at random intervals from four loopback addresses. Each is
    closed by its deadline (the head's from the connection's opening, the body's from the
    head's end), the server answers meanwhile, and logs one WARNING line per address at most."""
    from tests.live import slowclients

    header, body = 2, 3
    server = daphne_server("--header-timeout", str(header), "--body-timeout", str(body))
    fuzzer = Fuzzer(zlib.crc32(f"{SEED}:slow".encode()))
    rng = fuzzer.rng
    requests = _slow_requests()
    clients = []
    for _ in range(cases(24)):
        request = rng.choice(requests)
        prefix = request[:rng.randrange(0, len(request))]
        cuts = sorted(rng.sample(range(1, len(prefix)), max(0, min(len(prefix) - 1, rng.randrange(6)))))
        pieces = [prefix[a:b] for a, b in zip([0, *cuts], [*cuts, len(prefix)], strict=True)]
        clients.append(slowclients.SlowClient(
            server.port, source=f"127.0.0.{rng.randrange(1, 5)}", interval=rng.uniform(0.1, 0.8),
            pieces=pieces))
    flood = asyncio.create_task(asyncio.to_thread(slowclients.drive, clients, 15))
    await asyncio.sleep(0.5)
    status = await asyncio.to_thread(slowclients.answered, server.port, "127.0.0.1")
    await flood

    problems = []
    if not status.startswith(b"HTTP/1.1 ") or status.startswith(b"HTTP/1.1 5"):
        problems.append(f"a whole GET during the slow clients -> {status!r}")
    for client in clients:
        done = client.head_done
        due = [header if done is None or done >= header else done + body]
        if done is not None and abs(done - header) < 0.3:
            due = [header, done + body]  # the head's end crossed the deadline: either may win
        what = f"{client.sent[:60]!r}... in pieces every {client.interval:.2f} s from {client.source}"
        closed = client.closed_after
        if closed is None or not any(d - 0.5 <= closed <= d + 3.0 for d in due):
            problems.append(f"{what}: closed at {closed} s (None: not in 15 s), due at "
                            + " or ".join(f"{d:.2f}" for d in due))
        if client.received.startswith(b"HTTP/1.1 5"):
            problems.append(f"{what}: answered {client.received[:40]!r}")
    log = server.log()
    edge_lines = [line for line in log.splitlines() if "a2ui edge:" in line]
    for source in {client.source for client in clients}:
        mine = [line for line in edge_lines if f"from {source}:" in line]
        if len(mine) > 1:
            problems.append(f"{len(mine)} WARNING lines for {source}: {mine}")
    for marker in ("Traceback", "Exception inside application", "Internal Server Error"):
        if marker in log:
            problems.append(f"server log has {marker!r}:\n{log[-3000:]}")
    assert not problems, (f"replay with A2UI_FUZZ_SEED={SEED}\n" + "\n".join(problems[:40]))
