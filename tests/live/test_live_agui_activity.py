"""Tier 2: the AG-UI activity through ``manage.py a2ui_serve`` with PostgreSQL and Redis and two
processes: the agent pushes each kind (agent socket ``agui.event``, and REST) on one process,
an /ws/agui client on the other receives them all, a STATE_DELTA whose old_value differs is
refused with nothing changed, and a resume (on the agent's process) gets the state back."""

import pytest

from tests.agui.test_agui_agent_paths import BAD, EVENTS
from tests.live.client import ahttp, open_agent
from tests.live.test_live_agui import frame, next_event, open_agui
from tests.live.test_live_mcp import issue

pytestmark = pytest.mark.django_db(transaction=True)
AGUI = "stream_agui"


def shown(event):
    event = dict(event)
    if event["type"] == "TEXT_MESSAGE":
        assert event.pop("metadata")["role"] == "agent"
    return event


async def test_activity_across_two_processes_and_resume(two_servers, user, agent, agent_key):
    a, b = two_servers
    bot = await open_agent(a, agent_key)
    person = await open_agui(b, await issue(user, agent, AGUI))
    status = await next_event(person)
    sid = status["session_id"]
    await bot.recv_until(lambda m: m.get("method") == "session.opened"
                         and m["params"]["session_id"] == sid)

    for i, event in enumerate(EVENTS[:-1]):  # the agent socket, process a
        reply = await bot.call("agui.event", {"session_id": sid, "event": event}, i)
        assert reply.get("result", {}).get("delivered") is True, reply
        assert shown(await next_event(person)) == event
    status, body = await ahttp("POST", f"{a.url}/api/v4/sessions/{sid}/agui",
                               {"event": EVENTS[-1]},
                               {"Authorization": f"Bearer {agent_key}"})  # REST, process a
    assert status == 202, body
    assert shown(await next_event(person)) == EVENTS[-1]

    reply = await bot.call("agui.event", {"session_id": sid, "event": BAD}, "bad")
    assert reply["error"]["code"] == -32602
    assert reply["error"]["data"]["path"] == "params.event.old_value"
    status, body = await ahttp("POST", f"{b.url}/api/v4/sessions/{sid}/agui", {"event": BAD},
                               {"Authorization": f"Bearer {agent_key}"})
    assert status == 400 and body["error"]["data"]["path"] == "event.old_value"

    await person.send(frame({"type": "TEXT_MESSAGE", "sender": "me", "content": "thanks"}))
    echo = await next_event(person)
    assert echo["content"] == "thanks" and echo["metadata"]["role"] == "user"
    note = await bot.recv_until(lambda m: m.get("method") == "user.message")
    assert note["params"]["content"] == "thanks"
    await person.close()

    person = await open_agui(a, await issue(user, agent, AGUI), sid)
    status = await next_event(person)
    assert status["status"] == "CONNECTED" and status["session_id"] == sid
    state = [await next_event(person) for _ in range(10)]
    assert [e["type"] for e in state] == [
        "TEXT_MESSAGE", "TEXT_MESSAGE", "TOOL_CALL_REQUEST", "TOOL_CALL_STATUS",
        "TOOL_CALL_RESULT", "STATE_DELTA", "PLAN_CARD", "RESOURCE_TREE", "AGENT_ROSTER",
        "ARTIFACT_OPEN"]
    assert [m["content"] for m in state[:2]] == ["Hello **there**", "thanks"]
    assert state[5] == {"type": "STATE_DELTA", "path": "user", "new_value": {"theme": "light"}}
    assert state[6]["id"] == "p1" and state[7]["root"] == EVENTS[7]["root"]
    assert state[9]["content"] == "fn main() {}\n// more\n"
    await person.close()
    await bot.close()
