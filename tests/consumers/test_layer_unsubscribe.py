"""``a2ui.layer.LeanLoopLayer``: a consumer's channel is unsubscribed even when the consumer is
cancelled twice (its receive, then Daphne's cancel of an application still running 10 s after
its client left), which left channels-redis's own clean-up halfway: the channel subscribed in
Redis and named in the shard's set for the process's life."""

import asyncio

import pytest

from a2ui import layer
from a2ui.infra import memory
from a2ui.layer import shards


class Shard:
    """A shard whose UNSUBSCRIBE waits, as one queued behind thousands under a mass close."""

    def __init__(self):
        self.subscribed, self.unsubscribed = [], []
        self.gate = asyncio.Event()

    async def subscribe(self, channel):
        self.subscribed.append(channel)

    async def unsubscribe(self, channel):
        await self.gate.wait()
        self.unsubscribed.append(channel)


class ChannelLayer:
    def deserialize(self, message):
        return message


def loop_layer(shard):
    lay = layer.LeanLoopLayer(hosts=["redis://127.0.0.1:1/0"], channel_layer=ChannelLayer())
    lay._get_shard = lambda name: shard
    return lay


async def settle():
    for _ in range(5):
        await asyncio.sleep(0)


async def test_a_receive_cancelled_twice_still_unsubscribes_its_channel():
    shard = Shard()
    lay = loop_layer(shard)
    names = [f"asgispecific.{n}" for n in range(3)]
    receives = [asyncio.ensure_future(lay.receive(name)) for name in names]
    await settle()
    assert shard.subscribed == names
    finishing = memory.counts.finishing
    for task in receives:
        task.cancel()
    await settle()
    for task in receives:  # Daphne's cancel, while the unsubscribes still wait
        task.cancel()
    await asyncio.gather(*receives, return_exceptions=True)
    assert all(task.cancelled() for task in receives)
    assert lay.channels == {}
    assert memory.counts.finishing == finishing + 1  # the collection waits for the layer
    shard.gate.set()
    await asyncio.wait_for(lay._leaver, 2)
    assert shard.unsubscribed == names
    assert memory.counts.finishing == finishing


async def test_a_message_is_received_as_before():
    shard = Shard()
    lay = loop_layer(shard)
    receive = asyncio.ensure_future(lay.receive("asgispecific.m"))
    await settle()
    lay.channels["asgispecific.m"].put_nowait({"type": "hello"})
    assert await asyncio.wait_for(receive, 1) == {"type": "hello"}
    assert "asgispecific.m" in lay.channels and shard.unsubscribed == []


async def test_a_failed_unsubscribe_is_logged_and_the_rest_go_on(caplog):
    class Failing(Shard):
        async def unsubscribe(self, channel):
            if channel.endswith("0"):
                raise ConnectionError("Redis away")
            self.unsubscribed.append(channel)

    shard = Failing()
    lay = loop_layer(shard)
    receives = [asyncio.ensure_future(lay.receive(f"asgispecific.{n}")) for n in range(2)]
    await settle()
    for task in receives:
        task.cancel()
    await asyncio.gather(*receives, return_exceptions=True)
    with caplog.at_level("WARNING", logger="a2ui.layer"):
        await asyncio.wait_for(lay._leaver, 2)
    assert shard.unsubscribed == ["asgispecific.1"]
    assert "1 channel(s) not unsubscribed (Redis away)" in caplog.text


def test_the_stock_layer_leaves_the_cleanup_to_the_cancelled_receive():
    """What the override is for: channels-redis awaits the unsubscribe in the receive."""
    from channels_redis.pubsub import RedisPubSubLoopLayer

    assert "unsubscribe" in RedisPubSubLoopLayer.receive.__code__.co_names
    assert layer.LeanLoopLayer.receive is not RedisPubSubLoopLayer.receive


@pytest.fixture(autouse=True)
def _no_collection(monkeypatch):
    monkeypatch.setattr(memory, "collect", lambda: None)


@pytest.fixture
def redis_server():
    from tests.redisserver import RedisServer

    server = RedisServer().start()
    yield server
    server.stop()


@pytest.mark.parametrize("shard_kind", [shards.LineShard, shards.Shard])
async def test_on_redis_a_channel_cancelled_twice_leaves_no_subscription(redis_server, shard_kind):
    """The same on a real Redis, with either shard: the redis-py one's unsubscribe waits for
    its lock (held here, as thousands of others hold it under a mass close) while the receive
    is cancelled twice; the subscribed connection's queues behind the others on its line."""
    import contextlib

    import redis.asyncio as aioredis

    from a2ui.apps import default_channel_layers

    config = default_channel_layers(redis_server.url(0))["default"]["CONFIG"]
    if shard_kind is shards.Shard:
        del config["line_urls"]  # what a layer with hosts only redis-py takes runs on
    lay = layer.PubSubChannelLayer(**config)
    client = aioredis.Redis.from_url(redis_server.url(0))
    try:
        name = await lay.new_channel()
        loop_layer = lay._get_layer()
        shard = loop_layer._get_shard(name)
        receive = asyncio.ensure_future(lay.receive(name))
        await asyncio.sleep(0.2)
        assert dict(await client.pubsub_numsub(name)) == {name.encode(): 1}
        assert type(shard) is shard_kind
        async with getattr(shard, "_lock", None) or contextlib.nullcontext():
            receive.cancel()
            await settle()
            receive.cancel()  # Daphne's
            await asyncio.gather(receive, return_exceptions=True)
        if loop_layer._leaver is not None:
            await asyncio.wait_for(loop_layer._leaver, 5)
        # UNSUBSCRIBE is sent, not awaited (its confirmation comes on the subscriber's
        # connection): Redis counts it within moments, or never (the stock clean-up)
        for _ in range(50):
            if dict(await client.pubsub_numsub(name)) == {name.encode(): 0}:
                break
            await asyncio.sleep(0.1)
        assert dict(await client.pubsub_numsub(name)) == {name.encode(): 0}
        assert name not in shard._subscribed_to and name not in loop_layer.channels
    finally:
        await client.aclose()
        await lay.flush()


@pytest.mark.parametrize("shard_kind", [shards.LineShard, shards.Shard])
def test_a_loop_ending_with_a_receive_pending_leaves_nothing_behind(redis_server, shard_kind):
    """A loop of its own (``async_to_sync``'s, ``asyncio.run``'s) ends with a receive still
    waiting: its cancel queues the channel's unsubscribe while the loop closes, and the
    layer's flush at the close must finish that, not leave a pending task and an unretrieved
    future to be logged whenever the collector finds them (as they were, in another test)."""
    import gc

    from a2ui.apps import default_channel_layers

    config = default_channel_layers(redis_server.url(0))["default"]["CONFIG"]
    if shard_kind is shards.Shard:
        del config["line_urls"]
    lay = layer.PubSubChannelLayer(**config)
    left = []

    async def main():
        loop = asyncio.get_running_loop()
        loop.set_exception_handler(lambda _, context: left.append(context["message"]))
        name = await lay.new_channel()
        asyncio.ensure_future(lay.receive(name))  # still waiting when main returns
        await asyncio.sleep(0.2)
        return lay._get_layer()

    loop_layer = asyncio.run(main())
    gc.collect()
    assert left == []
    assert loop_layer._leaver is None or loop_layer._leaver.done()
