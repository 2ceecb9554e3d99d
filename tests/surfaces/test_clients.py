"""People's side: /ws/v09, the JSON-RPC socket carrying v0.9, snapshots, resync, actions."""

import json

import pytest
from channels.db import database_sync_to_async

from a2ui import surfaces as surface_service
from a2ui.core.surfaces import BASIC_CATALOG_ID, validate_batch
from a2ui.infra import groups
from a2ui.push import sessions as session_actions
from tests.surfaces.helpers import (
    V09_CAPS,
    action,
    booking,
    components,
    create,
    data,
    delete,
    frames,
    is_v09,
    push,
    rpc,
    text,
    v09_socket,
    v09_user,
)
from tests.wsutil import connect_agent, connect_user, init_session, recv, recv_until, send

pytestmark = pytest.mark.django_db(transaction=True)


def strict_ok(messages):
    """The official validator's strict checks (no orphans, all references resolve)."""
    return validate_batch({}, messages, surface_service.catalog_registry(), strict=True)


# /ws/v09 ----------------------------------------------------------------------------------------


async def test_v09_socket_new_session_live_and_actions(stream_token, agent_key):
    agent = await connect_agent(agent_key)
    comm, sid = await v09_socket(stream_token)
    opened = await recv(agent)
    assert opened["method"] == "session.opened" and opened["params"]["session_id"] == sid
    assert (await push(agent, sid, booking()))["result"]["seq"] == 3
    got = await frames(comm, 3)
    assert [next(k for k in m if k != "version") for m in got] == [
        "createSurface", "updateComponents", "updateDataModel"]
    assert all(m["version"] == "v0.9" for m in got)

    await comm.send_to(text_data=json.dumps(action()))
    note = await recv_until(agent, is_v09)
    assert note["params"]["session_id"] == sid
    assert note["params"]["messages"] == [action()]

    # the draft's userAction (no version) is accepted and normalized
    draft = {"userAction": action()["action"]}
    await comm.send_to(text_data=json.dumps(draft))
    note = await recv_until(agent, is_v09)
    assert note["params"]["messages"] == [action()]

    # client error messages go to the agent too
    err = {"version": "v0.9", "error": {"code": "VALIDATION_FAILED", "surfaceId": "s1",
                                        "path": "/components/0", "message": "bad"}}
    await comm.send_to(text_data=json.dumps(err))
    note = await recv_until(agent, is_v09)
    assert note["params"]["messages"] == [err]
    await comm.disconnect()
    await agent.disconnect()


async def test_v09_socket_bad_client_messages_get_errors(stream_token, agent_key):
    agent = await connect_agent(agent_key)
    comm, sid = await v09_socket(stream_token)
    await recv(agent)
    await push(agent, sid, booking())
    await frames(comm, 3)
    cases = [
        ("{not json", None),
        (json.dumps({"version": "v0.9", "action": {"name": "x"}}), "/action"),
        (json.dumps({"version": "v0.9", "action": {**action()["action"],
                                                   "timestamp": "yesterday"}}),
         "/action/timestamp"),
        (json.dumps(action(sid="nope")), "/action/surfaceId"),
        (json.dumps(action(source="ghost")), "/action/sourceComponentId"),
        (json.dumps({"version": "v0.9", "error": {"code": "VALIDATION_FAILED",
                                                  "surfaceId": "s1"}}), "/error"),
        (json.dumps([1, 2]), ""),
        (json.dumps({"version": "v0.9", "capabilities": V09_CAPS}), None),
    ]
    for raw, path in cases:
        await comm.send_to(text_data=raw)
        reply = await recv(comm)
        assert reply["version"] == "v0.9" and "error" in reply, reply
        if path is not None:
            assert reply["error"]["code"] == "VALIDATION_FAILED"
            assert reply["error"]["path"] == path, (raw, reply)
    assert all(m.get("method") != "a2ui.v09" for m in await drain(agent))
    await comm.disconnect()
    await agent.disconnect()


async def drain(comm):
    out = []
    while not comm.output_queue.empty():
        out.append(await recv(comm))
    return out


