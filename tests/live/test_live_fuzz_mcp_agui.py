"""The fuzz tier's live part for /mcp (Streamable HTTP, agent key and stream_mcp token) and
/ws/agui (seed 003), through a real Daphne.

For every hostile body or frame: no HTTP 5xx, every answer strict JSON (JSON-RPC errors with a
code of their protocol, never -32603), the socket never closed, and nothing in the server log
with a traceback. Seeded like tests/fuzz (``A2UI_FUZZ_SEED``).
"""

import json
import zlib

import pytest
from channels.db import database_sync_to_async
from websockets.exceptions import ConnectionClosed

from a2ui import tokens
from tests.fuzz import templates
from tests.fuzz.grammar import Frame, Fuzzer, emit
from tests.fuzz.harness import AGUI_CODES
from tests.fuzz.mcp import check_mcp
from tests.fuzz.seed import SEED, cases
from tests.live.client import Client, init_session, open_agent
from tests.live.mcpclient import INIT_BODY, MCP_HEADERS

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.fuzz]


def _agent_calls(sid):
    return [
        ("render", {"session_id": sid, "component_id": "c1", "component_type": "card",
                    "data": {"title": "Hi", "body": "There"}}),
        ("update", {"session_id": sid, "component_id": "c1", "operation": "merge",
                    "data": {"title": "Bye"}}),
        ("progress", {"session_id": sid, "task_id": "t1", "value": 3, "total": 10}),
        ("navigate", {"session_id": sid, "url": "https://example.com/x"}),
        ("notify", {"session_id": sid, "title": "Note", "level": "info"}),
        ("push_surfaces", {"session_id": sid, "messages": templates.surface_batch("s1")}),
        ("list_sessions", {}),
    ]


def _person_calls(sid):
    return [
        ("action", {"name": "book", "surfaceId": "s1", "sourceComponentId": "b1",
                    "context": {"a": 1}, "_meta": {"session_id": sid}}),
        ("respond", {"session_id": sid, "request_id": "req-x", "value": "blue"}),
        ("approve", {"session_id": sid, "request_id": "req-y", "approved": True}),
        ("cancel", {"session_id": sid, "task_id": "t1"}),
        ("error", {"code": "X", "message": "m", "surfaceId": "s1"}),
    ]


async def _mcp_session(http, url, credential):
    headers = {**MCP_HEADERS, "Authorization": f"Bearer {credential}"}
    response = await http.post(url, headers=headers, content=json.dumps(INIT_BODY))
    assert response.status_code == 200, response.text
    headers["mcp-session-id"] = response.headers["mcp-session-id"]
    headers["mcp-protocol-version"] = INIT_BODY["params"]["protocolVersion"]
    await http.post(url, headers=headers, content=json.dumps(
        {"jsonrpc": "2.0", "method": "notifications/initialized"}))
    return headers


async def _mcp_sweep(http, url, headers, calls, fuzzer, label, problems):
    bodies = []
    for n, (name, arguments) in enumerate(calls):
        valid = {"jsonrpc": "2.0", "id": n + 10, "method": "tools/call",
                 "params": {"name": name, "arguments": arguments}}
        bodies.append(Frame(f"{label}:{name}:valid", emit(valid)))
        for _ in range(cases(6)):
            bodies.append(fuzzer.frame(valid, f"{label}:{name}", jsonrpc=True))
    for uri in ("a2ui://sessions/\ud800/surfaces/s1", "ui://sessions/x/components/\x00",
                "ui://" + "a" * 5000, "http://[x", "a2ui://sessions/" + "9" * 40 + "/client"):
        read = {"jsonrpc": "2.0", "id": 99, "method": "resources/read", "params": {"uri": uri}}
        bodies.append(Frame(f"{label}:read", emit(read)))
        bodies.append(fuzzer.frame(read, f"{label}:read", jsonrpc=True))
    for frame in bodies:
        content = frame.as_bytes()
        if len(content) > 1_000_000:
            continue
        response = await http.post(url, headers=headers, content=content)
        check_mcp(frame.short(), response.status_code, response.text, problems)
    # Still served afterwards.
    response = await http.post(url, headers=headers, content=json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
    assert response.status_code == 200 and "tools" in response.text, response.text[:300]


async def test_hostile_mcp_requests_and_agui_frames_through_daphne(
        daphne_server, user, agent, agent_key, stream_token):
    import httpx2

    server = daphne_server()
    fuzzer = Fuzzer(zlib.crc32(f"{SEED}:live-mcp-agui".encode()))
    problems = []
    person = await Client.open(f"{server.ws_url}/ws/v4/a2ui?token={stream_token}")
    sid = await init_session(person)
    bot = await open_agent(server, agent_key)
    mcp_token = await database_sync_to_async(lambda: tokens.issue_stream_token(
        user, agent, "stream_mcp").token)()
    agui_token = await database_sync_to_async(lambda: tokens.issue_stream_token(
        user, agent, "stream_agui").token)()

    url = f"{server.url}/mcp"
    async with httpx2.AsyncClient(timeout=30) as http:
        headers = await _mcp_session(http, url, agent_key)
        await _mcp_sweep(http, url, headers, _agent_calls(sid), fuzzer, "mcp-agent", problems)
        headers = await _mcp_session(http, url, mcp_token)
        await _mcp_sweep(http, url, headers, _person_calls(sid), fuzzer, "mcp-person",
                         problems)

    # /ws/agui: every refusal an ERROR event, the socket never closed.
    agui = await Client.open(f"{server.ws_url}/ws/agui?token={agui_token}")
    hello = await agui.recv()
    assert hello["event"]["status"] == "CONNECTED", hello
    # With its probes, under the server's default rate limit (60 frames a minute a session).
    frames = [fuzzer.frame(fuzzer.choice(templates.agui_client_messages()), "agui",
                           jsonrpc=False) for _ in range(min(cases(25), 28))]
    for n, frame in enumerate(frames):
        if len(frame.as_bytes()) > 1_000_000:
            continue
        probe = f"9.{n}.0"
        try:
            if frame.text is not None:
                try:
                    frame.text.encode("utf-8")
                    await agui.ws.send(frame.text)
                except UnicodeEncodeError:
                    await agui.ws.send(frame.as_bytes())
            else:
                await agui.ws.send(frame.data)
            await agui.send({"version": probe, "id": "00000000-0000-4000-8000-000000000000",
                             "timestamp": "2026-01-01T00:00:00Z",
                             "event": {"type": "TEXT_MESSAGE", "sender": "u", "content": "x"}})
            await agui.recv_until(lambda m, probe=probe: f"Version {probe} " in str(
                m.get("event", {}).get("message")))
        except ConnectionClosed as exc:
            problems.append(f"{frame.short()} -> /ws/agui closed with "
                            f"{exc.rcvd.code if exc.rcvd else None}")
            break
        for obj in agui.skipped:
            event = obj.get("event", {})
            if event.get("type") == "ERROR" and event.get("code") not in AGUI_CODES:
                problems.append(f"{frame.short()} -> {json.dumps(obj)[:200]}")
    await agui.close()
    await bot.close()
    await person.close()

    log = server.log()
    for marker in ("Traceback", "Exception inside application", "Internal Server Error"):
        if marker in log:
            problems.append(f"server log has {marker!r}:\n{log[-3000:]}")
    assert not problems, (f"replay with A2UI_FUZZ_SEED={SEED}\n" + "\n".join(problems[:40]))
