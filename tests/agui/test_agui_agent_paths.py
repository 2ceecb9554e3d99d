"""AG-UI-native events through every agent path, in process: the agent socket's
``agui.event``, REST ``POST /api/v4/sessions/<id>/agui``, the Python API
(``agents.aagui_event``) and the MCP tool ``agui_event``; each path's own error for bad input,
before any state change (a2ui.agui.inbound for the translation)."""

import types

import pytest
from channels.db import database_sync_to_async
from mcp.shared.exceptions import MCPError
from rest_framework.test import APIClient

from a2ui import agents, tokens
from a2ui.agui import inbound
from a2ui.core.errors import DomainError
from a2ui.core.events import Kind
from a2ui.mcp import agent as mcp_agent
from a2ui.rpc.errors import ProtocolError
from a2ui.sessions import lifecycle as sessions
from tests.activityops import AGUI_EVENTS as EVENTS
from tests.activityops import TREE
from tests.wsutil import connect_agent, recv_until, send

pytestmark = pytest.mark.django_db(transaction=True)

BAD = {"type": "STATE_DELTA", "path": "user.theme", "old_value": "blue", "new_value": "x"}




def expect_all(activity):
    assert [m["content"] for m in activity["transcript"]] == ["Hello **there**"]
    assert activity["transcript"][0]["role"] == "agent"
    call = activity["tool_calls"][0]
    assert call["status"] == "COMPLETED" and call["progress"] == 75 and call["tool_name"] == "grep"
    assert activity["state"] == {"user": {"theme": "light"}}
    assert activity["plans"][0]["plan_id"] == "p1" and activity["resources"] == TREE
    assert activity["roster"][0]["status"] == "BUSY"
    assert activity["artifacts"][0]["content"] == "fn main() {}\n// more\n"


async def snapshot_activity(session):
    return (await sessions.asnapshot(session.session_id)).activity


def test_to_core_names_the_agents_fields():
    assert inbound.to_core(EVENTS[4]) == (Kind.STATE_DELTA, {
        "path": "user.theme", "removed": False, "new_value": "dark"})
    assert inbound.to_core({"type": "STATE_DELTA", "path": "a"})[1]["removed"] is True
    for event, path in [
        ({"type": "RENDER_REQUEST", "component_id": "c", "schema": {}}, "event.type"),
        ({"type": "USER_ACTION", "action_type": "x"}, "event.type"),
        ({"type": "PLAN_CARD", "id": "p", "title": "t", "content": "c"}, "event.status"),
        ({"type": "TEXT_MESSAGE", "sender": "s", "content": "c", "role": "user"}, "event.role"),
        ("nope", "event"),
    ]:
        with pytest.raises(DomainError) as info:
            inbound.to_core(event)
        assert info.value.data["path"] == path
    assert inbound.seed_path("artifact_id") == "event.id"
    assert inbound.seed_path("root.children[0].name", "params.event") == \
        "params.event.root.children[0].name"
    assert inbound.seed_path("agents[1].status") == "event.agents[1].status"


async def test_python_api(session):
    for event in EVENTS:
        await agents.aagui_event(session.agent_id, session.session_id, event)
    before = await snapshot_activity(session)
    expect_all(before)
    with pytest.raises(DomainError) as info:
        await agents.aagui_event(session.agent_id, session.session_id, BAD)
    assert ProtocolError.of(info.value).code == -32602 and info.value.data["path"] == "event.old_value"
    with pytest.raises(DomainError) as info:
        await agents.aagui_event(session.agent_id, session.session_id, {
            "type": "ARTIFACT_UPDATE", "id": "zz", "content": "x", "change_type": "partial"})
    assert info.value.data["path"] == "event.id"
    assert await snapshot_activity(session) == before


async def test_agent_socket(session, agent_key):
    bot = await connect_agent(agent_key)
    try:
        for i, event in enumerate(EVENTS):
            await send(bot, {"jsonrpc": "2.0", "id": i, "method": "agui.event",
                             "params": {"session_id": str(session.session_id), "event": event}})
            reply = await recv_until(bot, lambda m, i=i: m.get("id") == i)
            assert reply["result"]["delivered"] is True, reply
        before = await snapshot_activity(session)
        expect_all(before)
        for rpc_id, params, path in [
            ("b1", {"session_id": str(session.session_id), "event": BAD}, "params.event.old_value"),
            ("b2", {"event": EVENTS[0]}, "params.session_id"),
            ("b3", {"session_id": str(session.session_id), "event": {
                "type": "TOOL_CALL_STATUS", "id": "t", "status": "RUNNING",
                "progress": 2**70}}, "params.event.progress"),
            ("b4", {"session_id": str(session.session_id)}, "params.event"),
        ]:
            await send(bot, {"jsonrpc": "2.0", "id": rpc_id, "method": "agui.event",
                             "params": params})
            reply = await recv_until(bot, lambda m, r=rpc_id: m.get("id") == r)
            assert reply["error"]["code"] == -32602 and reply["error"]["data"]["path"] == path
        assert await snapshot_activity(session) == before
    finally:
        await bot.disconnect()