async def test_v09_socket_auth_and_handshake(stream_token, agent_key):
    from tests.surfaces.helpers import application  # noqa: F401 - same app

    comm, _ = await v09_socket("not-a-token", handshake=False)
    reply = await recv(comm)
    assert reply["version"] == "v0.9" and reply["error"]["code"] == "AUTH_FAILED"
    out = await comm.receive_output()
    assert out["type"] == "websocket.close" and out["code"] == 4006

    comm, _ = await v09_socket(agent_key, handshake=False)  # an agent key is not a stream token
    assert (await recv(comm))["error"]["code"] == "AUTH_FAILED"

    comm, _ = await v09_socket(stream_token, handshake=False)
    await comm.send_to(text_data=json.dumps({"version": "v0.9", "capabilities": {"v0.9": {}}}))
    reply = await recv(comm)
    assert reply["error"]["path"] == "/capabilities/v0.9/supportedCatalogIds"
    await comm.send_to(text_data=json.dumps(action()))  # actions before capabilities
    assert (await recv(comm))["error"]["code"] == "VALIDATION_FAILED"
    await comm.send_to(text_data=json.dumps({"version": "v0.9", "a2uiClientCapabilities":
                                             V09_CAPS}))
    assert "session" in await recv(comm)
    await comm.disconnect()

    comm, _ = await v09_socket(stream_token, session_id="00000000-0000-0000-0000-000000000000",
                               handshake=False)
    await comm.send_to(text_data=json.dumps({"version": "v0.9", "capabilities": V09_CAPS}))
    assert (await recv(comm))["error"]["code"] == "SESSION_NOT_FOUND"
    out = await comm.receive_output()
    assert out["type"] == "websocket.close" and out["code"] == 4000


@pytest.mark.parametrize("catalog_id", ["a\x00b", "\x00", "line\nbreak", "", "x" * 501, 7])
async def test_catalog_ids_are_one_line_names(stream_token, catalog_id):
    """Capabilities are stored with the session: a NUL (PostgreSQL's jsonb refuses it) or any
    control character is the protocol's VALIDATION_FAILED naming the id, before any row."""
    from a2ui.models import A2UISessionLog

    before = await database_sync_to_async(A2UISessionLog.objects.count)()
    comm, _ = await v09_socket(stream_token, handshake=False)
    await comm.send_to(text_data=json.dumps({"version": "v0.9", "capabilities": {"v0.9": {
        "supportedCatalogIds": [BASIC_CATALOG_ID, catalog_id]}}}))
    reply = await recv(comm)
    assert reply["error"]["code"] == "VALIDATION_FAILED", reply
    assert reply["error"]["path"] == "/capabilities/v0.9/supportedCatalogIds/1"
    assert "catalog id" in reply["error"]["message"]
    assert await database_sync_to_async(A2UISessionLog.objects.count)() == before
    await comm.send_to(text_data=json.dumps({"version": "v0.9", "capabilities": V09_CAPS}))
    assert "session" in await recv(comm)  # the socket is still usable
    await comm.disconnect()


async def test_a_valid_surface_is_stored_whatever_the_clients_declared(stream_token, agent_key):
    """Issue 24: a surface valid against the server's catalogs is stored whatever the session's
    clients declared (it used to be refused with 422 "did not declare" / "does not support");
    each client is sent only what it declared, and one that joins later gets it."""
    agent = await connect_agent(agent_key)
    comm, sid = await v09_socket(stream_token, capabilities={"v0.9": {
        "supportedCatalogIds": ["https://example.com/other.json"]}})
    reply = await push(agent, sid, booking())
    assert reply["result"] == {"delivered": 3, "seq": 3, "clients": {"v09": 1}, "reached": {"v09": 1}}, reply
    # A catalog the server does not know stays an error.
    reply = await push(agent, sid, [create("s9", "https://example.com/other.json")], "p0")
    err = reply["error"]["data"]["error"]
    assert err["code"] == "VALIDATION_FAILED" and err["path"] == "/createSurface/catalogId"
    assert "Unknown catalog" in err["message"]

    # a JSON-RPC client that did not declare v0.9 opens a session: a surface is stored too
    plain = await connect_user(stream_token)
    sid2 = await init_session(plain)
    reply = await push(agent, sid2, booking(), "p2")
    assert reply["result"]["delivered"] == 3, reply
    # neither client is sent a surface it cannot show; a v0.9 client joining gets both
    await send(plain, rpc("user.cancel", {"reason": "x"}, "c1"))
    assert not any(is_v09(m) for m in await _until_id(plain, "c1"))
    assert comm.output_queue.empty()
    later, same = await v09_socket(stream_token, session_id=sid2)
    assert same == sid2
    snap = await frames(later, 3)
    assert snap[0]["createSurface"]["surfaceId"] == "s1"
    await later.disconnect()
    await comm.disconnect()
    await plain.disconnect()
    await agent.disconnect()


