"""``a2ui.leanqueue.LeanQueue``: an ``asyncio.Queue`` without its four empty deques (every idle
socket holds two queues: Daphne's input queue and the channel layer's)."""

import asyncio
import collections
import sys

import pytest

from a2ui.leanqueue import LeanQueue


def waiter_deques(queue):
    return [v for v in (queue._getters, queue._putters, queue._finished._waiters)
            if isinstance(v, collections.deque)]


def test_waiters_are_lean_and_items_a_deque():
    lean, plain = LeanQueue(), asyncio.Queue()
    assert waiter_deques(lean) == [] and len(waiter_deques(plain)) == 3
    size = sum(sys.getsizeof(v) for v in (lean._getters, lean._putters))
    assert size < sys.getsizeof(collections.deque())
    # the items: a deque, however many (a burst for a slow socket drains in linear time)
    for k in range(1000):
        lean.put_nowait(k)
    assert isinstance(lean._queue, collections.deque) and lean.get_nowait() == 0


async def test_behaves_as_a_queue():
    q = LeanQueue()
    getter = asyncio.ensure_future(q.get())
    await asyncio.sleep(0)
    q.put_nowait(1)
    q.put_nowait(2)
    assert await getter == 1 and q.get_nowait() == 2 and q.empty()
    # a cancelled getter leaves the queue usable
    waiting = asyncio.ensure_future(q.get())
    await asyncio.sleep(0)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    q.put_nowait(3)
    assert await q.get() == 3
    q.task_done(), q.task_done(), q.task_done()
    await asyncio.wait_for(q.join(), 1)


async def test_bounded_queue_puts_wait():
    q = LeanQueue(maxsize=1)
    q.put_nowait("a")
    putter = asyncio.ensure_future(q.put("b"))
    await asyncio.sleep(0)
    assert not putter.done()
    assert q.get_nowait() == "a"
    await asyncio.wait_for(putter, 1)
    assert q.get_nowait() == "b"


def test_daphne_and_the_layer_use_it():
    from a2ui import layer
    from a2ui.serving import A2UIServer

    assert "LeanQueue" in A2UIServer.create_application.__code__.co_names
    assert "LeanQueue" in layer.LeanLoopLayer._subscribe_to_channel.__code__.co_names
    probe = layer.PubSubChannelLayer.__new__(layer.PubSubChannelLayer)
    assert probe._loop_layer_class() is layer.LeanLoopLayer


def test_channels_redis_still_has_what_the_layer_overrides():
    """a2ui.layer subclasses private parts of channels-redis's PubSub layer: if an upgrade
    removed them, the layer falls back to the stock one (this test says which is missing)."""
    from a2ui import layer

    assert layer.missing_internals() == [], (
        f"channels_redis.pubsub lost {layer.missing_internals()}: a2ui.layer falls back to "
        "the stock RedisPubSubChannelLayer (no lean channel queues); update a2ui/layer.py")


def test_the_layer_falls_back_when_internals_are_missing(monkeypatch):
    from channels_redis import pubsub

    from a2ui import layer

    monkeypatch.delattr(pubsub.RedisPubSubLoopLayer, "_subscribe_to_channel")
    assert layer.missing_internals() == ["RedisPubSubLoopLayer._subscribe_to_channel"]
    probe = layer.PubSubChannelLayer.__new__(layer.PubSubChannelLayer)
    probe._args, probe._kwargs, probe._layers = (), {}, {}
    assert probe._loop_layer_class() is pubsub.RedisPubSubLoopLayer
