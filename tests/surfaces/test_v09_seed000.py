"""Seed-000 components and requests shown to v0.9 clients: the /ws/v09 socket and the SSE
surface stream, live and in their snapshots (a2ui.v09.view), and the person's answers back.

The agent pushes through the Python API (``a2ui.agents``, the agent path of seed 000); a v0.9
socket and an SSE stream are attached; what each receives goes into a ``ClientModel`` (the
strict validator, message by message) and, for the socket, through the official web_core.
"""

import asyncio
import json
import random

import pytest
from django.test import AsyncClient

from a2ui import agents
from a2ui.push import sessions as session_actions
from tests.push.test_snapshot_invariant import run as run_op
from tests.sessionops import Ops
from tests.surfaces.helpers import V, v09_socket
from tests.surfaces.test_sse import SSE, url
from tests.v09.v09_views import SAMPLES, ClientModel, webcore
from tests.wsutil import recv

pytestmark = pytest.mark.django_db(transaction=True)

COMPONENT = "a2ui-component-"
REQUEST = "a2ui-request-"


async def drain_socket(comm, quiet=0.3):
    """Every frame the socket has for us (until it is quiet)."""
    out = []
    while not await comm.receive_nothing(quiet):  # (a timed-out receive_from ends the app)
        out.append(await recv(comm))
    return out


class Reader:
    """Reads an SSE response in a task of its own into a queue (a timed-out read of the
    response would close its generator)."""

    def __init__(self, response):
        self.stream = SSE(response)
        self.queue = asyncio.Queue()
        self.task = asyncio.ensure_future(self._read())

    async def _read(self):
        try:
            while True:
                await self.queue.put(await self.stream.next(timeout=3600))
        except StopAsyncIteration:
            await self.queue.put(None)


async def drain_sse(reader, quiet=0.3):
    out = []
    while True:
        try:
            event = await asyncio.wait_for(reader.queue.get(), quiet)
        except TimeoutError:
            return out
        if event is None:
            return out
        out.append(event)


def messages(frames):
    return [f for f in frames if "version" in f and "error" not in f and "session" not in f]


def sse_messages(events):
    return [e["data"] for e in events if e.get("data") and "version" in e["data"]]


class Clients:
    """A v0.9 socket (which opened the session) and an SSE stream on it."""

    @classmethod
    async def open(cls, token):
        self = cls()
        self.token = token
        self.socket, self.sid = await v09_socket(token)
        self.client = AsyncClient()
        self.response = await self.client.get(url(self.sid, token))
        self.stream = Reader(self.response)
        self.socket_model, self.sse_model = ClientModel(), ClientModel()
        await self.take()
        return self

    async def take(self):
        """What both received since the last take: (socket messages, SSE events)."""
        frames = messages(await drain_socket(self.socket))
        events = await drain_sse(self.stream)
        self.socket_model.receive(frames)
        self.sse_model.receive(sse_messages(events))
        return frames, events

    async def close(self):
        self.stream.task.cancel()
        await self.response.streaming_content.aclose()
        await self.socket.disconnect()


def kinds(msgs):
    return [next(k for k in m if k != "version") for m in msgs]


@pytest.mark.parametrize("component_type", sorted(SAMPLES))
async def test_a_rendered_component_reaches_both(stream_token, agent, component_type):
    c = await Clients.open(stream_token)
    cid = await agents.arender(agent, c.sid, component_type, SAMPLES[component_type],
                               component_id="x1")
    frames, events = await c.take()
    expected = ["createSurface", "updateComponents"] + (
        ["updateDataModel"] if component_type == "form" else [])
    assert kinds(frames) == expected and kinds(sse_messages(events)) == expected
    assert frames == sse_messages(events)
    assert frames[0]["createSurface"]["surfaceId"] == COMPONENT + cid
    assert all(e.get("id") == "0.c" for e in events)  # the client holds a translated surface
    assert c.socket_model.shown() == c.sse_model.shown()
    assert webcore([frames])["ok"]
    await c.close()


