"""The AG-UI socket /ws/agui in process: stream_agui tokens only, CONNECTION_STATUS, the
session's events as AG-UI events, resume with the state, USER_ACTION / TEXT_MESSAGE reaching
the agent (consent-gated, audited), and every refused frame answered with the seed's ERROR
while the socket stays usable."""

import asyncio
import json
import uuid

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator

from a2ui import tokens
from a2ui.agui import protocol as p
from a2ui.models import AuditEvent
from a2ui.push import sessions as session_actions
from a2ui_project.asgi import application
from tests.wsutil import connect_agent, connect_user, recv, recv_until, send

pytestmark = pytest.mark.django_db(transaction=True)
AGUI = "stream_agui"


def issue(user, agent, kind=AGUI):
    return tokens.issue_stream_token(user, agent, kind).token


async def open_agui(token, session_id=None):
    query = f"token={token}" + (f"&session_id={session_id}" if session_id else "")
    comm = WebsocketCommunicator(application, f"/ws/agui?{query}")
    connected, _ = await comm.connect()
    assert connected
    return comm


def frame(event):
    return {"version": "0.1.0", "id": str(uuid.uuid4()), "timestamp": p.now(), "event": event}


async def event_of(comm):
    obj = await recv(comm)
    assert set(obj) == {"version", "id", "timestamp", "event"}, obj
    assert obj["version"] == "0.1.0" and uuid.UUID(obj["id"]).version == 4
    assert "null" not in json.dumps(obj)
    return obj["event"]


async def connected(comm):
    status = await event_of(comm)
    assert status["type"] == "CONNECTION_STATUS" and status["status"] == "CONNECTED", status
    return status["session_id"]


async def call(agent, rpc_id, method, **params):
    await send(agent, {"jsonrpc": "2.0", "id": rpc_id, "method": method, "params": params})
    return await recv_until(agent, lambda m: m.get("id") == rpc_id)


async def pair(user, agent_row, agent_key):
    bot = await connect_agent(agent_key)
    person = await open_agui(await _issue(user, agent_row))
    sid = await connected(person)
    opened = await recv_until(bot, lambda m: m.get("method") == "session.opened")
    assert opened["params"]["session_id"] == sid
    assert opened["params"]["capabilities"] == {"agui": {"version": "0.1.0"}}
    return bot, person, sid


async def audited(action, sid):
    """The action's audit event is written after the agent was told: wait for it a little."""
    exists = database_sync_to_async(
        lambda: AuditEvent.objects.filter(action=action, session_id=sid).exists())
    for _ in range(100):
        if await exists():
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"no {action} audit event")


async def _issue(user, agent, kind=AGUI):
    return await database_sync_to_async(issue)(user, agent, kind)


@pytest.mark.parametrize("kind", ["stream_a2ui", "stream_mcp",
                                  None, "garbage"])
async def test_only_a_stream_agui_token_opens_it(user, agent, agent_key, kind):
    fake = {None: "", "garbage": "eyJhbGciOi.xyz"}
    raw = fake[kind] if kind in fake else await _issue(user, agent, kind)
    comm = await open_agui(raw)
    error = await event_of(comm)
    assert error["type"] == "ERROR" and error["code"] == "CONNECTION_ERROR"
    assert (await event_of(comm)) == {"type": "CONNECTION_STATUS", "status": "FAILED",
                                      "message": error["message"]}
    assert (await comm.receive_output(timeout=3))["code"] == 4006
    if kind == "stream_a2ui":
        assert "stream_a2ui token is not valid here" in error["message"]


async def test_a_stream_agui_token_opens_nothing_else(user, agent, agent_key):
    raw = await _issue(user, agent)
    comm = await connect_user(raw)  # the JSON-RPC user socket
    assert (await recv(comm))["error"]["code"] == -32006
    comm = WebsocketCommunicator(application, f"/ws/v09/a2ui?token={raw}")
    await comm.connect()
    assert (await recv(comm))["error"]["code"] == "AUTH_FAILED"


async def test_issued_over_rest_and_refused_by_rest_sse_and_mcp(user, agent, agent_key):
    from django.test import AsyncClient

    client = AsyncClient()
    await database_sync_to_async(client.force_login)(user)
    issued = await client.post("/api/v4/stream-token", {"token_type": AGUI},
                               content_type="application/json")
    assert issued.status_code == 201, issued.content
    raw = issued.json()["token"]
    assert issued.json()["token_type"] == AGUI
    bearer = {"Authorization": f"Bearer {raw}"}
    assert (await AsyncClient().get("/api/v4/requests", headers=bearer)).status_code in (401,
                                                                                        403)
    person = await open_agui(raw)
    sid = await connected(person)
    sse = await AsyncClient().get(f"/api/v4/sessions/{sid}/surfaces/stream?token={raw}")
    assert sse.status_code == 401
    from a2ui.mcp.app import authenticate

    with pytest.raises(tokens.TokenError, match="stream_agui token is not valid here"):
        await database_sync_to_async(authenticate)(raw)  # /mcp's bearer check


