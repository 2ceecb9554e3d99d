"""Hostile frames to the four sockets, in-process: /ws/v4/a2ui, /ws/v4/a2ui/agent, /ws/v09/a2ui,
/ws/agui.

See tests/fuzz/harness.py for what each case asserts.
"""

import json
from urllib.parse import quote

import pytest
from channels.testing import WebsocketCommunicator

from a2ui.agui1 import runs as agui_runs
from a2ui.push import entry as pushentry
from a2ui_project.asgi import application
from tests.fuzz import harness, templates
from tests.fuzz.driver import PROBE_TIMEOUT, Driver
from tests.fuzz.grammar import (
    GENERIC_FIXED,
    Frame,
    drawn_frames,
    emit,
    fixed_frames,
    nul_frames,
)
from tests.fuzz.seed import SEED, cases

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("fuzz_settings"),
]

CANCEL_PROBE = {"method": "user.cancel", "params": {"task_id": "probe"}}


async def _rpc_reply(comm, rpc_id):
    while True:
        obj = json.loads(await comm.receive_from(timeout=PROBE_TIMEOUT))
        if obj.get("id") == rpc_id and "method" not in obj:
            return obj


async def _agent_setup(agent_id, sid, waiting_agent=None, surfaces=True):
    """A session with something to answer: a pending input (awaited by ``waiting_agent``'s
    socket when given, as in issue 10's lost answer), a confirm, a form, a v0.9 surface."""
    if waiting_agent is not None:
        await waiting_agent.send_to(text_data=json.dumps(templates.rpc("ui.request_input", {
            "session_id": sid, "request_id": "req-1", "input_type": "text",
            "prompt": "Colour?"}, "wait-1")))
        await waiting_agent.send_to(text_data=json.dumps(templates.rpc("a2ui.sessions", {},
                                                                       "synced")))
        await _rpc_reply(waiting_agent, "synced")  # handled in order: req-1 is stored
    for method, params in [
        ("ui.request_input", {"request_id": "req-2", "input_type": "text", "prompt": "Size?"}),
        ("ui.confirm", {"request_id": "conf-1", "title": "Go?", "severity": "info"}),
        ("ui.render", {"component_id": "form-1", "component_type": "form",
                       "data": templates.COMPONENTS["form"]}),
    ]:
        _, valid = pushentry.validate(method, {**params, "session_id": sid})
        await pushentry.apush(agent_id, sid, method, valid)
    if surfaces:  # for clients that declared A2UI v0.9
        await pushentry.apush(agent_id, sid, "a2ui.v09", {"messages": templates.surface_batch("s1")})


def _frames(fuzzer, messages, n, label):
    frames = []
    for i, message in enumerate(messages[:2]):
        fixed = fixed_frames(message, label + ":" + str(message.get("method", "v09")))
        frames += fixed if i == 0 else fixed[GENERIC_FIXED:]
    for _ in range(cases(n)):
        message = fuzzer.choice(messages)
        frames.append(fuzzer.frame(message, label + ":" + str(message.get("method", "v09")),
                                   jsonrpc="jsonrpc" in message,
                                   oversized_ok=fuzzer.rng.random() < 0.05))
    return frames


async def test_user_socket(fuzzer, error_log, stream_token, agent, agent_key):
    failures = harness.Failures(SEED)
    sids = []
    waiting = WebsocketCommunicator(application, "/ws/v4/a2ui/agent",
                                    headers=[(b"authorization", f"Bearer {agent_key}".encode())])
    assert (await waiting.connect())[0]

    async def setup(driver):
        await driver.comm.send_to(text_data=json.dumps(templates.init_message()))
        reply = await _rpc_reply(driver.comm, "init")
        sid = reply["result"]["session_id"]
        driver.sessions.append(sid)
        if not sids:
            await _agent_setup(agent.id, sid, waiting)
        sids.append(sid)

    driver = Driver(f"/ws/v4/a2ui?token={stream_token}", probe=CANCEL_PROBE,
                    error_log=error_log, failures=failures, setup=setup)
    await driver.connect()
    frames = [Frame("user:known", emit(m)) for m in templates.known_user_killers()]
    try:
        for frame in frames + _frames(fuzzer, templates.user_messages(), 150, "user"):
            await driver.case(frame)
    finally:
        await driver.close()
        await waiting.disconnect()
    failures.check()