async def _until_id(comm, rpc_id):
    seen = []
    while True:
        msg = await recv(comm)
        seen.append(msg)
        if msg.get("id") == rpc_id:
            return seen


async def test_v09_socket_resume_gets_strict_snapshot(stream_token, agent_key):
    agent = await connect_agent(agent_key)
    comm, sid = await v09_socket(stream_token)
    # incremental: a placeholder reference, an orphan, then the placeholder filled and replaced
    await push(agent, sid, [
        create("s1"),
        components("s1", {"id": "root", "component": "Column", "children": ["a", "later"]},
                   text("a", "A"), text("orphan", "never linked")),
        components("s1", text("later", "placeholder")),
        components("s1", {"id": "later", "component": "Row", "children": ["b"]},
                   text("b", "B")),
        components("s1", {"id": "root", "component": "Column", "children": ["later"]}),
        data("s1", "/", {"x": 1}),
        create("gone"), delete("gone"),
    ])
    await comm.disconnect()

    comm, same = await v09_socket(stream_token, session_id=sid)
    assert same == sid
    snapshot = await frames(comm, 3)
    assert comm.output_queue.empty()
    changes = strict_ok(snapshot)
    ids = [c["id"] for c in snapshot[1]["updateComponents"]["components"]]
    assert ids[0] == "root" and set(ids) == {"root", "later", "b"}
    assert changes.states["s1"].data_model == {"x": 1}
    assert snapshot[0]["createSurface"]["theme"]["agentDisplayName"] == "Demo Agent"
    await comm.disconnect()
    await agent.disconnect()


async def test_orphan_linked_later_reaches_snapshot_client(stream_token, agent_key):
    agent = await connect_agent(agent_key)
    comm, sid = await v09_socket(stream_token)
    await push(agent, sid, [create("s1"), components("s1", text("root", "R"), text("x", "X"))])
    await frames(comm, 2)
    late, _ = await v09_socket(stream_token, session_id=sid)
    snap = await frames(late, 3)
    assert [c["id"] for c in snap[1]["updateComponents"]["components"]] == ["root"]
    # link the orphan by reference only: the update carries it for clients that lack it
    await push(agent, sid, [components("s1", {"id": "root", "component": "Column",
                                              "children": ["x"]})], "p2")
    for c in (comm, late):
        (msg,) = await frames(c, 1)
        assert [x["id"] for x in msg["updateComponents"]["components"]] == ["root", "x"]
    await comm.disconnect()
    await late.disconnect()
    await agent.disconnect()


# The JSON-RPC socket carrying both protocols ------------------------------------------------------