async def test_agent_pushes_arrive_as_agui_events(user, agent, agent_key):
    bot, person, sid = await pair(user, agent, agent_key)
    reply = await call(bot, 1, "ui.render", session_id=sid, component_id="c1",
                       component_type="card", data={"title": "Hi"})
    assert "result" in reply, reply
    assert await event_of(person) == {"type": "RENDER_REQUEST", "component_id": "c1",
                                      "schema": {"type": "card", "title": "Hi"},
                                      "props": {"position": "main", "priority": "normal"}}
    await call(bot, 2, "ui.progress", session_id=sid, task_id="t1",
               progress_type="determinate", value=1, total=4, message="quarter")
    assert await event_of(person) == {"type": "TOOL_CALL_STATUS", "id": "t1",
                                      "status": "RUNNING", "progress": 25, "message": "quarter"}
    await call(bot, 3, "ui.notify", session_id=sid, level="info", title="T", message="M")
    note = await event_of(person)
    assert note["type"] == "TEXT_MESSAGE" and note["content"] == "M"
    await call(bot, 4, "ui.navigate", session_id=sid, url="https://example.com/")
    await call(bot, 5, "ui.update", session_id=sid, component_id="c1", operation="merge",
               data={"title": "Bye"})
    # navigate is a TEXT_MESSAGE with the link (issue 24; it was not translated before).
    assert await event_of(person) == {
        "type": "TEXT_MESSAGE", "sender": "agent", "content": "https://example.com/",
        "metadata": {"navigate": {"url": "https://example.com/", "new_tab": False}}}
    assert await event_of(person) == {"type": "STATE_DELTA", "path": "components.c1.merge",
                                      "new_value": {"title": "Bye"}}


async def test_input_request_answered_with_user_action_and_resume_state(user, agent, agent_key):
    bot, person, sid = await pair(user, agent, agent_key)
    await call(bot, 1, "ui.render", session_id=sid, component_id="c1", component_type="card",
               data={"title": "Kept"})
    await event_of(person)
    await send(bot, {"jsonrpc": "2.0", "id": 2, "method": "ui.request_input", "params": {
        "session_id": sid, "request_id": "r1", "prompt": "Name?", "input_type": "text"}})
    asked = await event_of(person)
    assert asked["type"] == "RENDER_REQUEST" and asked["component_id"] == "r1"
    assert asked["schema"]["type"] == "input" and asked["schema"]["prompt"] == "Name?"
    await person.disconnect()

    # Resume: CONNECTED, then the state (component and the open request).
    person = await open_agui(await _issue(user, agent), sid)
    assert await connected(person) == sid
    state = [await event_of(person), await event_of(person)]
    assert [e["component_id"] for e in state] == ["c1", "r1"]
    await send(person, frame({"type": "USER_ACTION", "action_type": "submit",
                              "component_id": "r1", "payload": {"value": "Ada"}}))
    answer = await recv_until(bot, lambda m: m.get("id") == 2)
    assert answer["result"] == "Ada", answer
    assert await event_of(person) == {"type": "STATE_DELTA", "path": "requests.r1.status",
                                      "new_value": "answered"}
    await audited("agui.user_action", sid)


async def test_text_message_and_other_actions_reach_the_agent(user, agent, agent_key):
    bot, person, sid = await pair(user, agent, agent_key)
    await send(person, frame({"type": "TEXT_MESSAGE", "sender": "me", "content": "hello",
                              "metadata": {"author_name": "Ada"}}))
    note = await recv_until(bot, lambda m: m.get("method") == "user.message")
    await audited("agui.text_message", sid)
    assert note["params"] == {"session_id": sid, "user": user.get_username(), "sender": "me",
                              "content": "hello", "metadata": {"author_name": "Ada"}}
    await send(person, frame({"type": "USER_ACTION", "action_type": "click",
                              "component_id": "b1", "payload": {"x": 1}}))
    note = await recv_until(bot, lambda m: m.get("method") == "user.action")
    assert note["params"]["component_id"] == "b1" and note["params"]["payload"] == {"x": 1}
    # component_id is optional in USER_ACTION: an action of the page as a whole
    await send(person, frame({"type": "USER_ACTION", "action_type": "refresh"}))
    note = await recv_until(bot, lambda m: m.get("method") == "user.action")
    assert note["params"] == {"session_id": sid, "action_type": "refresh"}
    await send(person, frame({"type": "USER_ACTION", "action_type": "cancel",
                              "component_id": "t9"}))
    note = await recv_until(bot, lambda m: m.get("method") == "user.cancel")
    assert note["params"] == {"session_id": sid, "task_id": "t9"}


