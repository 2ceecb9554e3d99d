"""``a2ui.consumers.dispatch.dispatch_many``: Channels' loop over a consumer's two sources, the
same order and ending, without a task and a wait per message."""

import asyncio

import pytest
from channels.exceptions import StopConsumer

from a2ui.consumers.dispatch import dispatch_many


class Source:
    def __init__(self):
        self.queue = asyncio.Queue()

    async def receive(self):
        return await self.queue.get()


async def test_each_source_in_its_order_and_neither_starves():
    socket, layer = Source(), Source()
    for n in range(50):
        socket.queue.put_nowait(("socket", n))
    layer.queue.put_nowait(("layer", 0))
    got = []

    async def dispatch(message):
        got.append(message)
        if len(got) == 51:
            raise StopConsumer

    with pytest.raises(StopConsumer):
        await dispatch_many([socket.receive, layer.receive], dispatch)
    assert [m for m in got if m[0] == "socket"] == [("socket", n) for n in range(50)]
    assert got.index(("layer", 0)) <= 1  # ready at the start: taken in the first pass


async def test_messages_that_come_later_wake_it_and_nothing_is_left_pending():
    socket, layer = Source(), Source()
    got = []
    before = len(asyncio.all_tasks())

    async def dispatch(message):
        got.append(message)
        if message == "stop":
            raise StopConsumer

    loop = asyncio.get_running_loop()
    loop.call_later(0.01, layer.queue.put_nowait, "from the layer")
    loop.call_later(0.02, socket.queue.put_nowait, "from the socket")
    loop.call_later(0.03, socket.queue.put_nowait, "stop")
    with pytest.raises(StopConsumer):
        await asyncio.wait_for(dispatch_many([socket.receive, layer.receive], dispatch), 2)
    assert got == ["from the layer", "from the socket", "stop"]
    await asyncio.sleep(0)
    assert len(asyncio.all_tasks()) == before  # the receives still waiting were cancelled


async def test_no_task_is_made_while_messages_are_queued(monkeypatch):
    socket, layer = Source(), Source()
    for n in range(100):
        socket.queue.put_nowait(n)
    made = []
    loop = asyncio.get_running_loop()
    real = loop.create_task
    monkeypatch.setattr(loop, "create_task", lambda *a, **k: made.append(1) or real(*a, **k))
    count = []

    async def dispatch(message):
        count.append(message)
        if len(count) == 100:
            raise StopConsumer

    with pytest.raises(StopConsumer):
        await dispatch_many([socket.receive, layer.receive], dispatch)
    assert count == list(range(100))
    assert len(made) == 1  # the layer's one receive that had to wait