async def test_agent_socket(fuzzer, error_log, stream_token, agent, agent_key):
    failures = harness.Failures(SEED)
    person = WebsocketCommunicator(application, f"/ws/v4/a2ui?token={stream_token}")
    assert (await person.connect())[0]
    await person.send_to(text_data=json.dumps(templates.init_message()))
    sid = (await _rpc_reply(person, "init"))["result"]["session_id"]
    driver = Driver("/ws/v4/a2ui/agent", headers=[(b"authorization", f"Bearer {agent_key}".encode())],
                    probe={"method": "a2ui.sessions", "params": {}}, sessions=[sid],
                    error_log=error_log, failures=failures)
    await driver.connect()
    messages = templates.agent_messages(sid) + templates.user_messages()[:2]
    frames = [Frame("agent:known", emit(m)) for m in templates.known_agent_killers(sid)]
    # Hostile numbers in every numeric field of every message (issue 23); the first two
    # messages get them with their fixed frames.
    frames += [frame for message in messages[2:] if message["method"] != "a2ui.v09"
               for frame in drawn_frames(message, f"agent:{message['method']}")]
    # A surface of its own for each (an accepted one would make the next createSurface a
    # refusal for "already exists", before its numbers are judged).
    frames += [Frame(frame.label, frame.text.replace('"fz"', f'"fz-{i}"'))
               for i, frame in enumerate(drawn_frames(
                   templates.rpc("a2ui.v09", {"session_id": sid, "messages":
                                              templates.surface_batch("fz")}), "agent:a2ui.v09"))]
    try:
        for frame in frames + _frames(fuzzer, messages, 200, "agent"):
            await driver.case(frame)
    finally:
        await driver.close()
        await person.disconnect()
    failures.check()


async def test_agent_socket_agui(fuzzer, error_log, stream_token, agent, agent_key):
    """``agui.event`` and the ends of a run (``agui.run_finish`` / ``agui.run_error``) on the
    agent socket; a run is running when the cases start."""
    failures = harness.Failures(SEED)
    person = WebsocketCommunicator(application, f"/ws/v4/a2ui?token={stream_token}")
    assert (await person.connect())[0]
    await person.send_to(text_data=json.dumps(templates.init_message()))
    sid = (await _rpc_reply(person, "init"))["result"]["session_id"]
    await agui_runs.astart(sid, "run-1", "thread-1", {"thread_id": "thread-1", "run_id": "run-1"})
    driver = Driver("/ws/v4/a2ui/agent", headers=[(b"authorization", f"Bearer {agent_key}".encode())],
                    probe={"method": "a2ui.sessions", "params": {}}, sessions=[sid],
                    error_log=error_log, failures=failures)
    await driver.connect()
    messages = templates.run_messages(sid) + [
        templates.rpc("agui.event", {"session_id": sid, "event": event})
        for event in templates.agui_agent_events()]
    frames = [frame for message in messages
              for frame in nul_frames(message, f"agent:{message['method']}")]
    try:
        for frame in frames + _frames(fuzzer, messages, 120, "agent"):
            await driver.case(frame)
    finally:
        await driver.close()
        await person.disconnect()
    failures.check()


async def test_v09_socket(fuzzer, error_log, stream_token, agent):
    failures = harness.Failures(SEED)

    async def setup(driver):
        await driver.comm.send_to(text_data=json.dumps(templates.v09_handshake()))
        while True:
            obj = json.loads(await driver.comm.receive_from(timeout=PROBE_TIMEOUT))
            if "session" in obj:
                break
        sid = obj["session"]["sessionId"]
        driver.sessions.append(sid)
        await pushentry.apush(agent.id, sid, "a2ui.v09", {"messages": templates.surface_batch("s1")})

    driver = Driver(f"/ws/v09/a2ui?token={stream_token}", protocol="v09",
                    error_log=error_log, failures=failures, setup=setup)
    await driver.connect()
    try:
        for frame in _frames(fuzzer, templates.v09_client_messages(), 150, "v09"):
            await driver.case(frame)
    finally:
        await driver.close()
    failures.check()


async def test_agui_socket(fuzzer, error_log, user, agent):
    """/ws/agui (seed 003): every refused frame answered with the seed's ERROR, the socket
    still answering, nothing stored by a refusal."""
    from channels.db import database_sync_to_async

    from a2ui import tokens

    failures = harness.Failures(SEED)
    token = await database_sync_to_async(lambda: tokens.issue_stream_token(
        user, agent, "stream_agui").token)()

    async def setup(driver):
        while True:
            obj = json.loads(await driver.comm.receive_from(timeout=PROBE_TIMEOUT))
            event = obj.get("event", {})
            if event.get("type") == "CONNECTION_STATUS" and event.get("session_id"):
                break
        sid = event["session_id"]
        if sid not in driver.sessions:
            driver.sessions.append(sid)
            await _agent_setup(agent.id, sid, surfaces=False)

    driver = Driver(f"/ws/agui?token={token}", protocol="agui", error_log=error_log,
                    failures=failures, setup=setup)
    await driver.connect()
    try:
        messages = templates.agui_client_messages()
        frames = []
        for i, message in enumerate(messages[:2]):
            fixed = fixed_frames(message, "agui")
            frames += fixed if i == 0 else fixed[GENERIC_FIXED:]
        for _ in range(cases(150)):
            frames.append(fuzzer.frame(fuzzer.choice(messages), "agui", jsonrpc=False,
                                       oversized_ok=fuzzer.rng.random() < 0.05))
        for frame in frames:
            await driver.case(frame)
    finally:
        await driver.close()
    failures.check()


# First frames and credentials: each case on a fresh socket ---------------------------------------

CLOSE_ALLOWED = {4000, 4005, 4006, 4007, 1008}


