"""``a2ui.layer.shards.Shard``: the UNSUBSCRIBEs asked for in one turn go in one command (a mass close
leaves three channels per socket), each caller waits for its own, and a SUBSCRIBE asked for after
an UNSUBSCRIBE of the same channel goes after it (the channel stays subscribed)."""

import asyncio

from a2ui.layer import shards


class PubSub:
    """What the shard sends: the commands, in order."""

    def __init__(self):
        self.sent = []
        self.gate = asyncio.Event()
        self.gate.set()

    async def subscribe(self, *channels):
        self.sent.append(("SUBSCRIBE", *channels))

    async def unsubscribe(self, *channels):
        await self.gate.wait()
        self.sent.append(("UNSUBSCRIBE", *channels))


def shard():
    s = shards.Shard("redis://127.0.0.1:1/0", channel_layer=None)
    s._pubsub = PubSub()
    s._redis = object()  # _ensure_redis: connected already
    s._receive_task = object()  # _ensure_receiver: receiving already
    return s


async def test_unsubscribes_of_one_turn_are_one_command():
    s = shard()
    for name in ("a", "b", "c"):
        await s.subscribe(name)
    await asyncio.gather(s.unsubscribe("a"), s.unsubscribe("b"), s.unsubscribe("a"),
                         s.unsubscribe("never"))
    assert s._pubsub.sent[3:] == [("UNSUBSCRIBE", "a", "b")]
    assert s._subscribed_to == {"c"}


async def test_those_asked_while_one_is_sent_go_in_the_next():
    s = shard()
    for name in ("a", "b", "c"):
        await s.subscribe(name)
    s._pubsub.gate.clear()
    first = asyncio.ensure_future(s.unsubscribe("a"))
    await asyncio.sleep(0.01)  # its UNSUBSCRIBE is being sent
    rest = asyncio.ensure_future(asyncio.gather(s.unsubscribe("b"), s.unsubscribe("c")))
    await asyncio.sleep(0.01)
    assert not first.done() and not rest.done()
    s._pubsub.gate.set()
    await asyncio.wait_for(asyncio.gather(first, rest), 2)
    assert s._pubsub.sent[3:] == [("UNSUBSCRIBE", "a"), ("UNSUBSCRIBE", "b", "c")]
    assert s._subscribed_to == set()


async def test_a_subscribe_after_an_unsubscribe_of_the_channel_goes_after_it():
    s = shard()
    await s.subscribe("g")
    leaving = asyncio.ensure_future(s.unsubscribe("g"))  # the group's last member left ...
    await asyncio.sleep(0)  # (asked for, not sent)
    assert s._pubsub.sent == [("SUBSCRIBE", "g")]
    await s.subscribe("g")  # ... and a new one joined before it was sent
    await asyncio.wait_for(leaving, 2)
    assert s._pubsub.sent == [("SUBSCRIBE", "g"), ("UNSUBSCRIBE", "g"), ("SUBSCRIBE", "g")]
    assert s._subscribed_to == {"g"}


async def test_a_failed_unsubscribe_reaches_its_callers_and_the_next_goes_on():
    s = shard()
    for name in ("a", "b"):
        await s.subscribe(name)
    real = s._pubsub.unsubscribe

    async def failing(*channels):
        s._pubsub.unsubscribe = real
        raise ConnectionError("Redis away")

    s._pubsub.unsubscribe = failing
    done = await asyncio.gather(s.unsubscribe("a"), return_exceptions=True)
    assert isinstance(done[0], ConnectionError) and s._subscribed_to == {"a", "b"}
    await s.unsubscribe("b")
    assert s._pubsub.sent[-1] == ("UNSUBSCRIBE", "b") and s._subscribed_to == {"a"}