async def test_errors_as_the_seed_and_the_socket_stays_usable(user, agent, agent_key):
    bot, person, sid = await pair(user, agent, agent_key)
    cases = [
        ("{nope", "PARSE_ERROR", None),
        (json.dumps({**frame({"type": "TEXT_MESSAGE", "sender": "a", "content": "b"}),
                     "version": "1.0.0"}), "INVALID_VERSION", "version"),
        (json.dumps({"version": "0.1.0", "id": str(uuid.uuid4()), "event": {}}),
         "MISSING_FIELD", "timestamp"),
        (json.dumps(frame({"sender": "a"})), "MISSING_FIELD", "event.type"),
        (json.dumps(frame({"type": "PLAN_CARD", "id": "x", "title": "t", "content": "c",
                           "status": "ACTIVE"})), "INVALID_EVENT", "event.type"),
        (json.dumps(frame({"type": "WHAT"})), "INVALID_EVENT", "event.type"),
        (json.dumps(frame({"type": "TEXT_MESSAGE", "sender": "a"})), "MISSING_FIELD",
         "event.content"),
        (json.dumps(frame({"type": "TEXT_MESSAGE", "sender": "a", "content": {}})),
         "INVALID_EVENT_DATA", "event.content"),
        (json.dumps(frame({"type": "USER_ACTION", "action_type": "submit"})),
         "INVALID_EVENT_DATA", "event.component_id"),
        (json.dumps(frame({"type": "USER_ACTION", "action_type": "approve",
                           "component_id": "no-such-request"})), "INVALID_EVENT_DATA", None),
        ("x" * (1024 * 1024 + 1), "INVALID_EVENT_DATA", None),
    ]
    for text, code, field in cases:
        await person.send_to(text_data=text)
        error = await event_of(person)
        assert error["type"] == "ERROR" and error["code"] == code, (text[:80], error)
        if field:
            assert error["details"]["field"] == field, error
    await send(person, frame({"type": "TEXT_MESSAGE", "sender": "a", "content": "still here"}))
    note = await recv_until(bot, lambda m: m.get("method") == "user.message")
    assert note["params"]["content"] == "still here"


async def test_operator_close_is_announced(user, agent, agent_key):

    bot, person, sid = await pair(user, agent, agent_key)
    await session_actions.aclose_session(uuid.UUID(sid), reason="Operator ended it", close_code=4010)
    status = await event_of(person)
    assert status == {"type": "CONNECTION_STATUS", "status": "DISCONNECTED",
                      "message": "Operator ended it"}
    assert (await person.receive_output(timeout=3))["code"] == 4010


async def test_consent_gates_actions_until_granted(user, agent, agent_key, settings):
    settings.A2UI = {**settings.A2UI, "REQUIRED_CONSENTS": ["data_collection"]}
    bot = await connect_agent(agent_key)
    person = await open_agui(await _issue(user, agent))
    sid = await connected(person)
    prompt = await event_of(person)
    assert prompt["type"] == "TEXT_MESSAGE" and prompt["sender"] == "system"
    assert [c["type"] for c in prompt["metadata"]["consent_required"]] == ["data_collection"]
    await send(person, frame({"type": "TEXT_MESSAGE", "sender": "me", "content": "hi"}))
    assert (await event_of(person))["type"] == "TEXT_MESSAGE"  # the prompt again
    refused = await event_of(person)
    assert refused["type"] == "ERROR" and refused["code"] == "INVALID_EVENT"
    assert refused["details"]["reason"] == "consent_required"
    await send(person, frame({"type": "USER_ACTION", "action_type": "consent",
                              "payload": {"consent_type": "data_collection", "granted": True}}))
    await send(person, frame({"type": "TEXT_MESSAGE", "sender": "me", "content": "now"}))
    note = await recv_until(bot, lambda m: m.get("method") == "user.message")
    assert note["params"]["content"] == "now" and note["params"]["session_id"] == sid


async def test_rate_limit_counts_every_frame(user, agent, agent_key, settings):
    settings.A2UI = {**settings.A2UI, "RATE_LIMIT_PER_MINUTE": 3}
    bot, person, sid = await pair(user, agent, agent_key)
    codes = []
    for _ in range(4):
        await person.send_to(text_data="{bad")
        codes.append((await event_of(person))["code"])
    assert codes == ["PARSE_ERROR"] * 3 + ["CONNECTION_ERROR"]


async def test_resuming_an_unknown_session_is_refused(user, agent):
    person = await open_agui(await _issue(user, agent), uuid.uuid4())
    error = await event_of(person)
    assert error["type"] == "ERROR" and error["code"] == "CONNECTION_ERROR"
    assert error["details"]["reason"] == "session_not_found"
    assert (await event_of(person))["status"] == "FAILED"
    assert (await person.receive_output(timeout=3))["code"] == 4000  # -32000 SESSION_NOT_FOUND
