"""``a2ui.layer``: the published path's two ends.

Sending: a publish goes through a pipelined ``redisline`` connection (the push path's own when
the layer's URL is ``A2UI['REDIS_URL']``), in the order of the loop's publishes. Receiving: a
push published to a session's group is handed to the consumers here registered for direct
pushes (``LeanLoopLayer.hand_over``), as a push from this process is; anything that must keep
its place behind what a consumer's queue holds goes through the queue. Two layers on one event
loop are two processes (each its own subscription), against a redis-server of the test's own.
"""

import asyncio
import contextlib
import uuid

import pytest

from a2ui import layer
from a2ui.apps import default_channel_layers
from a2ui.core import events
from a2ui.infra import groups, shared
from a2ui.push import direct
from tests.redisserver import own_redis  # noqa: F401 (fixture)

from .test_layer_reconnect import eventually


def channel_layer(url):
    return layer.PubSubChannelLayer(**default_channel_layers(url)["default"]["CONFIG"])


class Consumer:
    """What ``hand_over`` asks of a registered consumer: its channel and ``take_direct``."""

    def __init__(self, channel_name):
        self.channel_name = channel_name
        self.loop = asyncio.get_running_loop()
        self.last_seq = 0
        self.taken = []

    async def take_direct(self, event):
        self.taken.append(event)


@contextlib.asynccontextmanager
async def two_processes(own_redis):  # noqa: F811
    sender, receiver = channel_layer(own_redis.url()), channel_layer(own_redis.url())
    try:
        yield sender, receiver
    finally:
        direct.clear()
        await sender.flush()
        await receiver.flush()


async def joined(own_redis, receiver, sid):  # noqa: F811
    """A consumer of the receiver's, in the session's group and registered for direct pushes."""
    consumer = Consumer(await receiver.new_channel())
    await receiver.group_add(groups.session_group(sid), consumer.channel_name)
    direct.register(sid.hex, consumer)
    await eventually(lambda: any(
        sid.hex in n.decode() for n in own_redis.command("PUBSUB", "CHANNELS")))
    return consumer


def push(seq):
    return events.to_message("progress", {"value": seq}, seq, "epoch")


async def test_a_published_push_is_handed_to_the_registered_consumer_not_queued(own_redis):  # noqa: F811
    sid = uuid.uuid4()
    async with two_processes(own_redis) as (sender, receiver):
        consumer = await joined(own_redis, receiver, sid)
        for seq in (1, 2, 3):
            await sender.group_send(groups.session_group(sid), push(seq))
        await eventually(lambda: len(consumer.taken) == 3)
        assert [e["seq"] for e in consumer.taken] == [1, 2, 3]
        loop_layer = receiver._get_layer()
        assert loop_layer.channels[consumer.channel_name].qsize() == 0  # never queued


async def test_what_must_keep_its_place_goes_through_the_queue(own_redis):  # noqa: F811
    sid = uuid.uuid4()
    async with two_processes(own_redis) as (sender, receiver):
        consumer = await joined(own_redis, receiver, sid)
        group = groups.session_group(sid)
        # not a session event: the consumer's dispatch loop handles it, in its place
        await sender.group_send(group, groups.close_event(4000, "bye"))
        await sender.group_send(group, push(1))  # behind the close: queued too
        queue = receiver._get_layer().channels[consumer.channel_name]
        await eventually(lambda: queue.qsize() == 2)
        assert consumer.taken == []
        assert (await receiver.receive(consumer.channel_name))["type"] == "a2ui.close"
        assert (await receiver.receive(consumer.channel_name))["seq"] == 1
        await sender.group_send(group, push(2))  # the queue is empty again: handed over
        await eventually(lambda: len(consumer.taken) == 1)
        assert consumer.taken[0]["seq"] == 2


