"""Agents push v0.9 surfaces through the agent WebSocket, REST and the Python API."""

import pytest
from channels.db import database_sync_to_async
from rest_framework.test import APIClient

from a2ui import agents
from a2ui import surfaces as surface_service
from a2ui.core.surfaces import SurfaceState
from a2ui.models import A2UISessionLog, Surface
from a2ui.sessions import admission
from tests.surfaces.helpers import (
    booking,
    components,
    create,
    data,
    delete,
    is_v09,
    push,
    text,
    v09_user,
)
from tests.wsutil import connect_agent, recv_until

pytestmark = pytest.mark.django_db(transaction=True)


@database_sync_to_async
def stored(sid):
    return {s.surface_id: s.state for s in Surface.objects.filter(session_id=sid)}


@database_sync_to_async
def surface_seq(sid):
    return A2UISessionLog.objects.get(pk=sid).surface_seq


async def test_agent_socket_push_reaches_v09_user(stream_token, agent_key):
    user, sid = await v09_user(stream_token)
    agent = await connect_agent(agent_key)
    reply = await push(agent, sid, booking())
    # clients: the session's attached clients the batch was sent to, per protocol
    assert reply["result"] == {"delivered": 3, "seq": 3, "clients": {"jsonrpc": 1}, "reached": {"jsonrpc": 1}}
    note = await recv_until(user, is_v09)
    kinds = [next(k for k in m if k != "version") for m in note["params"]["messages"]]
    assert kinds == ["createSurface", "updateComponents", "updateDataModel"]
    assert all(m["version"] == "v0.9" for m in note["params"]["messages"])
    state = (await stored(sid))["s1"]
    assert state["dataModel"] == {"name": "Ada"} and "root" in state["components"]
    assert await surface_seq(sid) == 3

    reply = await push(agent, sid, [data("s1", "/name", "Grace"), data("s1", "/x", 1),
                                    data("s1", "/x", delete=True)], "p2")
    assert reply["result"] == {"delivered": 3, "seq": 6, "clients": {"jsonrpc": 1}, "reached": {"jsonrpc": 1}}
    assert (await stored(sid))["s1"]["dataModel"] == {"name": "Grace"}

    reply = await push(agent, sid, [delete("s1")], "p3")
    assert reply["result"]["seq"] == 7
    assert await stored(sid) == {}
    await user.disconnect()
    await agent.disconnect()


async def test_agent_socket_invalid_batch_changes_nothing(stream_token, agent_key):
    user, sid = await v09_user(stream_token)
    agent = await connect_agent(agent_key)
    # The person is told the agent came online (a2ui.sessions.presence); nothing else after.
    await recv_until(user, lambda m: m.get("method") == "a2ui.agent_status")
    bad = booking()
    bad[1]["updateComponents"]["components"][3]["label"] = 42
    reply = await push(agent, sid, bad)
    err = reply["error"]
    assert err["code"] == -32602
    assert err["data"]["version"] == "v0.9" and err["data"]["index"] == 1
    assert err["data"]["error"] == {
        "code": "VALIDATION_FAILED", "surfaceId": "s1",
        "path": "/updateComponents/components/3/label", "message": err["data"]["error"]["message"]}
    assert await stored(sid) == {} and await surface_seq(sid) == 0
    assert user.output_queue.empty()

    for messages, path in [
        ([data("nope", "/", 1)], "/updateDataModel/surfaceId"),
        ([create("s1"), create("s1")], "/createSurface/surfaceId"),
        ([{"version": "v0.8", "deleteSurface": {"surfaceId": "s1"}}], "/version"),
        (["not an object"], ""),
    ]:
        reply = await push(agent, sid, messages)
        assert reply["error"]["data"]["error"]["path"] == path, reply
    reply = await push(agent, sid, [])
    assert reply["error"]["code"] == -32602
    await send_raw(agent, {"jsonrpc": "2.0", "id": 9, "method": "a2ui.v09", "params": []})
    reply = await recv_until(agent, lambda m: m.get("id") == 9)
    assert reply["error"]["code"] == -32602
    await user.disconnect()
    await agent.disconnect()


