"""Direct delivery (a2ui.push.direct): pushes skip the channel layer only when that is safe.

Unit tests of the rules with stand-in consumers, of the consumer side (one message at a time,
in order), and the whole path through the ASGI application with the in-memory layer.
"""

import asyncio
import time

import pytest
from django.test import override_settings

from a2ui.consumers.base import DirectDeliveryMixin, JsonRpcConsumer
from a2ui.infra import groups, shared
from a2ui.push import direct
from tests.wsutil import (
    connect_agent,
    connect_user,
    init_session,
    publishes_through_send_group,
    recv,
    send,
)


class Standin:
    def __init__(self, last_seq=0, loop=None):
        self.loop = loop or asyncio.get_running_loop()
        self.last_seq = last_seq
        self.got = []

    async def take_direct(self, event):
        self.got.append(event["seq"])
        self.last_seq = max(self.last_seq, event["seq"])


def push(seq):
    return {"type": "a2ui.event", "seq": seq, "kind": "notify", "data": {"title": f"#{seq}"}}


# The rules ---------------------------------------------------------------------------------------


async def test_nothing_registered_means_the_layer():
    assert not direct.wanted("s1")
    assert await direct.deliver("s1", 1, push(1)) is False


async def test_every_socket_here_takes_it():
    a, b = Standin(), Standin()
    direct.register("s1", a)
    direct.register("s1", b)
    assert direct.wanted("s1")
    assert await direct.deliver("s1", 2, push(1)) is True
    assert a.got == b.got == [1]


async def test_a_socket_counted_elsewhere_means_the_layer():
    a = Standin()
    direct.register("s1", a)
    assert await direct.deliver("s1", 2, push(1)) is False  # two counted, one here
    assert await direct.deliver("s1", 0, push(1)) is False  # count lost: do not guess
    assert a.got == []


async def test_a_publish_not_yet_seen_here_keeps_later_pushes_on_the_layer():
    a = Standin(last_seq=3)
    direct.register("s1", a)
    direct.published("s1", 4)
    assert await direct.deliver("s1", 1, push(5)) is False  # 4 may still be in flight
    a.last_seq = 4  # the consumer handled it
    assert await direct.deliver("s1", 1, push(5)) is True
    direct.published("s1", 2)  # an older publish does not move the mark back
    assert await direct.deliver("s1", 1, push(6)) is True


async def test_publishes_are_forgotten_once_they_cannot_be_in_flight(monkeypatch):
    direct.published("old", 9)
    later = time.monotonic() + direct.IN_FLIGHT_SECONDS + 1
    monkeypatch.setattr(direct.time, "monotonic", lambda: later)
    direct.published("new", 1)  # the prune runs on a publish
    a = Standin(last_seq=0)
    direct.register("old", a)
    assert await direct.deliver("old", 1, push(10)) is True


async def test_the_collection_forgets_settled_publishes_of_sessions_not_watched_here(monkeypatch):
    """After a mass close the last minute's publishes stayed (pruned only on the next publish),
    each entry keeping a page of the closed sockets' memory (docs/performance.md)."""
    from a2ui.infra import memory

    watched = Standin(last_seq=0)
    direct.register("watched", watched)
    for session in ("watched", "gone", "recent"):
        direct.published(session, 7)
    settled = time.monotonic() + direct.SETTLED_SECONDS
    monkeypatch.setattr(direct.time, "monotonic", lambda: settled)
    direct.published("recent", 8)  # a publish just now: may still be in flight
    memory.collect()
    assert set(direct._published) == {"watched", "recent"}
    assert await direct.deliver("watched", 1, push(8)) is False  # its 7 may still be in flight
    memory.reset()


async def test_a_sender_on_another_loop_uses_the_layer():
    other = asyncio.new_event_loop()
    try:
        direct.register("s1", Standin(loop=other))
        assert await direct.deliver("s1", 1, push(1)) is False
    finally:
        other.close()


async def test_unregister():
    a = Standin()
    direct.register("s1", a)
    direct.unregister("s1", Standin())  # unknown: ignored
    direct.unregister("nope", a)
    direct.unregister("s1", a)
    assert not direct.wanted("s1")


async def test_the_setting_turns_it_off():
    direct.register("s1", Standin())
    with override_settings(A2UI={"DIRECT_DELIVERY": False}):
        assert not direct.wanted("s1")


# The consumer side -------------------------------------------------------------------------------


class Probe(DirectDeliveryMixin, JsonRpcConsumer):
    def __init__(self):
        super().__init__()
        self.handled = []

    async def a2ui_event(self, event):
        if event.get("fail"):
            raise RuntimeError("socket trouble")
        self.handled.append(event["seq"])
        self.last_seq = event["seq"]

    async def a2ui_other(self, event):
        self.handled.append("other")


async def test_an_idle_consumer_handles_a_direct_push_at_once():
    probe = Probe()
    await probe.take_direct(push(1))
    assert probe.handled == [1]


async def test_a_busy_consumer_handles_direct_pushes_after_its_message_in_order():
    probe = Probe()
    release = asyncio.Event()

    async def slow(event):
        await release.wait()
        probe.handled.append("slow")

    probe.a2ui_slow = slow
    busy = asyncio.ensure_future(probe.dispatch({"type": "a2ui.slow"}))
    await asyncio.sleep(0)
    await probe.take_direct(push(1))
    await probe.take_direct(push(2))
    assert probe.handled == []
    release.set()
    await busy
    assert probe.handled == ["slow", 1, 2]


