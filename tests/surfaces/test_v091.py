"""A2UI v0.9.1 end to end (in process): a surface id is free once its surface is deleted, on
every path a client is sent surfaces by (/ws/v09, the JSON-RPC socket, SSE); v0.9.1's
capabilities key; what the agent writes as "v0.9.1" reaches clients as "v0.9"; REST takes
the A2UI media type."""

import json

import pytest
from channels.db import database_sync_to_async
from django.test import AsyncClient
from rest_framework.test import APIClient

from a2ui import agents
from a2ui import surfaces as surface_service
from a2ui.core.surfaces import BASIC_CATALOG_ID
from a2ui.sessions import lifecycle as sessions
from tests.surfaces.helpers import (
    booking,
    components,
    create,
    data,
    delete,
    frames,
    is_v09,
    push,
    text,
    v09_socket,
)
from tests.surfaces.test_sse import SSE, url
from tests.v09.v09_views import webcore
from tests.wsutil import connect_agent, connect_user, init_session, recv_until

pytestmark = pytest.mark.django_db(transaction=True)

OTHER = "https://example.com/catalogs/other.json"


def note(sid, n):
    """A second form of the surface ``sid``: a Card holding one Text, its own data."""
    return [create(sid), components(sid, {"id": "root", "component": "Card", "child": "t"},
                                    text("t", f"note {n}")),
            data(sid, "/", {"n": n})]


def kinds(messages):
    return [(next(k for k in m if k != "version"), next(
        v for k, v in m.items() if k != "version")["surfaceId"]) for m in messages]


async def test_a_surface_id_is_free_once_deleted(stream_token, agent_key):
    agent = await connect_agent(agent_key)
    comm, sid = await v09_socket(stream_token)
    await push(agent, sid, booking("s1") + booking("s2"), "p1")
    seen = await frames(comm, 6)
    # in a later batch: refused while active, then deleted and created again, as new
    refused = await push(agent, sid, note("s1", 1), "p2")
    assert refused["error"]["data"]["error"]["path"] == "/createSurface/surfaceId"
    await push(agent, sid, [delete("s1")], "p3")
    await push(agent, sid, note("s1", 1), "p4")
    # in one batch: deleted and created again
    await push(agent, sid, [data("s2", "/name", "Lin"), delete("s2"), *note("s2", 2)], "p5")
    live = await frames(comm, 1 + 3 + 5)
    assert kinds(live) == [
        ("deleteSurface", "s1"), ("createSurface", "s1"), ("updateComponents", "s1"),
        ("updateDataModel", "s1"), ("updateDataModel", "s2"), ("deleteSurface", "s2"),
        ("createSurface", "s2"), ("updateComponents", "s2"), ("updateDataModel", "s2")]
    result = webcore([seen, live])  # the official renderer takes what a live client is sent
    assert result == {"ok": True, "surfaces": {"s1": ["root", "t"], "s2": ["root", "t"]}}, result

    # the store lists surfaces in creation order, nothing of the deleted ones left
    _, states = await surface_service.aload(sid)
    assert [(s.surface_id, s.data_model) for s in states] == [("s1", {"n": 1}),
                                                             ("s2", {"n": 2})]
    assert [s["surfaceId"] for s in (await sessions.asnapshot(sid)).surfaces] == ["s1", "s2"]
    await push(agent, sid, [delete("s1"), *note("s1", 3)], "p6")
    await frames(comm, 4)
    _, states = await surface_service.aload(sid)
    assert [s.surface_id for s in states] == ["s2", "s1"]  # created again: last
    await comm.disconnect()

    # a client that comes back (it saw the first deletions) is sent the surfaces as they are
    comm, same = await v09_socket(stream_token, session_id=sid)
    assert same == sid
    snap = await frames(comm, 6)
    assert comm.output_queue.empty()
    assert kinds(snap)[::3] == [("createSurface", "s2"), ("createSurface", "s1")]
    assert snap[5]["updateDataModel"]["value"] == {"n": 3}
    assert "theme" in snap[0]["createSurface"]  # the agent's identity, as on any createSurface
    assert webcore([snap])["ok"]
    await comm.disconnect()
    await agent.disconnect()


async def test_sse_resume_after_a_surface_was_created_again(stream_token, agent):
    user = await connect_user(stream_token)
    sid = await init_session(user)
    await agents.asurfaces(agent, sid, booking("s1"))
    client = AsyncClient()
    resp = await client.get(url(sid, stream_token))
    stream = SSE(resp)
    await stream.next()  # retry
    assert (await stream.next())["event"] == "a2ui-reset"
    await stream.next(), await stream.next()
    assert (await stream.next())["id"] == "3"
    await agents.asurfaces(agent, sid, [delete("s1")])
    seen = await stream.next()
    assert seen["id"] == "4" and seen["data"] == delete("s1")
    await resp.streaming_content.aclose()

    # created again while the client was away: its resume (Last-Event-ID 4, after the
    # deletion) is a reset and the new surface, never an update of the deleted one
    await agents.asurfaces(agent, sid, note("s1", 7))
    resp = await client.get(url(sid, stream_token), headers={"Last-Event-ID": "4"})
    stream = SSE(resp)
    await stream.next()
    assert (await stream.next())["event"] == "a2ui-reset"
    snap = [await stream.next() for _ in range(3)]
    assert kinds([e["data"] for e in snap]) == [
        ("createSurface", "s1"), ("updateComponents", "s1"), ("updateDataModel", "s1")]
    assert snap[2]["id"] == "7" and snap[2]["data"]["updateDataModel"]["value"] == {"n": 7}
    await resp.streaming_content.aclose()
    await user.disconnect()