async def test_updated_and_removed_reach_both(stream_token, agent):
    c = await Clients.open(stream_token)
    await agents.arender(agent, c.sid, "table", SAMPLES["table"], component_id="t")
    await agents.arender(agent, c.sid, "card", {"title": "Hi", "description": "d"},
                         component_id="k")
    await c.take()
    await agents.aupdate(agent, c.sid, "t", {"rows": [{"name": "Grace", "age": 85}]}, "append")
    frames, events = await c.take()
    assert kinds(frames) == ["updateComponents"] and frames == sse_messages(events)
    assert "Grace" in json.dumps(frames)
    await agents.aupdate(agent, c.sid, "k", {"title": "Bye"}, "replace")
    frames, events = await c.take()  # a new tree: the surface is made again
    assert kinds(frames) == ["deleteSurface", "createSurface", "updateComponents"]
    assert frames == sse_messages(events)
    await sessions_remove(c.sid, "t")
    frames, events = await c.take()
    assert frames == [{"version": V, "deleteSurface": {"surfaceId": COMPONENT + "t"}}]
    assert sse_messages(events) == frames and events[-1]["id"] == "0.c"  # k is still held
    await sessions_remove(c.sid, "k")
    frames, events = await c.take()
    assert events[-1]["id"] == "0"  # holds nothing translated any more
    assert c.socket_model.shown() == c.sse_model.shown() == {}
    await c.close()


async def sessions_remove(sid, cid):
    """The component's ttl runs out and the sweep removes it (component.removed)."""
    await run_op(_Session(sid), ("ttl", cid))


class _Session:
    def __init__(self, sid, agent_id=None):
        import uuid

        self.session_id = uuid.UUID(str(sid))
        self.agent_id = agent_id


async def test_a_request_is_a_surface_whose_action_answers_it(stream_token, agent):
    c = await Clients.open(stream_token)
    asking = asyncio.ensure_future(agents.arequest_input(
        agent, c.sid, "select", "Plan?", options=["free", "pro"], request_id="r1"))
    frames, events = await c.take()
    assert kinds(frames) == ["createSurface", "updateComponents", "updateDataModel"]
    assert frames == sse_messages(events) and frames[0]["createSurface"]["surfaceId"] == \
        REQUEST + "r1"
    assert webcore([frames])["ok"]
    [button] = [comp for comp in frames[1]["updateComponents"]["components"]
                if comp["component"] == "Button"]
    # a wrong action name is refused, and nothing is answered
    await c.socket.send_to(text_data=json.dumps({"version": V, "action": {
        "name": "delete", "surfaceId": REQUEST + "r1", "sourceComponentId": button["id"],
        "timestamp": "2026-01-01T00:00:00Z", "context": {}}}))
    refused = await recv(c.socket)
    assert refused["error"]["code"] == "VALIDATION_FAILED" and not asking.done()
    await c.socket.send_to(text_data=json.dumps({"version": V, "action": {
        "name": "respond", "surfaceId": REQUEST + "r1", "sourceComponentId": button["id"],
        "timestamp": "2026-01-01T00:00:00Z", "context": {"value": ["pro"]}}}))
    assert await asyncio.wait_for(asking, 5) == "pro"
    frames, events = await c.take()  # request.closed: the surface goes
    assert frames == [{"version": V, "deleteSurface": {"surfaceId": REQUEST + "r1"}}]
    assert sse_messages(events) == frames
    # answered twice: refused like any late answer
    await c.socket.send_to(text_data=json.dumps({"version": V, "action": {
        "name": "respond", "surfaceId": REQUEST + "r1", "sourceComponentId": button["id"],
        "timestamp": "2026-01-01T00:00:00Z", "context": {"value": ["free"]}}}))
    again = await recv(c.socket)
    assert "error" in again and again["error"]["code"] == "INVALID_PARAMS", again
    await c.close()


