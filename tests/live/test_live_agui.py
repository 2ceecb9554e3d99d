"""Tier 2: the AG-UI socket (seed 003, /ws/agui) through ``manage.py a2ui_serve`` with
PostgreSQL and Redis and two processes: the agent on one, the person on the other. The agent's
pushes arrive as AG-UI events, the person's USER_ACTION answers the agent's request and a
TEXT_MESSAGE reaches it, a bad frame gets the seed's ERROR and the socket goes on, a resume
gets the state again, and a stream_agui token opens nothing else."""

import uuid
from datetime import UTC, datetime

import pytest

from tests.live.client import Client, open_agent, open_user
from tests.live.test_live_mcp import issue

pytestmark = pytest.mark.django_db(transaction=True)
AGUI = "stream_agui"


def frame(event):
    return {"version": "0.1.0", "id": str(uuid.uuid4()),
            "timestamp": datetime.now(UTC).isoformat(), "event": event}


async def next_event(client):
    obj = await client.recv()
    assert obj["version"] == "0.1.0" and uuid.UUID(obj["id"]).version == 4, obj
    return obj["event"]


async def open_agui(server, token, session_id=None):
    query = f"token={token}" + (f"&session_id={session_id}" if session_id else "")
    return await Client.open(f"{server.ws_url}/ws/agui?{query}")


async def test_agui_person_and_agent_in_two_processes(two_servers, user, agent, agent_key):
    a, b = two_servers
    bot = await open_agent(a, agent_key)
    person = await open_agui(b, await issue(user, agent, AGUI))
    status = await next_event(person)
    assert status["type"] == "CONNECTION_STATUS" and status["status"] == "CONNECTED"
    sid = status["session_id"]
    await bot.recv_until(lambda m: m.get("method") == "session.opened"
                         and m["params"]["session_id"] == sid)

    reply = await bot.call("ui.render", {"session_id": sid, "component_id": "c1",
                                         "component_type": "card", "data": {"title": "Hi"}}, 1)
    assert "result" in reply, reply
    rendered = await next_event(person)
    assert rendered["type"] == "RENDER_REQUEST" and rendered["schema"] == {
        "type": "card", "title": "Hi"}
    await bot.send({"jsonrpc": "2.0", "id": 2, "method": "ui.request_input", "params": {
        "session_id": sid, "request_id": "r1", "prompt": "Name?", "input_type": "text"}})
    asked = await next_event(person)
    assert asked["type"] == "RENDER_REQUEST" and asked["component_id"] == "r1"

    # A bad frame: the seed's error, and the socket goes on.
    await person.send_text('{"version": "0.1.0"')
    error = await next_event(person)
    assert error == {"type": "ERROR", "code": "PARSE_ERROR",
                     "message": "The frame is not valid JSON."}
    await person.send({**frame({"type": "TEXT_MESSAGE", "sender": "a", "content": "x"}),
                       "version": "1.0.0"})
    assert (await next_event(person))["code"] == "INVALID_VERSION"

    # Resume on the agent's process: CONNECTED, then the component and the open request.
    await person.close()
    person = await open_agui(a, await issue(user, agent, AGUI), sid)
    status = await next_event(person)
    assert status["status"] == "CONNECTED" and status["session_id"] == sid
    assert [(await next_event(person))["component_id"] for _ in range(2)] == ["c1", "r1"]

    await person.send(frame({"type": "USER_ACTION", "action_type": "submit",
                             "component_id": "r1", "payload": {"value": "Ada"}}))
    answer = await bot.recv_until(lambda m: m.get("id") == 2)
    assert answer["result"] == "Ada", answer
    await person.send(frame({"type": "TEXT_MESSAGE", "sender": "me", "content": "thanks"}))
    note = await bot.recv_until(lambda m: m.get("method") == "user.message")
    assert note["params"]["content"] == "thanks" and note["params"]["session_id"] == sid
    await person.close()
    await bot.close()


async def test_stream_agui_token_is_isolated(daphne_server, user, agent):
    server = daphne_server()
    a2ui_token = await issue(user, agent)
    person = await open_agui(server, a2ui_token)
    code, _, before = await person.expect_close()
    assert code == 4006
    assert before[0]["event"]["code"] == "CONNECTION_ERROR"
    other = await open_user(server, await issue(user, agent, AGUI))
    code, _, _ = await other.expect_close()
    assert code == 4006