async def test_unregistered_members_and_direct_delivery_off_are_queued(own_redis, settings):  # noqa: F811
    sid = uuid.uuid4()
    async with two_processes(own_redis) as (sender, receiver):
        consumer = await joined(own_redis, receiver, sid)
        reading_snapshot = await receiver.new_channel()  # in the group, not registered yet
        await receiver.group_add(groups.session_group(sid), reading_snapshot)
        await sender.group_send(groups.session_group(sid), push(1))
        assert (await asyncio.wait_for(receiver.receive(reading_snapshot), 5))["seq"] == 1
        await eventually(lambda: len(consumer.taken) == 1)
        settings.A2UI = {**settings.A2UI, "DIRECT_DELIVERY": False}
        await sender.group_send(groups.session_group(sid), push(2))
        assert (await asyncio.wait_for(receiver.receive(consumer.channel_name), 5))["seq"] == 2
        assert len(consumer.taken) == 1


async def test_a_failing_consumer_does_not_keep_the_push_from_the_others(own_redis):  # noqa: F811
    sid = uuid.uuid4()
    async with two_processes(own_redis) as (sender, receiver):
        broken = await joined(own_redis, receiver, sid)

        async def fails(event):
            raise RuntimeError("a bug of this consumer's")

        broken.take_direct = fails
        other = await joined(own_redis, receiver, sid)
        await sender.group_send(groups.session_group(sid), push(1))
        await eventually(lambda: len(other.taken) == 1)
        await sender.group_send(groups.session_group(sid), push(2))  # the loop lives on
        await eventually(lambda: len(other.taken) == 2)


async def test_publishes_share_the_push_paths_connection(own_redis, settings):  # noqa: F811
    """With the default layer on ``A2UI['REDIS_URL']``, a PUBLISH is one more command on the
    push path's own pipelined connection (written with the sequence numbers of its turn)."""
    settings.A2UI = {**settings.A2UI, "REDIS_URL": own_redis.url()}
    shared._chosen.clear()
    lay = channel_layer(own_redis.url())
    try:
        line = lay._get_layer().publisher()
        assert line is not None and line is shared.hot_line(own_redis.url())
        channel = await lay.new_channel()
        receiving = asyncio.ensure_future(lay.receive(channel))
        await eventually(lambda: any(channel in n.decode()
                                     for n in own_redis.command("PUBSUB", "CHANNELS")))
        await lay.send(channel, {"type": "over.the.line"})
        assert (await asyncio.wait_for(receiving, 5))["type"] == "over.the.line"
    finally:
        await lay.flush()
        shared._chosen.clear()


async def test_without_a_url_redis_py_publishes(own_redis):  # noqa: F811
    config = {**default_channel_layers(own_redis.url())["default"]["CONFIG"]}
    del config["line_urls"]
    lay = layer.PubSubChannelLayer(**config)
    try:
        assert lay._get_layer().publisher() is None
        channel = await lay.new_channel()
        receiving = asyncio.ensure_future(lay.receive(channel))
        await eventually(lambda: any(channel in n.decode()
                                     for n in own_redis.command("PUBSUB", "CHANNELS")))
        await lay.send(channel, {"type": "over.redis.py"})
        assert (await asyncio.wait_for(receiving, 5))["type"] == "over.redis.py"
    finally:
        await lay.flush()


pytestmark = pytest.mark.django_db(transaction=False)


async def test_a_publish_not_waited_for_keeps_its_order_and_a_lost_one_resyncs(
        own_redis, monkeypatch):  # noqa: F811
    """The push path queues its PUBLISH and goes on (``groups.send_group_soon``); the
    publishes keep their order, and one Redis never took makes the session's sockets resync
    (``fanout.repair``)."""
    from a2ui.push import fanout

    sid = uuid.uuid4()
    async with two_processes(own_redis) as (sender, receiver):
        consumer = await joined(own_redis, receiver, sid)
        monkeypatch.setattr(groups, "get_channel_layer", lambda: sender)
        lost = []
        for seq in range(1, 51):
            await groups.send_group_soon(groups.session_group(sid), push(seq), lost.append)
        await eventually(lambda: len(consumer.taken) == 50)
        assert [e["seq"] for e in consumer.taken] == list(range(1, 51)) and lost == []

        repaired = []
        monkeypatch.setattr(fanout, "repair", repaired.append)
        loop_layer = sender._get_layer()
        line = loop_layer.publisher()
        line._protocol.transport.abort()  # the connection dies with the publish written to it
        await fanout.send(sid, 51, None, push(51))
        await eventually(lambda: repaired == [sid])
