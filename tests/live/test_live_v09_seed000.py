"""Tier 2: a seed-000 agent's components and requests reach a v0.9 client on another process.

The agent pushes ``ui.render`` / ``ui.update`` / ``ui.request_input`` on its WebSocket to
process A; the person's /ws/v09 socket and SSE stream are held by process B, so every event
travels through PostgreSQL and Redis. What the socket receives must be what the official
@a2ui/web_core accepts; the person's action on B answers the request the agent waits on at A.
"""


import pytest

from a2ui.core.surfaces import BASIC_CATALOG_ID
from tests.live.client import Client, open_agent
from tests.live.test_live_surfaces import SSEStream, sse_url
from tests.v09.v09_views import SAMPLES, ClientModel, webcore

pytestmark = pytest.mark.django_db(transaction=True)

CAPS = {"v0.9": {"supportedCatalogIds": [BASIC_CATALOG_ID]}}


async def test_live_seed000_card_reaches_a_v09_socket_on_another_process(
        two_servers, stream_token, agent_key):
    a, b = two_servers
    agent = await open_agent(a, agent_key)
    ws = await Client.open(f"{b.ws_url}/ws/v09/a2ui?token={stream_token}")
    await ws.send({"version": "v0.9", "capabilities": CAPS})
    sid = (await ws.recv())["session"]["sessionId"]
    await agent.recv_until(lambda m: m.get("method") == "session.opened")
    stream = await SSEStream.open(sse_url(b, sid, stream_token))
    assert (await stream.next()) == {"retry": "2000"}
    assert (await stream.next())["event"] == "a2ui-reset"
    assert (await stream.next()) == {"id": "0"}

    reply = await agent.call("ui.render", {"session_id": sid, "component_id": "card1",
                                           "component_type": "card", "data": SAMPLES["card"]},
                             "r1")
    assert "result" in reply, reply
    frames = [await ws.recv() for _ in range(2)]
    assert frames[0] == {"version": "v0.9", "createSurface": {
        "surfaceId": "a2ui-component-card1", "catalogId": BASIC_CATALOG_ID}}
    assert "Order" in str(frames[1]["updateComponents"]["components"])
    events = [await stream.next() for _ in range(2)]
    assert [e["data"] for e in events] == frames and events[1]["id"] == "0.c"

    reply = await agent.call("ui.update", {"session_id": sid, "component_id": "card1",
                                           "operation": "merge",
                                           "data": {"description": "Delivered"}}, "u1")
    assert "result" in reply, reply
    update = await ws.recv()
    assert "Delivered" in str(update) and (await stream.next())["data"] == update

    # the agent asks on A; the person answers on B with the surface's button
    await agent.send({"jsonrpc": "2.0", "id": "q1", "method": "ui.request_input", "params": {
        "session_id": sid, "request_id": "q1", "input_type": "text", "prompt": "Name?"}})
    asked = [await ws.recv() for _ in range(3)]
    assert asked[0]["createSurface"]["surfaceId"] == "a2ui-request-q1"
    button = next(c for c in asked[1]["updateComponents"]["components"]
                  if c["component"] == "Button")
    await ws.send({"version": "v0.9", "action": {
        "name": "respond", "surfaceId": "a2ui-request-q1", "sourceComponentId": button["id"],
        "timestamp": "2026-01-01T00:00:00Z", "context": {"value": "Ada"}}})
    answer = await agent.recv_until(lambda m: m.get("id") == "q1")
    assert answer.get("result") in ("Ada", {"value": "Ada"}), answer
    closed = await ws.recv()
    assert closed == {"version": "v0.9", "deleteSurface": {"surfaceId": "a2ui-request-q1"}}

    model = ClientModel()
    model.receive(frames + [update] + asked + [closed])
    assert set(model.shown()) == {"a2ui-component-card1"}
    verdict = webcore([frames, [update], asked, [closed]])
    assert verdict["ok"] and list(verdict["surfaces"]) == ["a2ui-component-card1"], verdict
    stream.close()
    await ws.close()
    await agent.close()