async def test_a_confirm_is_answered_by_its_buttons(stream_token, agent):
    c = await Clients.open(stream_token)
    asking = asyncio.ensure_future(agents.aconfirm(agent, c.sid, "Delete?", request_id="r2",
                                                   severity="critical"))
    frames, events = await c.take()
    assert frames == sse_messages(events)
    names = [comp["action"]["event"]["name"] for comp in frames[1]["updateComponents"][
        "components"] if comp["component"] == "Button"]
    assert names == ["approve", "reject"]
    source = next(comp["id"] for comp in frames[1]["updateComponents"]["components"]
                  if comp["component"] == "Button")
    await c.socket.send_to(text_data=json.dumps({"version": V, "action": {
        "name": "reject", "surfaceId": REQUEST + "r2", "sourceComponentId": source,
        "timestamp": "2026-01-01T00:00:00Z", "context": {}}}))
    assert await asyncio.wait_for(asking, 5) == {"approved": False, "reason": ""}
    frames, _ = await c.take()
    assert kinds(frames) == ["deleteSurface"]
    await c.close()


async def test_a_form_submit_goes_to_the_agent_as_user_respond(stream_token, agent):
    from channels.layers import get_channel_layer

    from a2ui.infra import groups

    c = await Clients.open(stream_token)
    layer = get_channel_layer()
    channel = await layer.new_channel()
    await layer.group_add(groups.agent_group(agent.pk), channel)
    await agents.arender(agent, c.sid, "form", {"fields": [{"name": "n", "type": "text"}]},
                         component_id="f")
    frames, _ = await c.take()
    submit = next(comp for comp in frames[1]["updateComponents"]["components"]
                  if comp["component"] == "Button")
    await c.socket.send_to(text_data=json.dumps({"version": V, "action": {
        "name": "submit", "surfaceId": COMPONENT + "f", "sourceComponentId": submit["id"],
        "timestamp": "2026-01-01T00:00:00Z", "context": {"n": "Ada"}}}))
    for _ in range(10):
        event = await asyncio.wait_for(layer.receive(channel), 5)
        if event.get("method") == "user.respond" or "user.respond" in json.dumps(event):
            break
    assert "user.respond" in json.dumps(event) and '"Ada"' in json.dumps(event), event
    await c.close()


async def test_a_client_without_the_basic_catalog_is_not_shown_components(stream_token, agent):
    socket, sid = await v09_socket(stream_token, capabilities={"v0.9": {
        "supportedCatalogIds": ["https://example.com/catalog.json"]}})
    await agents.arender(agent, sid, "card", {"title": "Hi"})
    assert messages(await drain_socket(socket)) == []
    await socket.disconnect()


# Snapshots: a client that joins is shown what one that watched all along was shown ------------


async def test_the_snapshot_holds_components_and_requests(stream_token, agent):
    c = await Clients.open(stream_token)
    await agents.arender(agent, c.sid, "markdown", {"content": "# Hi"}, component_id="m")
    asking = asyncio.ensure_future(agents.aconfirm(agent, c.sid, "Go?", request_id="q"))
    await c.take()
    late, _ = await v09_socket(stream_token, c.sid)
    frames = messages(await drain_socket(late))
    model = ClientModel()
    model.receive(frames)
    assert model.shown() == c.socket_model.shown() and set(model.shown()) == {
        COMPONENT + "m", REQUEST + "q"}
    assert webcore([frames])["ok"]
    asking.cancel()
    await late.disconnect()
    await c.close()


