"""Two sites on one Redis server, in different databases, do not hear each other's group sends:
Redis PUBLISH channels are not scoped by database number (a2ui.apps.pubsub_prefix)."""

import asyncio

import pytest

from a2ui.apps import default_channel_layers, pubsub_prefix
from tests.redisserver import RedisServer


def test_prefix_names_the_database():
    assert pubsub_prefix("redis://127.0.0.1:6379") == "asgi"
    assert pubsub_prefix("redis://127.0.0.1:6379/0") == "asgi"
    assert pubsub_prefix("redis://127.0.0.1:6379/5") == "asgi.db5"
    assert pubsub_prefix("unix:///run/redis.sock?db=3") == "asgi.db3"
    assert pubsub_prefix("rediss://u:p@host:6380/12") == "asgi.db12"


@pytest.fixture
def redis_server():
    server = RedisServer().start()
    yield server
    server.stop()


def _layer(url):
    from channels_redis.pubsub import RedisPubSubChannelLayer

    config = default_channel_layers(url)["default"]["CONFIG"]
    return RedisPubSubChannelLayer(**config)


async def test_databases_of_one_server_do_not_share_groups(redis_server):
    one, two = _layer(redis_server.url(1)), _layer(redis_server.url(2))
    try:
        channel_one, channel_two = await one.new_channel(), await two.new_channel()
        await one.group_add("a2ui.s.same-name", channel_one)
        await two.group_add("a2ui.s.same-name", channel_two)
        await asyncio.sleep(0.2)  # subscriptions settle
        await one.group_send("a2ui.s.same-name", {"type": "a2ui.event", "site": 1})
        assert (await asyncio.wait_for(one.receive(channel_one), 5))["site"] == 1
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(two.receive(channel_two), 1)
    finally:
        await one.flush()
        await two.flush()