async def test_rest(session, agent_key):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {agent_key}")
    url = f"/api/v4/sessions/{session.session_id}/agui"

    def post(body):
        return client.post(url, body, format="json")

    for event in EVENTS:
        response = await database_sync_to_async(post)({"event": event})
        assert response.status_code == 202, response.content
    before = await snapshot_activity(session)
    expect_all(before)
    response = await database_sync_to_async(post)({"event": BAD})
    assert response.status_code == 400
    assert response.json()["error"]["data"]["path"] == "event.old_value"
    for body in ({}, {"event": "x"}, [EVENTS[0]]):
        assert (await database_sync_to_async(post)(body)).status_code == 400
    assert await snapshot_activity(session) == before


async def test_mcp_tool(session, agent):
    who = types.SimpleNamespace(agent=agent)
    for event in EVENTS:
        result = await mcp_agent.call(None, who, "agui_event",
                                      {"session_id": str(session.session_id), "event": event})
        assert result.structured_content["delivered"] is True
    before = await snapshot_activity(session)
    expect_all(before)
    with pytest.raises((ProtocolError, MCPError)) as info:
        await mcp_agent.call(None, who, "agui_event",
                             {"session_id": str(session.session_id), "event": BAD})
    data = getattr(info.value, "data", None) or info.value.error.data
    assert data["path"] == "arguments.event.old_value"
    assert await snapshot_activity(session) == before


async def test_an_agui_client_gets_each_kind_live_and_the_state_on_resume(user, agent, agent_key):
    from tests.agui.test_agui_socket import _issue, call, connected, event_of, frame, open_agui

    bot = await connect_agent(agent_key)
    person = await open_agui(await _issue(user, agent))
    sid = await connected(person)
    try:
        for i, event in enumerate(EVENTS):
            reply = await call(bot, i, "agui.event", session_id=sid, event=event)
            assert "result" in reply, reply
            got = await event_of(person)
            if got["type"] == "TEXT_MESSAGE":
                assert got.pop("metadata")["role"] == "agent"
            assert got == event
        await send(person, frame({"type": "TEXT_MESSAGE", "sender": "me", "content": "hi"}))
        echo = await event_of(person)  # the person's message is in the transcript too
        assert echo["content"] == "hi" and echo["metadata"]["role"] == "user"
        await recv_until(bot, lambda m: m.get("method") == "user.message")
        await person.disconnect()

        person = await open_agui(await _issue(user, agent), sid)
        assert await connected(person) == sid
        state = [await event_of(person) for _ in range(10)]
        assert [e["type"] for e in state] == [
            "TEXT_MESSAGE", "TEXT_MESSAGE", "TOOL_CALL_REQUEST", "TOOL_CALL_STATUS",
            "TOOL_CALL_RESULT", "STATE_DELTA", "PLAN_CARD", "RESOURCE_TREE", "AGENT_ROSTER",
            "ARTIFACT_OPEN"]
        assert state[5] == {"type": "STATE_DELTA", "path": "user",
                            "new_value": {"theme": "light"}}
        assert state[9]["content"] == "fn main() {}\n// more\n"
        assert [m["content"] for m in state[:2]] == ["Hello **there**", "hi"]
    finally:
        await bot.disconnect()
        await person.disconnect()


async def test_a_jsonrpc_client_gets_ui_activity_live_and_on_resume(user, agent, agent_key):
    from tests.wsutil import connect_user, init_session

    raw = await database_sync_to_async(tokens.issue_stream_token)(user, agent)
    person = await connect_user(raw.token)
    sid = await init_session(person)
    bot = await connect_agent(agent_key)
    try:
        for i, event in enumerate(EVENTS):
            await send(bot, {"jsonrpc": "2.0", "id": i, "method": "agui.event",
                             "params": {"session_id": sid, "event": event}})
            await recv_until(bot, lambda m, i=i: m.get("id") == i)
            note = await recv_until(person, lambda m: m.get("method") == "ui.activity")
            kind, _ = inbound.to_core(event)
            assert note["params"]["kind"] == kind
        await person.disconnect()
        raw = await database_sync_to_async(tokens.issue_stream_token)(user, agent)
        person = await connect_user(raw.token)
        assert await init_session(person, session_id=sid) == sid
        snap = await recv_until(person, lambda m: m.get("method") == "ui.activity")
        assert snap["params"]["kind"] == "snapshot"
        expect_all(snap["params"]["data"])
    finally:
        await bot.disconnect()
        await person.disconnect()