async def test_a_layer_message_in_hand_is_handled_before_a_direct_push():
    probe = Probe()
    probe.channel_receive = lambda: asyncio.sleep(0, result={"type": "a2ui.other"})
    message = await probe.channel_receive()  # received, not dispatched yet
    await probe.take_direct(push(1))
    assert probe.handled == []
    await probe.dispatch(message)
    assert probe.handled == ["other", 1]


async def test_a_failing_direct_push_is_the_sockets_problem_not_the_senders(caplog):
    probe = Probe()
    await probe.take_direct({**push(1), "fail": True})  # does not raise
    await probe.take_direct(push(2))
    assert probe.handled == [2]
    assert "direct push" in caplog.text


# Through the application -------------------------------------------------------------------------

pytestmark_db = pytest.mark.django_db(transaction=True)


class LayerSends(list):
    """Session-group sends (the layer path) made during the test, by sequence number.

    With ``delay`` set, they arrive that much later (in order), as a publish through Redis can.
    """

    delay = 0.0


@pytest.fixture
def layer_sends(monkeypatch):
    sent = LayerSends()
    original = groups.send_group

    async def spy(group, event):
        if not group.startswith("a2ui.s."):
            await original(group, event)
            return
        sent.append(event.get("seq"))
        if sent.delay:
            loop = asyncio.get_running_loop()
            loop.call_later(sent.delay, lambda: asyncio.ensure_future(original(group, event)))
        else:
            await original(group, event)

    monkeypatch.setattr(groups, "send_group", spy)
    publishes_through_send_group(monkeypatch)
    return sent


def progress(sid, value):
    return {"jsonrpc": "2.0", "method": "ui.progress", "params": {
        "session_id": sid, "task_id": "t", "progress_type": "determinate", "value": value,
        "total": 100}}


async def open_pair(stream_token, agent_key):
    agent = await connect_agent(agent_key)
    user = await connect_user(stream_token)
    sid = await init_session(user)
    opened = await recv(agent)
    assert opened["method"] == "session.opened"
    return agent, user, sid


async def received_values(user, count):
    return [(await recv(user))["params"]["value"] for _ in range(count)]


@pytestmark_db
async def test_pushes_skip_the_layer_when_every_socket_is_here(stream_token, agent_key,
                                                               layer_sends):
    agent, user, sid = await open_pair(stream_token, agent_key)
    for value in range(5):
        await send(agent, progress(sid, value))
    await send(agent, {"jsonrpc": "2.0", "method": "ui.render", "params": {
        "session_id": sid, "component_id": "c1", "component_type": "card",
        "data": {"title": "Hi"}}})
    assert await received_values(user, 5) == [0, 1, 2, 3, 4]
    assert (await recv(user))["params"]["component_id"] == "c1"
    assert layer_sends == []
    await user.disconnect()
    assert not direct.wanted(sid.replace("-", ""))
    await agent.disconnect()


@pytestmark_db
async def test_with_the_setting_off_every_push_uses_the_layer(stream_token, agent_key,
                                                               layer_sends):
    with override_settings(A2UI={"DIRECT_DELIVERY": False}):
        agent, user, sid = await open_pair(stream_token, agent_key)
        for value in range(3):
            await send(agent, progress(sid, value))
        assert await received_values(user, 3) == [0, 1, 2]
        assert layer_sends == [1, 2, 3]
        await user.disconnect()
        await agent.disconnect()


@pytestmark_db
async def test_a_socket_in_another_process_sends_pushes_through_the_layer_in_order(
        stream_token, agent_key, layer_sends):
    agent, user, sid = await open_pair(stream_token, agent_key)
    layer_sends.delay = 0.2  # still in flight when the direct path opens again
    session_hex = sid.replace("-", "")
    other = await shared.socket_opened(session_hex)  # a second socket, in some other process
    for value in range(10):
        await send(agent, {**progress(sid, value), "id": value})
    assert [(await recv(agent))["result"]["seq"] for _ in range(10)] == list(range(1, 11))
    await shared.socket_closed(session_hex, other)  # it went away: direct again, after the rest
    for value in range(10, 20):
        await send(agent, progress(sid, value))
    # The publishes were still in flight, so these went through the layer behind them.
    assert await received_values(user, 20) == list(range(20))
    assert layer_sends == list(range(1, 21))
    for value in range(20, 25):  # everything has arrived: direct again
        await send(agent, progress(sid, value))
    assert await received_values(user, 5) == list(range(20, 25))
    assert layer_sends == list(range(1, 21))
    await user.disconnect()
    await agent.disconnect()


@pytestmark_db
async def test_a_resumed_socket_takes_direct_pushes_again(stream_token, agent_key, user, agent,
                                                          layer_sends):
    from channels.db import database_sync_to_async

    from a2ui import tokens

    agent_ws, first, sid = await open_pair(stream_token, agent_key)
    await first.disconnect()
    token = await database_sync_to_async(lambda: tokens.issue_stream_token(user, agent).token)()
    second = await connect_user(token)
    assert await init_session(second, session_id=sid) == sid
    await send(agent_ws, progress(sid, 7))
    msg = await recv(second)
    while msg.get("method") != "ui.progress":
        msg = await recv(second)
    assert msg["params"]["value"] == 7
    assert layer_sends == []
    await second.disconnect()
    await agent_ws.disconnect()