@pytest.mark.parametrize("seed", range(4))
async def test_stale_snapshot_plus_events_is_a_fresh_snapshot(stream_token, agent, seed):
    """Random render/update/remove/request sequences (and v0.9 batches beside them): a socket
    and a stream that joined at a random point show, at the end, what a socket and a stream
    that join at the end show."""
    opener, sid = await v09_socket(stream_token)
    session = _Session(sid, agent.pk)
    ops = Ops(seed).many(16)
    rng = random.Random(seed)
    last = {}  # component id -> index of the last op that names it
    for i, op in enumerate(ops):
        if op[0] == "push" and "component_id" in op[2]:
            last[op[2]["component_id"]] = i
    for cid, i in sorted(last.items(), key=lambda item: -item[1]):
        if rng.random() < 0.4:  # it runs out after its last use (component.removed)
            ops.insert(rng.randrange(i + 1, len(ops) + 1), ("ttl", cid))
    cut = rng.randrange(len(ops) + 1)
    for op in ops[:cut]:
        await run_op(session, op)
    stale = await Clients.open_on(stream_token, sid)
    for op in ops[cut:]:
        await run_op(session, op)
    await stale.take()
    fresh = await Clients.open_on(stream_token, sid)
    assert stale.socket_model.shown() == fresh.socket_model.shown()
    assert stale.sse_model.shown() == fresh.sse_model.shown() == fresh.socket_model.shown()
    assert any(k.startswith((COMPONENT, REQUEST)) for k in fresh.socket_model.shown()) or \
        not any(op[0] == "push" for op in ops)
    assert webcore(stale.socket_model.batches)["ok"]
    await stale.close()
    await fresh.close()
    await opener.disconnect()


async def _open_on(cls, token, sid):
    self = cls()
    self.socket, self.sid = await v09_socket(token, sid)
    self.client = AsyncClient()
    self.response = await self.client.get(url(sid, token))
    self.stream = Reader(self.response)
    self.socket_model, self.sse_model = ClientModel(), ClientModel()
    await self.take()
    return self


Clients.open_on = classmethod(_open_on)


# SSE resumption ------------------------------------------------------------------------------


async def test_a_resuming_stream_gets_the_translated_surfaces_again(stream_token, agent):
    c = await Clients.open(stream_token)
    await agents.arender(agent, c.sid, "card", {"title": "One"}, component_id="a")
    _, events = await c.take()
    last = events[-1]["id"]
    assert last == "0.c"
    c.stream.task.cancel()
    await c.response.streaming_content.aclose()
    await agents.aupdate(agent, c.sid, "a", {"title": "Two"}, "merge")  # missed

    # The store's number did not move, but the id says the client holds translated surfaces:
    # a reset and the whole snapshot, so the missed update is not lost.
    resp = await c.client.get(url(c.sid, stream_token), headers={"Last-Event-ID": last})
    stream = Reader(resp)
    events = await drain_sse(stream)
    assert [e.get("event") for e in events[:2]] == [None, "a2ui-reset"]
    model = ClientModel()
    model.receive(sse_messages(events))
    assert "Two" in json.dumps(model.shown()) and events[-1]["id"] == "0.c"
    stream.task.cancel()
    await resp.streaming_content.aclose()

    # An unmarked id with a component rendered since: the snapshot too.
    resp = await c.client.get(url(c.sid, stream_token), headers={"Last-Event-ID": "0"})
    stream = Reader(resp)
    events = await drain_sse(stream)
    assert any(e.get("event") == "a2ui-reset" for e in events)
    assert COMPONENT + "a" in json.dumps(events)
    stream.task.cancel()
    await resp.streaming_content.aclose()

    # Nothing translated, nothing missed: straight on (as before).
    await sessions_remove(c.sid, "a")
    resp = await c.client.get(url(c.sid, stream_token), headers={"Last-Event-ID": "0"})
    stream = Reader(resp)
    events = await drain_sse(stream)
    assert events == [{"retry": "2000"}]
    stream.task.cancel()
    await resp.streaming_content.aclose()
    await c.socket.disconnect()


async def test_closing_the_session_ends_it(stream_token, agent):
    c = await Clients.open(stream_token)
    await agents.arender(agent, c.sid, "card", {"title": "x"})
    await c.take()
    await session_actions.aclose_session(c.sid, reason="done", close_code=4010)
    await c.close()