async def test_jsonrpc_socket_carries_both(stream_token, agent_key):
    agent = await connect_agent(agent_key)
    user, sid = await v09_user(stream_token)
    await recv(agent)
    await send(agent, rpc("ui.render", {"session_id": sid, "component_id": "c1",
                                        "component_type": "card", "data": {"title": "Hi"}}))
    assert (await recv(user))["method"] == "ui.render"
    await push(agent, sid, booking(sendDataModel=True))
    note = await recv(user)
    assert is_v09(note) and len(note["params"]["messages"]) == 3
    assert note["params"]["messages"][0]["createSurface"]["sendDataModel"] is True

    # an action with sendDataModel: the server's model, or the client's copy when sent
    await send(user, rpc("a2ui.v09", {"messages": [action()]}, "a1"))
    assert (await recv_until(user, lambda m: m.get("id") == "a1"))["result"] == {"delivered": 1}
    got = await recv_until(agent, is_v09)
    assert got["params"]["dataModel"] == {"version": "v0.9", "surfaces": {"s1": {"name": "Ada"}}}
    client_model = {"version": "v0.9", "surfaces": {"s1": {"name": "Typed"}}}
    await send(user, rpc("a2ui.v09", {"messages": [action()], "dataModel": client_model}, "a2"))
    got = await recv_until(agent, is_v09)
    assert got["params"]["dataModel"] == client_model
    await send(user, rpc("a2ui.v09", {"messages": [action()], "dataModel": {"surfaces": 1}},
                         "a3"))
    bad = await recv_until(user, lambda m: m.get("id") == "a3")
    assert bad["error"]["code"] == -32602
    assert bad["error"]["data"]["error"]["path"] == "/dataModel"
    await send(user, rpc("a2ui.v09", {"messages": [{"version": "v0.9", "action": {}}]}, "a4"))
    bad = await recv_until(user, lambda m: m.get("id") == "a4")
    assert bad["error"]["data"]["error"]["code"] == "VALIDATION_FAILED"
    await send(user, rpc("a2ui.v09", {"messages": "nope"}, "a5"))
    assert (await recv_until(user, lambda m: m.get("id") == "a5"))["error"]["code"] == -32602
    await user.disconnect()
    await agent.disconnect()


async def test_action_without_send_data_model_has_no_model(stream_token, agent_key):
    agent = await connect_agent(agent_key)
    user, sid = await v09_user(stream_token)
    await push(agent, sid, booking())
    await send(user, rpc("a2ui.v09", {"messages": [action()]}, "a1"))
    got = await recv_until(agent, is_v09)
    assert "dataModel" not in got["params"]
    assert got["params"]["messages"][0]["action"]["context"] == {"name": "Ada"}
    await user.disconnect()
    await agent.disconnect()


async def test_jsonrpc_resume_and_gap_resync(stream_token, agent_key):
    agent = await connect_agent(agent_key)
    user, sid = await v09_user(stream_token)
    await push(agent, sid, booking())
    await recv_until(user, is_v09)
    await user.disconnect()
    await push(agent, sid, [components("s1", text("title", "Updated"))], "p2")

    user = await connect_user(stream_token)
    await init_session(user, session_id=sid, capabilities=V09_CAPS)
    note = await recv_until(user, is_v09)
    snap = note["params"]["messages"]
    strict_ok(snap)
    comps = {c["id"]: c for c in snap[1]["updateComponents"]["components"]}
    assert comps["title"]["text"] == "Updated"

    # a lost channel-layer message: the next event shows a gap and the socket resyncs
    seq = (await push(agent, sid, [data("s1", "/name", "Lin")], "p3"))["result"]["seq"]
    await recv_until(user, is_v09)
    await push(agent, sid, [create("s2"), components("s2", text("root", "two"))], "p4")
    await recv_until(user, is_v09)
    from channels.layers import get_channel_layer

    await get_channel_layer().group_send(groups.session_group(sid), surface_service.surfaces_event(
        seq + 10, [data("s1", "/name", "ghost")]))
    note = await recv_until(user, is_v09)
    msgs = note["params"]["messages"]
    assert msgs[0] == {"version": "v0.9", "deleteSurface": {"surfaceId": "s1"}}
    assert msgs[1] == {"version": "v0.9", "deleteSurface": {"surfaceId": "s2"}}
    strict_ok(msgs[2:])
    assert {m["createSurface"]["surfaceId"] for m in msgs if "createSurface" in m} == {"s1", "s2"}
    # a stale (already covered) event is dropped
    await get_channel_layer().group_send(groups.session_group(sid), surface_service.surfaces_event(
        1, [data("s1", "/name", "old")]))
    await send(user, rpc("a2ui.v09", {"messages": [action()]}, "z"))
    assert (await recv(user))["id"] == "z"
    await user.disconnect()
    await agent.disconnect()


