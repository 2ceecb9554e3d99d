"""``a2ui.layer.subscriber.Subscriber``: one subscribed connection, every message of a read handed
over in order, every channel subscribed again on a new connection. Against a redis-server of
the test's own."""

import asyncio

import redis

from a2ui.layer import subscriber as redissub
from tests.redisserver import own_redis  # noqa: F401 (fixture)


async def eventually(predicate, seconds=10.0):
    deadline = asyncio.get_running_loop().time() + seconds
    while not predicate():
        assert asyncio.get_running_loop().time() < deadline, "not within the deadline"
        await asyncio.sleep(0.02)


def subscriber(url, got, restored):
    return redissub.Subscriber(url, lambda channel, data: got.append((channel, data)),
                               lambda: restored.append(1), lambda delay: 0.05, timeout=5)


async def test_every_message_of_a_burst_arrives_in_order_as_bytes(own_redis):  # noqa: F811
    got, restored = [], []
    sub = subscriber(own_redis.url(), got, restored)
    client = redis.Redis.from_url(own_redis.url())
    try:
        for name in ("a", "b"):
            await sub.subscribe(name)
        pipe = client.pipeline(transaction=False)
        for n in range(500):  # many messages per read
            pipe.publish("a" if n % 2 else "b", b"\x00\xff" + str(n).encode())
        pipe.execute()
        await eventually(lambda: len(got) == 500)
        assert got == [("a" if n % 2 else "b", b"\x00\xff" + str(n).encode())
                       for n in range(500)]
        await sub.unsubscribe("a")
        client.publish("a", b"gone")
        client.publish("b", b"still")
        await eventually(lambda: len(got) == 501)
        assert got[-1] == ("b", b"still") and restored == []
    finally:
        sub.close()
        client.close()


async def test_a_failing_receiver_does_not_stop_the_reads(own_redis):  # noqa: F811
    got = []

    def receive(channel, data):
        if data == b"bad":
            raise ValueError("one receiver's bug")
        got.append(data)

    sub = redissub.Subscriber(own_redis.url(), receive, lambda: None, lambda d: 0.05, 5)
    client = redis.Redis.from_url(own_redis.url())
    try:
        await sub.subscribe("c")
        for data in (b"1", b"bad", b"2"):
            client.publish("c", data)
        await eventually(lambda: got == [b"1", b"2"])
    finally:
        sub.close()
        client.close()


async def test_a_lost_connection_comes_back_with_every_channel_and_says_so(own_redis):  # noqa: F811
    got, restored = [], []
    sub = subscriber(own_redis.url(), got, restored)
    client = redis.Redis.from_url(own_redis.url())
    try:
        for name in ("x", "y", "z"):
            await sub.subscribe(name)
        assert client.client_kill_filter(_type="pubsub") == 1
        await eventually(lambda: restored == [1])
        await eventually(lambda: client.pubsub_numsub("x", "y", "z") == [
            (b"x", 1), (b"y", 1), (b"z", 1)])
        client.publish("z", b"after")
        await eventually(lambda: got == [("z", b"after")])
        await asyncio.to_thread(own_redis.stop)  # away for a while: it keeps trying
        await asyncio.sleep(0.5)
        await asyncio.to_thread(own_redis.start)
        await eventually(lambda: restored == [1, 1])
        redis.Redis.from_url(own_redis.url()).publish("x", b"back")
        await eventually(lambda: got[-1] == ("x", b"back"))
    finally:
        sub.close()
        client.close()
