"""The MCP watcher (``a2ui.mcp.watch``) listens to a session on the one loop every person-side
listener runs: a session whose listeners (a person's socket and an MCP host's subscription) are
all in the pushing process is pushed by direct delivery, with no publish to the session's
group; with the watcher in another process the push is published and still reaches it. The
kinds the MCP adapter does not show are dropped by the loop, after their number is taken, and a
lost event tells the watcher everything may have changed."""

import asyncio
import uuid

import pytest

from a2ui.core.events import Kind
from a2ui.infra import groups, shared
from a2ui.mcp.adapter import ADAPTER
from a2ui.mcp.watch import WatchedSession, Watcher
from a2ui.push import direct
from tests.wsutil import (
    connect_agent,
    connect_user,
    init_session,
    publishes_through_send_group,
    recv,
    send,
)

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def layer_sends(monkeypatch):
    """Sequence numbers of the sends to a session group (the published path) in the test."""
    sent = []
    original = groups.send_group

    async def spy(group, event):
        if group.startswith("a2ui.s."):
            sent.append(event.get("seq"))
        await original(group, event)

    monkeypatch.setattr(groups, "send_group", spy)
    publishes_through_send_group(monkeypatch)
    return sent


class Seen:
    def __init__(self):
        self.events, self.lost = asyncio.Queue(), []

    async def on_event(self, session_id, event):
        await self.events.put((session_id, event))

    async def on_lost(self, session_id):
        self.lost.append(session_id)

    async def next(self):
        return await asyncio.wait_for(self.events.get(), 5)


def render(sid, cid, title):
    return {"jsonrpc": "2.0", "method": "ui.render", "params": {
        "session_id": sid, "component_id": cid, "component_type": "card",
        "data": {"title": title}}}


def progress(sid, value):
    return {"jsonrpc": "2.0", "method": "ui.progress", "params": {
        "session_id": sid, "task_id": "t", "progress_type": "determinate", "value": value,
        "total": 100}}


async def open_watched(stream_token, agent_key):
    agent = await connect_agent(agent_key)
    user = await connect_user(stream_token)
    sid = await init_session(user)
    assert (await recv(agent))["method"] == "session.opened"
    seen = Seen()
    watcher = Watcher(seen.on_event, seen.on_lost)
    await watcher.watch(uuid.UUID(sid))
    return agent, user, sid, seen, watcher


async def test_a_watched_session_in_one_process_is_pushed_directly(stream_token, agent_key,
                                                                   layer_sends):
    agent, user, sid, seen, watcher = await open_watched(stream_token, agent_key)
    hexid = sid.replace("-", "")
    assert await shared.socket_count(hexid) == 2  # the person's socket and the watcher
    assert any(isinstance(c, WatchedSession) for c in dict(direct.registered())[hexid])
    await send(agent, render(sid, "c1", "One"))
    await send(agent, progress(sid, 5))  # not an MCP kind: dropped by the loop
    await send(agent, render(sid, "c2", "Two"))
    first, second = await seen.next(), await seen.next()
    assert [e["data"]["component_id"] for _, e in (first, second)] == ["c1", "c2"]
    assert first[0] == uuid.UUID(sid) and [e["seq"] for _, e in (first, second)] == [1, 3]
    assert seen.events.empty() and seen.lost == []  # no gap: the progress was numbered
    assert (await recv(user))["method"] == "ui.render"  # the person's socket too
    assert layer_sends == []  # no publish to the session's group
    await watcher.close()
    assert await shared.socket_count(hexid) == 1
    assert not any(isinstance(c, WatchedSession)
                   for c in dict(direct.registered()).get(hexid, []))
    await user.disconnect()
    await agent.disconnect()


async def test_a_watcher_in_another_process_still_gets_every_push(stream_token, agent_key,
                                                                  layer_sends):
    agent, user, sid, seen, watcher = await open_watched(stream_token, agent_key)
    hexid = sid.replace("-", "")
    listener = watcher.readers[uuid.UUID(sid)][0]
    # As if the watcher were in another process: counted and in the group, not registered here.
    direct.unregister(hexid, listener)
    await send(agent, render(sid, "c1", "One"))
    _, event = await seen.next()
    assert event["data"]["component_id"] == "c1"
    assert layer_sends == [1]  # published, and read back from the group
    await watcher.close()
    await user.disconnect()
    await agent.disconnect()


async def test_a_lost_event_tells_the_watcher(stream_token, agent_key):
    agent, user, sid, seen, watcher = await open_watched(stream_token, agent_key)
    listener = watcher.readers[uuid.UUID(sid)][0]
    await listener.take_direct({"type": "a2ui.event", "kind": "component.rendered",
                                "data": {"component_id": "x"}, "seq": 5,
                                "epoch": listener.epoch})
    _, event = await seen.next()
    assert event["seq"] == 5 and seen.lost == [uuid.UUID(sid)]  # 1-4 missing: everything
    await watcher.close()
    await user.disconnect()
    await agent.disconnect()


def test_the_watcher_shows_the_mcp_adapters_kinds():
    assert WatchedSession.adapter_name == ADAPTER.name
    assert Kind.PROGRESS not in ADAPTER.kinds and Kind.COMPONENT_RENDERED in ADAPTER.kinds