async def test_custom_catalog(stream_token, agent_key, settings, tmp_path):
    custom = {
        "catalogId": "https://example.com/catalogs/mine.json",
        "components": {
            "Badge": {"type": "object", "allOf": [
                {"$ref": "https://a2ui.org/specification/v0_9/common_types.json#/$defs/"
                         "ComponentCommon"},
                {"properties": {"component": {"const": "Badge"},
                                "label": {"$ref": "https://a2ui.org/specification/v0_9/"
                                                  "common_types.json#/$defs/DynamicString"}},
                 "required": ["component", "label"]}],
                "unevaluatedProperties": False},
        },
        "functions": {},
        "$defs": {"theme": {"type": "object"}},
    }
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(custom))
    settings.A2UI = {**settings.A2UI, "CATALOGS": [str(path)]}
    cid = custom["catalogId"]
    agent = await connect_agent(agent_key)
    comm, sid = await v09_socket(stream_token, capabilities={"v0.9": {
        "supportedCatalogIds": [BASIC_CATALOG_ID, cid]}})
    reply = await push(agent, sid, [create("c", cid), components("c", {
        "id": "root", "component": "Badge", "label": "7 new"})])
    assert reply["result"]["delivered"] == 2
    got = await frames(comm, 2)
    assert got[0]["createSurface"]["catalogId"] == cid
    reply = await push(agent, sid, [components("c", text("t", "no Text here"))], "p2")
    assert reply["error"]["data"]["error"]["path"] == "/updateComponents/components/0/component"
    await comm.disconnect()
    await agent.disconnect()


def test_catalog_setting_check(settings, tmp_path):
    from a2ui.checks import check_a2ui_settings

    settings.A2UI = {**settings.A2UI, "CATALOGS": [str(tmp_path / "missing.json")]}
    assert [e.id for e in check_a2ui_settings(None)] == ["a2ui.E005"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"catalogId": "x"}))
    settings.A2UI = {**settings.A2UI, "CATALOGS": [str(bad), "no.such.module.CATALOG"]}
    assert [e.id for e in check_a2ui_settings(None)] == ["a2ui.E005"]
    settings.A2UI = {**settings.A2UI, "CATALOGS": ["tests.surfaces.test_clients.CATALOG"]}
    assert check_a2ui_settings(None) == []


CATALOG = {"catalogId": "urn:test:catalog", "components": {}, "functions": {}}


async def test_consent_required_blocks_actions(stream_token, agent_key, settings):
    agent = await connect_agent(agent_key)
    user, sid = await v09_user(stream_token)
    await push(agent, sid, booking())
    await recv_until(user, is_v09)
    settings.A2UI = {**settings.A2UI, "REQUIRED_CONSENTS": ["data_collection"]}
    await send(user, rpc("a2ui.v09", {"messages": [action()]}, "a1"))
    reply = await recv_until(user, lambda m: m.get("id") == "a1")
    assert reply["error"]["code"] == -32010
    assert all(not is_v09(m) for m in await drain(agent))
    await user.disconnect()
    await agent.disconnect()


async def test_session_close_closes_v09_socket(stream_token, agent_key):

    comm, sid = await v09_socket(stream_token)
    await session_actions.aclose_session(sid, reason="bye", close_code=4010)
    out = await comm.receive_output(timeout=3)
    assert out["type"] == "websocket.close" and out["code"] == 4010
    assert await database_sync_to_async(lambda: True)()


async def test_demo_agent_booking_round_trip(stream_token, agent_key):
    """The demo agent's v0.9 surface and its on_v09 handler work with what the server sends."""
    from a2ui import demo

    agent = await connect_agent(agent_key)
    user, sid = await v09_user(stream_token)
    assert "result" in await push(agent, sid, demo.booking_surface())
    await recv_until(user, is_v09)
    await send(user, rpc("a2ui.v09", {"messages": [{"version": "v0.9", "action": {
        "name": "book", "surfaceId": "demo-booking", "sourceComponentId": "book",
        "timestamp": "2026-01-01T12:00:00Z", "context": {"name": "Ada"}}}]}, "a"))
    note = await recv_until(agent, is_v09)

    class Fake:
        sent = []

        async def surfaces(self, session_id, messages):
            self.sent.append((session_id, messages))

    fake = Fake()
    await demo.DemoAgent(fake).on_v09(note["params"])
    ((session_id, messages),) = fake.sent
    assert session_id == sid
    reply = await push(agent, sid, messages, "b")
    assert "result" in reply
    shown = await recv_until(user, is_v09)
    assert "Ada" in json.dumps(shown["params"]["messages"])
    await user.disconnect()
    await agent.disconnect()