async def _fresh_case(path, frame, probe, is_probe_reply, error_log, failures, headers=()):
    """Connect, send ``frame`` then ``probe``; read until the probe's answer or a close."""
    problems = []
    mark = len(error_log.records)
    before = await harness.snapshot()
    comm = WebsocketCommunicator(application, path, headers=list(headers))
    replies, closed = [], None
    try:
        connected, _ = await comm.connect(timeout=PROBE_TIMEOUT)
        assert connected, path
        if frame is not None:
            message = {"type": "websocket.receive"}
            message.update({"bytes": frame.data} if frame.data is not None else
                           {"text": frame.text})
            await comm.send_input(message)
            await comm.send_to(text_data=json.dumps(probe))
        while True:
            out = await comm.receive_output(timeout=PROBE_TIMEOUT)
            if out["type"] == "websocket.close":
                closed = out.get("code")
                harness.check_close(closed, problems, allowed=CLOSE_ALLOWED)
                break
            obj = harness.check_text(out.get("text"), problems)
            if obj is not None and is_probe_reply is not None and is_probe_reply(obj):
                break
            replies.append(obj)
    except TimeoutError:
        problems.append("no answer and no close: the socket is wedged")
    except Exception as exc:  # noqa: BLE001 - the consumer crashed
        problems.append(f"consumer crashed: {type(exc).__name__}: {exc}"[:300])
    finally:
        try:
            await comm.disconnect(timeout=PROBE_TIMEOUT)
        except Exception:  # noqa: BLE001
            pass
    errors = [r for r in replies if isinstance(r, dict) and "error" in r]
    for obj in errors:
        if "jsonrpc" in obj:
            harness.check_rpc_error(obj, problems)
        else:
            harness.check_v09_error(obj, problems)
    if errors or closed is not None:
        changed = harness.diff(before, await harness.snapshot())
        # A refused first frame may leave only the rejected-session row the protocol keeps.
        if [c for c in changed if not c.startswith(("sessions:", "audit:"))]:
            problems.append(f"refused, yet changed stored state: {changed}")
    problems += [f"logged: {line}" for line in error_log.since(mark)]
    failures.add(frame or Frame("connect", path), problems)


async def test_first_frames_and_credentials(fuzzer, error_log, stream_token, user, agent,
                                            agent_key):
    from channels.db import database_sync_to_async

    from a2ui import tokens

    failures = harness.Failures(SEED)
    user_path = f"/ws/v4/a2ui?token={stream_token}"
    init_probe = {**templates.init_message(), "id": "probe"}

    def jsonrpc_probe(obj):
        return obj.get("id") == "probe" and "method" not in obj

    known = templates.init_message()
    known["params"]["client_info"]["build"] = 10**20
    for frame in [Frame("init:known", emit(known))] + _frames(
            fuzzer, [templates.init_message()], 40, "init"):
        await _fresh_case(user_path, frame, init_probe, jsonrpc_probe, error_log, failures)

    def v09_probe(obj):
        return "session" in obj or "already" in str(obj.get("error", {}).get("message"))

    v09_path = f"/ws/v09/a2ui?token={stream_token}"
    # Another type's token opens nothing here, and a stream_agui token nothing elsewhere.
    agui_token = await database_sync_to_async(lambda: tokens.issue_stream_token(
        user, agent, "stream_agui").token)()
    await _fresh_case(f"/ws/agui?token={stream_token}", None, None, None, error_log, failures)
    for path in (f"/ws/v4/a2ui?token={agui_token}", f"/ws/v09/a2ui?token={agui_token}"):
        await _fresh_case(path, None, None, None, error_log, failures)
    await _fresh_case("/ws/v4/a2ui/agent", None, None, None, error_log, failures,
                      headers=[(b"authorization", f"Bearer {agui_token}".encode())])
    for frame in _frames(fuzzer, [templates.v09_handshake()], 30, "v09-hello"):
        await _fresh_case(v09_path, frame, templates.v09_handshake(), v09_probe, error_log,
                          failures)
    # Hostile credentials and session ids: refused with an error frame and a proper close.
    hostile = ["", "x", "\x00", "\ud800", "a" * 5000, stream_token + "x", "%ED%A0%80",
               "00000000-0000-0000-0000-000000000000", "http://[x", "1e400", "-1"]
    for value in hostile:
        q = quote(value, safe="%", errors="surrogatepass")
        await _fresh_case(f"/ws/v4/a2ui?token={q}", None, None, None, error_log, failures)
        await _fresh_case(f"/ws/v09/a2ui?token={q}", None, None, None, error_log, failures)
        await _fresh_case(f"/ws/agui?token={q}", None, None, None, error_log, failures)
        await _fresh_case(f"/ws/v09/a2ui?token={stream_token}&session_id={q}",
                          Frame("v09-resume", json.dumps(templates.v09_handshake())),
                          templates.v09_handshake(), v09_probe, error_log, failures)
        header = ("Bearer " + value).encode("utf-8", "surrogatepass")
        await _fresh_case("/ws/v4/a2ui/agent", None, None, None, error_log, failures,
                          headers=[(b"authorization", header)])
    failures.check()