async def send_raw(comm, obj):
    from tests.wsutil import send

    await send(comm, obj)


async def test_agent_socket_foreign_session_refused(stream_token, agent_key, db):
    from a2ui import tokens

    other, other_key = await database_sync_to_async(tokens.create_agent)("other-agent")
    user, sid = await v09_user(stream_token)
    agent = await connect_agent(other_key)
    reply = await push(agent, sid, booking())
    assert reply["error"]["code"] == -32000
    assert await stored(sid) == {}
    await user.disconnect()
    await agent.disconnect()


async def test_theme_identity_and_url_policy(stream_token, agent_key, agent):
    def set_icon():
        agent.icon_url = "https://example.com/demo.png"
        agent.save(update_fields=["icon_url"])

    await database_sync_to_async(set_icon)()
    user, sid = await v09_user(stream_token)
    ws = await connect_agent(agent_key)
    forged = create("s1", theme={"agentDisplayName": "Your Bank", "iconUrl":
                                 "https://evil.example/bank.png", "primaryColor": "#112233"})
    assert "result" in await push(ws, sid, [forged, components(
        "s1", text("root", "<script>alert(1)</script>Hi <b>there</b>"))])
    note = await recv_until(user, is_v09)
    theme = note["params"]["messages"][0]["createSurface"]["theme"]
    assert theme == {"agentDisplayName": "Demo Agent", "iconUrl": "https://example.com/demo.png",
                     "primaryColor": "#112233"}
    shown = note["params"]["messages"][1]["updateComponents"]["components"][0]["text"]
    assert "<script" not in shown and "<b>" not in shown and "alert" not in shown
    assert (await stored(sid))["s1"]["theme"]["agentDisplayName"] == "Demo Agent"

    for comp, path in [
        ({"id": "img", "component": "Image", "url": "javascript:alert(1)"}, "url"),
        ({"id": "img", "component": "Image", "url": "data:text/html,x"}, "url"),
        ({"id": "b", "component": "Button", "child": "root", "action": {"functionCall": {
            "call": "openUrl", "args": {"url": "java\tscript:alert(1)"}}}},
         "action/functionCall/args/url"),
    ]:
        reply = await push(ws, sid, [components("s1", comp)], "u")
        assert reply["error"]["data"]["error"]["path"] == (
            "/updateComponents/components/0/" + path), reply
    ok = await push(ws, sid, [components("s1", {"id": "img", "component": "Image",
                                                "url": "/static/a.png"})], "ok")
    assert "result" in ok
    await user.disconnect()
    await ws.disconnect()


async def test_control_characters_cleaned(stream_token, agent_key):
    user, sid = await v09_user(stream_token)
    ws = await connect_agent(agent_key)
    reply = await push(ws, sid, [create("s1"), components("s1", text("root", "a\x00b\x01c")),
                                 data("s1", "/", {"k\x01": "v\x01\u202e"})])
    assert "result" in reply
    state = (await stored(sid))["s1"]
    assert state["components"]["root"]["text"] == "abc"
    assert state["dataModel"] == {"k": "v"}
    # Lone surrogates (anywhere) and NUL in keys are refused at the edge by the JSON value
    # policy (issue 10; they used to be replaced/stripped): -32602 with the path, nothing stored.
    for bad, path in ((components("s1", text("root", "b\ud800c")),
                       "params.messages[0].updateComponents.components[0].text"),
                      (data("s1", "/", {"k\x00": "v"}),
                       "params.messages[0].updateDataModel.value.k\ufffd")):
        reply = await push(ws, sid, [bad], "bad")
        assert reply["error"]["code"] == -32602 and reply["error"]["data"]["path"] == path, reply
    assert (await stored(sid))["s1"] == state
    assert await surface_seq(sid) == 3
    await user.disconnect()
    await ws.disconnect()


# REST -------------------------------------------------------------------------------------------


def _rest(key):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return client


