"""Tier 2: AG-UI 1.0 over HTTP + SSE (POST /api/v4/agui/run) through ``manage.py a2ui_serve``
with PostgreSQL and Redis: the agent's socket on one process, the run's stream on the other.

A run: RUN_STARTED, the agent told ``agui.run_started`` with the new messages, its pushes as
AG-UI 1.0 events, RUN_FINISHED when it says ``agui.run_finish``; ``ui.request_input`` ends
the run with an interrupt and the next run's ``resume`` answers it; a run the agent never
ends ends with RUN_ERROR; bad input is an HTTP 4xx. Every stream ends with one final event
and no optional field is sent as null."""

import json

import pytest

from a2ui.models import AgentRun, AuditEvent
from tests.live.aguihttp import post_run, run_input
from tests.live.client import open_agent
from tests.live.test_live_mcp import issue

pytestmark = pytest.mark.django_db(transaction=True)
AGUI = "stream_agui"
FINAL = ("RUN_FINISHED", "RUN_ERROR")


def no_nulls(value, path="event"):
    """No key of any object in an event is null (optional fields are left out)."""
    if isinstance(value, dict):
        for key, item in value.items():
            assert item is not None, f"{path}.{key} is null"
            no_nulls(item, f"{path}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            no_nulls(item, f"{path}[{i}]")


def check_stream(events):
    assert events[0]["type"] == "RUN_STARTED", events[0]
    assert [e["type"] for e in events].count("RUN_STARTED") == 1
    assert events[-1]["type"] in FINAL, events[-1]
    assert sum(e["type"] in FINAL for e in events) == 1
    for event in events:
        if event["type"] not in ("STATE_SNAPSHOT",):  # a snapshot may hold nulls as values
            no_nulls(event)


async def started(bot, run_id):
    return await bot.recv_until(lambda m: m.get("method") == "agui.run_started"
                                and m["params"]["run_id"] == run_id)


async def test_a_run_with_an_interrupt_and_its_resume(two_servers, user, agent, agent_key):
    a, b = two_servers
    bot = await open_agent(a, agent_key)
    token = await issue(user, agent, AGUI)
    first = run_input(text="What is my name?")
    stream = await post_run(b.url, first, token)
    assert stream.status == 200, getattr(stream, "json", None)
    assert stream.response.headers["content-type"].startswith("text/event-stream")
    head = [await stream.next(), await stream.next()]
    assert head[0] == {"type": "RUN_STARTED", "threadId": first["threadId"],
                       "runId": first["runId"], "protocolVersion": "1.0"}
    assert head[1] == {"type": "STATE_SNAPSHOT", "snapshot": {}}
    notice = (await started(bot, first["runId"]))["params"]
    sid = notice["session_id"]
    assert notice["thread_id"] == first["threadId"]
    assert [m["content"] for m in notice["messages"]] == ["What is my name?"]

    reply = await bot.call("ui.notify", {"session_id": sid, "title": "Thinking", "level": "info",
                                         "run_id": first["runId"]}, 1)
    assert "result" in reply, reply
    await bot.call("ui.progress", {"session_id": sid, "task_id": "look", "value": 1,
                                   "total": 2, "progress_type": "determinate"}, 2)
    await bot.send({"jsonrpc": "2.0", "id": 3, "method": "ui.request_input", "params": {
        "session_id": sid, "request_id": "name", "input_type": "text", "prompt": "Name?"}})
    rest = await stream.rest()
    events = head + rest
    check_stream(events)
    types = [e["type"] for e in events]
    assert types[2:5] == ["TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END"]
    assert events[3]["delta"] == "Thinking"
    assert "STEP_STARTED" in types and types[-2] == "STEP_FINISHED"  # closed before the end
    final = events[-1]
    assert final["type"] == "RUN_FINISHED" and final["outcome"]["type"] == "interrupt"
    (interrupt,) = final["outcome"]["interrupts"]
    assert interrupt["id"] == "name" and interrupt["reason"] == "input_required"
    assert interrupt["message"] == "Name?" and interrupt["responseSchema"] == {"type": "string"}
    await stream.close()
    ended = await bot.recv_until(lambda m: m.get("method") == "agui.run_ended")
    assert ended["params"]["status"] == "interrupted"

    # The next run answers the interrupt: the agent's waiting call returns it.
    second = run_input(thread_id=first["threadId"], text="",
                       resume=[{"interruptId": "name", "status": "resolved", "payload": "Ada"}])
    second["messages"] = []
    stream = await post_run(a.url, second, token)
    assert stream.status == 200, getattr(stream, "json", None)
    assert (await stream.next())["type"] == "RUN_STARTED"
    # The agent hears of the run first, then gets the answer its resume entry carries.
    notice = (await started(bot, second["runId"]))["params"]
    assert notice["session_id"] == sid and notice["resume"][0]["interruptId"] == "name"
    answer = await bot.recv_until(lambda m: m.get("id") == 3)
    assert answer["result"] == "Ada", answer
    await bot.call("ui.notify", {"session_id": sid, "title": "Hello Ada", "level": "info"}, 4)
    done = await bot.call("agui.run_finish", {"session_id": sid, "run_id": second["runId"],
                                              "result": {"name": "Ada"}}, 5)
    assert done["result"]["ended"] is True, done
    events = await stream.rest()
    check_stream([{"type": "RUN_STARTED"}, *events])
    texts = [e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT"]
    assert texts == ["Hello Ada"]
    assert events[-1] == {"type": "RUN_FINISHED", "threadId": first["threadId"],
                          "runId": second["runId"], "result": {"name": "Ada"}}
    await stream.close()
    statuses = await _statuses(sid)
    assert statuses == {first["runId"]: "interrupted", second["runId"]: "finished"}
    assert await _audited(sid) == 2
    again = await bot.call("agui.run_finish", {"session_id": sid, "run_id": second["runId"]}, 6)
    assert again["error"]["code"] == -32602 and "run" in again["error"]["message"].lower()
    await bot.close()


async def _statuses(sid):
    from channels.db import database_sync_to_async

    return await database_sync_to_async(lambda: dict(
        AgentRun.objects.filter(session_id=sid).values_list("run_id", "status")))()


async def _audited(sid):
    from channels.db import database_sync_to_async

    return await database_sync_to_async(
        AuditEvent.objects.filter(session_id=sid, action="agui.run").count)()


async def test_bad_input_is_a_4xx_before_the_stream(daphne_server, user, agent):
    server = daphne_server()
    token = await issue(user, agent, AGUI)
    cases = [
        (b"{", 400), (b"[]", 400), (b'{"threadId": "t"}', 400),
        (json.dumps(run_input(state={"n": 2**70})).encode(), 400),
        (json.dumps(run_input(text="\ud800")).encode(), 400),
        (json.dumps(run_input(**{"threadId": "a\u0000b"})).encode(), 400),
        (json.dumps({**run_input(), "messages": [{"id": "m", "role": "nobody"}]}).encode(), 400),
        (json.dumps(run_input(resume=[{"interruptId": "nope", "status": "resolved",
                                       "payload": 1}])).encode(), 400),
        (b'{"threadId": "t", "runId": "r", "messages": [], "x": "' + b"a" * 1100000 + b'"}',
         413),
    ]
    for raw, status in cases:
        stream = await post_run(server.url, None, token, raw=raw)
        assert stream.status == status, (raw[:80], stream.status)
        assert stream.json["error"]["message"], stream.json
    for bad in (None, await issue(user, agent), "garbage"):
        stream = await post_run(server.url, run_input(), bad)
        assert stream.status == 401, stream.status
    # A runId used before on the thread: 409.
    body = run_input()
    stream = await post_run(server.url, body, token)
    assert stream.status == 200
    clash = await post_run(server.url, body, token)
    assert clash.status == 409 and clash.json["error"]["field"] in ("runId", "threadId")
    await stream.close()


async def test_a_run_the_agent_never_ends_ends_with_run_error(
        short_run_timeout, daphne_server, user, agent, agent_key):
    server = daphne_server()
    bot = await open_agent(server, agent_key)
    body = run_input()
    stream = await post_run(server.url, body, await issue(user, agent, AGUI))
    events = await stream.rest(timeout=30)
    check_stream(events)
    assert events[-1]["type"] == "RUN_ERROR" and events[-1]["code"] == "RUN_TIMEOUT"
    await stream.close()
    ended = await bot.recv_until(lambda m: m.get("method") == "agui.run_ended")
    assert ended["params"]["status"] == "timed_out"
    await bot.close()


@pytest.fixture
def short_run_timeout(monkeypatch):
    monkeypatch.setenv("A2UI_AGUI_RUN_TIMEOUT_SECONDS", "2")
    monkeypatch.setenv("A2UI_AGUI_KEEPALIVE_SECONDS", "1")


async def test_rest_and_mcp_agents_end_runs(two_servers, user, agent, agent_key):
    """An agent with no socket: it finds the run (GET /api/v4/agui/runs, MCP list_runs) and
    ends it (POST .../runs/finish, MCP fail_run) from the other process."""
    import httpx

    from tests.live.mcpclient import mcp_session, result_json

    a, b = two_servers
    token = await issue(user, agent, AGUI)
    body = run_input(text="REST please")
    stream = await post_run(b.url, body, token)
    assert (await stream.next())["type"] == "RUN_STARTED"
    auth = {"Authorization": f"Bearer {agent_key}"}
    async with httpx.AsyncClient(base_url=a.url, headers=auth, timeout=20) as api:
        listed = (await api.get("/api/v4/agui/runs")).json()["runs"]
        (run,) = [r for r in listed if r["run_id"] == body["runId"]]
        assert run["messages"][0]["content"] == "REST please"
        sid = run["session_id"]
        bad = await api.post(f"/api/v4/sessions/{sid}/runs/finish", json={"run_id": "nope"})
        assert bad.status_code == 400 and bad.json()["error"]["data"]["path"] == "run_id"
        done = await api.post(f"/api/v4/sessions/{sid}/runs/finish",
                              json={"run_id": body["runId"], "result": [1]})
        assert done.status_code == 200 and done.json()["ended"] is True, done.text
    events = await stream.rest()
    assert events[-1]["type"] == "RUN_FINISHED" and events[-1]["result"] == [1]
    await stream.close()

    second = run_input(thread_id=body["threadId"], text="MCP please")
    stream = await post_run(b.url, second, token)
    assert (await stream.next())["type"] == "RUN_STARTED"
    async with mcp_session(a, agent_key) as mcp:
        listed = result_json(await mcp.call_tool("list_runs", {"session_id": sid}))["runs"]
        assert [r["run_id"] for r in listed] == [second["runId"]]
        ended = result_json(await mcp.call_tool("fail_run", {
            "session_id": sid, "run_id": second["runId"], "message": "No luck",
            "code": "AGENT_FAILED"}))
        assert ended["ended"] is True
    events = await stream.rest()
    check_stream([{"type": "RUN_STARTED"}, *events])
    assert events[-1] == {"type": "RUN_ERROR", "message": "No luck", "code": "AGENT_FAILED"}
    await stream.close()