async def test_jsonrpc_resume_snapshot_replaces_what_the_client_holds(stream_token, agent_key):
    agent = await connect_agent(agent_key)
    caps = {"v0.9.1": {"supportedCatalogIds": [BASIC_CATALOG_ID]}}  # v0.9.1's key
    user = await connect_user(stream_token)
    sid = await init_session(user, capabilities=caps)
    await push(agent, sid, booking("s1"))
    live = await recv_until(user, is_v09)
    assert kinds(live["params"]["messages"])[0] == ("createSurface", "s1")
    assert "snapshot" not in live["params"]
    await user.disconnect()
    await push(agent, sid, [delete("s1")], "p2")

    # the client missed the deletion: the resume's snapshot says "replace", even empty
    user = await connect_user(stream_token)
    await init_session(user, session_id=sid, capabilities=caps)
    snap = await recv_until(user, is_v09)
    assert snap["params"] == {"messages": [], "snapshot": True}
    await push(agent, sid, note("s1", 5), "p3")
    live = await recv_until(user, is_v09)
    assert kinds(live["params"]["messages"])[0] == ("createSurface", "s1")
    await user.disconnect()

    user = await connect_user(stream_token)
    await init_session(user, session_id=sid, capabilities=caps)
    snap = await recv_until(user, is_v09)
    assert snap["params"]["snapshot"] is True
    assert snap["params"]["messages"][2]["updateDataModel"]["value"] == {"n": 5}
    await user.disconnect()
    await agent.disconnect()


async def test_v0_9_1_capabilities_and_messages(stream_token, agent_key):
    agent = await connect_agent(agent_key)
    # the v0.9.1 key decides what the socket is sent (v0.9's beside it is the fallback)
    caps = {"v0.9": {"supportedCatalogIds": [BASIC_CATALOG_ID]},
            "v0.9.1": {"supportedCatalogIds": [OTHER]}}
    other, sid = await v09_socket(stream_token, capabilities=caps)
    basic, _ = await v09_socket(stream_token, session_id=sid,
                                capabilities={"v0.9.1": {"supportedCatalogIds": [
                                    BASIC_CATALOG_ID]}})
    said = [{**m, "version": "v0.9.1"} for m in booking("s1")]  # an agent writing v0.9.1
    assert (await push(agent, sid, said))["result"]["delivered"] == 3
    got = await frames(basic, 3)
    assert kinds(got) == kinds(booking("s1"))
    assert [m["version"] for m in got] == ["v0.9"] * 3
    assert other.output_queue.empty()
    # a v0.9.1 action is the agent's as v0.9
    act = {"version": "v0.9.1", "action": {"name": "book", "surfaceId": "s1",
                                           "sourceComponentId": "book",
                                           "timestamp": "2026-01-01T12:00:00Z",
                                           "context": {}}}
    await basic.send_to(text_data=json.dumps(act))
    got = await recv_until(agent, is_v09)
    assert got["params"]["messages"] == [{**act, "version": "v0.9"}]
    # a bad v0.9.1 entry is refused where it is
    bad, _ = await v09_socket(stream_token, handshake=False)
    await bad.send_to(text_data=json.dumps({"version": "v0.9.1", "capabilities": {
        "v0.9.1": {"supportedCatalogIds": "basic"}}}))
    err = json.loads(await bad.receive_from(timeout=3))
    assert err["error"]["path"] == "/capabilities/v0.9.1/supportedCatalogIds"
    for comm in (other, basic, bad):
        await comm.disconnect()
    await agent.disconnect()


async def test_rest_takes_a2ui_json(stream_token, agent_key):
    user = await connect_user(stream_token)
    sid = await init_session(user)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {agent_key}")
    post = database_sync_to_async(client.post)
    labels = ["application/a2ui+json", "application/a2ui+json; charset=utf-8",
              "application/json+a2ui", "application/json"]
    for i, content_type in enumerate(labels):
        body = json.dumps(booking(f"s{i}"))
        resp = await post(f"/api/v4/sessions/{sid}/surfaces", body, content_type=content_type)
        assert resp.status_code == 202, (content_type, resp.content)
    resp = await post(f"/api/v4/sessions/{sid}/surfaces", json.dumps(booking("t")),
                      content_type="text/plain")
    assert resp.status_code == 415
    await user.disconnect()