async def test_rest_push_and_422_atomic(stream_token, agent_key):
    user, sid = await v09_user(stream_token)
    url = f"/api/v4/sessions/{sid}/surfaces"

    def post(body, key=agent_key):
        return _rest(key).post(url, body, format="json")

    bad = booking() + [components("s1", {"id": "x", "component": "Nope"})]
    resp = await database_sync_to_async(post)(bad)
    assert resp.status_code == 422
    assert resp.json()["version"] == "v0.9" and resp.json()["index"] == 3
    assert resp.json()["error"]["code"] == "VALIDATION_FAILED"
    assert resp.json()["error"]["path"] == "/updateComponents/components/0/component"
    assert await stored(sid) == {} and await surface_seq(sid) == 0
    assert user.output_queue.empty()

    resp = await database_sync_to_async(post)(booking())
    assert resp.status_code == 202 and resp.json() == {
        "delivered": 3, "seq": 3, "clients": {"jsonrpc": 1}, "reached": {"jsonrpc": 1}}
    note = await recv_until(user, is_v09)
    assert len(note["params"]["messages"]) == 3

    resp = await database_sync_to_async(post)({"not": "a list"})
    assert resp.status_code == 400
    resp = await database_sync_to_async(post)(booking(), stream_token)
    assert resp.status_code in (401, 403)
    resp = await database_sync_to_async(
        lambda: _rest(agent_key).post("/api/v4/sessions/00000000-0000-0000-0000-000000000000/"
                                      "surfaces", booking(), format="json"))()
    assert resp.status_code == 404
    await user.disconnect()


# Python API -------------------------------------------------------------------------------------


async def test_python_api_push_and_actions(stream_token, agent):
    user, sid = await v09_user(stream_token)
    async with agents.surface_events(agent, session_id=sid) as events:
        result = await agents.asurfaces(agent, sid, booking())
        assert result == {"delivered": 3, "seq": 3, "clients": {"jsonrpc": 1}, "reached": {"jsonrpc": 1}}
        await recv_until(user, is_v09)
        with pytest.raises(surface_service.SurfaceValidationError) as info:
            await agents.asurfaces(agent.pk, sid, [data("zz", "/", 1)])
        assert info.value.failure.path == "/updateDataModel/surfaceId"
        assert info.value.body["error"]["code"] == "VALIDATION_FAILED"
        from tests.surfaces.helpers import action, rpc
        from tests.wsutil import send

        await send(user, rpc("a2ui.v09", {"messages": [action()]}, "a1"))
        assert (await recv_until(user, lambda m: m.get("id") == "a1"))["result"] == {
            "delivered": 1}
        event = await events.next(timeout=3)
        assert event["session_id"] == sid
        assert event["messages"][0]["action"]["name"] == "book"
        assert "dataModel" not in event
    await user.disconnect()


def test_python_api_sync_wrapper(transactional_db, user, agent):
    from a2ui import tokens

    token = tokens.verify_stream_token(tokens.issue_stream_token(user, agent).token)
    session = admission.open_session(token, {}, {"v0.9": {}})
    result = agents.surfaces(agent, session.session_id, booking())
    assert result == {"delivered": 3, "seq": 3, "clients": {}, "reached": {}}  # no client attached
    row = Surface.objects.get(session=session)
    state = SurfaceState.from_dict(row.state)
    assert state.is_complete()


async def test_oversized_and_deep_inputs_get_clear_errors(stream_token, agent_key):
    user, sid = await v09_user(stream_token)
    ws = await connect_agent(agent_key)
    reply = await push(ws, sid, [create("x" * 129)])
    assert reply["error"]["data"]["error"]["path"] == "/createSurface/surfaceId"
    deep = {"k": 1}
    for _ in range(150):
        deep = {"k": deep}
    reply = await push(ws, sid, [create("s1"), data("s1", "/", deep)], "d")
    assert reply["error"]["code"] == -32602 and reply["error"]["data"]["index"] == 1
    reply = await push(ws, sid, [create("s1"), data("s1", "/", {"a": [[[[1]]]]})], "ok")
    assert "result" in reply
    reply = await push(ws, sid, [data("s1", "/", 1)] * 501, "big")
    assert reply["error"]["code"] == -32602
    assert await surface_seq(sid) == 2
    await user.disconnect()
    await ws.disconnect()
