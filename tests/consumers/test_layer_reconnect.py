"""``a2ui.layer.shards``: a subscription that comes back says so, and its receive loop keeps
going through any failed read.

Whatever was published while a process's subscription was away (Redis restarted, failed over,
or dropped the connection) never reaches it, and a socket whose last push was among it has no
later number to show the gap: ``seqwatch`` resyncs such sockets as soon as the subscription is
back (``subscription_restored``) instead of after its grace. Against a redis-server of the
test's own.
"""

import asyncio
import contextlib

import pytest

from a2ui import layer
from a2ui.apps import default_channel_layers
from a2ui.layer import shards
from tests.redisserver import own_redis  # noqa: F401 (fixture)


@pytest.fixture
def restored(monkeypatch):
    calls = []
    monkeypatch.setattr(shards, "subscription_restored", lambda: calls.append(1))
    return calls


def channel_layer(url, shard_kind=shards.LineShard):
    config = default_channel_layers(url)["default"]["CONFIG"]
    if shard_kind is shards.Shard:
        del config["line_urls"]  # what a layer with hosts only redis-py takes runs on
    lay = layer.PubSubChannelLayer(**config)
    assert all(type(s) is shard_kind for s in lay._get_layer()._shards)
    return lay


@pytest.fixture(params=[shards.LineShard, shards.Shard], ids=["line", "redis-py"])
def shard_kind(request):
    return request.param


async def eventually(predicate, seconds=10.0):
    deadline = asyncio.get_running_loop().time() + seconds
    while not predicate():
        assert asyncio.get_running_loop().time() < deadline, "not within the deadline"
        await asyncio.sleep(0.02)


async def subscribed(own_redis, channel):  # noqa: F811
    def named():
        names = own_redis.command("PUBSUB", "CHANNELS")
        return any(channel in n.decode() for n in names)

    await eventually(named)


@contextlib.asynccontextmanager
async def receiving_on(own_redis, shard_kind):  # noqa: F811
    """``(layer, channel, its receive)``, once Redis has the channel subscribed."""
    lay = channel_layer(own_redis.url(), shard_kind)
    try:
        channel = await lay.new_channel()
        receiving = asyncio.ensure_future(lay.receive(channel))
        await subscribed(own_redis, channel)
        yield lay, channel, receiving
    finally:
        await lay.flush()


async def test_a_dropped_subscription_reconnects_subscribes_again_and_says_so(own_redis, restored, shard_kind):  # noqa: F811, E501
    async with receiving_on(own_redis, shard_kind) as (lay, channel, receiving):
        assert restored == []  # the first connection is not a reconnect
        assert own_redis.command("CLIENT", "KILL", "TYPE", "pubsub") == 1
        await eventually(lambda: restored)
        await subscribed(own_redis, channel)  # subscribed again when it said so
        await lay.send(channel, {"type": "after.reconnect"})
        assert (await asyncio.wait_for(receiving, 5))["type"] == "after.reconnect"


async def test_a_restarted_redis_is_back_in_the_subscription_within_the_backoff(own_redis, restored, shard_kind):  # noqa: F811, E501
    async with receiving_on(own_redis, shard_kind) as (lay, channel, receiving):
        await asyncio.to_thread(own_redis.stop)
        await asyncio.sleep(1.5)  # failed reads, the wait growing to its cap
        await asyncio.to_thread(own_redis.start)
        back = asyncio.get_running_loop().time()
        await eventually(lambda: restored)
        # channels-redis waits a fixed second after each failure; here at most the cap.
        assert asyncio.get_running_loop().time() - back < shards.RETRY_CAP_SECONDS + 0.4
        await lay.send(channel, {"type": "after.restart"})
        assert (await asyncio.wait_for(receiving, 5))["type"] == "after.restart"


def test_the_wait_after_failed_reads_doubles_up_to_its_cap():
    waits, delay = [], 0
    for _ in range(6):
        delay = shards.next_retry(delay)
        waits.append(delay)
    assert waits == [0.05, 0.1, 0.2, 0.4, 0.5, 0.5]


class FlakyPubSub:
    """A PubSub whose first reads fail as redis-py's can (``TimeoutError`` included, which
    channels-redis's loop re-raises, ending its receive task for good)."""

    subscribed = True
    connection = None

    def __init__(self, failures):
        self.failures = list(failures)
        self.reads = 0

    async def get_message(self, ignore_subscribe_messages, timeout):
        self.reads += 1
        if self.failures:
            raise self.failures.pop(0)
        await asyncio.sleep(0.01)
        return None


async def test_the_receive_loop_outlives_any_failed_read(monkeypatch):
    monkeypatch.setattr(shards, "RETRY_CAP_SECONDS", 0.01)
    monkeypatch.setattr(shards, "RETRY_FIRST_SECONDS", 0.01)
    shard = shards.Shard({"address": "redis://127.0.0.1:1/0"}, channel_layer=None)
    shard._pubsub = FlakyPubSub([TimeoutError(), ConnectionError("gone"), OSError("reset")])
    task = asyncio.ensure_future(shard._do_receiving())
    try:
        await eventually(lambda: shard._pubsub.reads > 5, seconds=5)
        assert not task.done()
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    assert task.cancelled()
