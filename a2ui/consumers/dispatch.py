"""A consumer's loop over its two sources (the client's socket and its channel), without a task
and a wait per message.

Channels' ``await_many_dispatch`` makes a new task for the next ``receive()`` after every
message and waits on both sources with ``asyncio.wait`` (a future and two done-callbacks): about
10-15 us per message, paid by every frame an agent sends. Here the next ``receive()`` is run at
once (``a2ui.consumers.eager``): when a message is already queued it comes back in the same turn and
is dispatched; only a receive that has to wait becomes a task, and only then does the loop wait.
Messages are dispatched one at a time, in each source's order, as Channels does; a source whose
message is ready is not starved by the other (each pass takes what both have ready).
"""

import asyncio
import functools

from asgiref.sync import async_to_sync
from channels.exceptions import StopConsumer
from channels.layers import get_channel_layer

from a2ui.consumers import eager


async def dispatch_many(sources, dispatch):
    """Pass the messages of ``sources`` (coroutine functions, each returning the next message)
    to ``await dispatch(message)`` until it raises; the sources' pending receives are then
    cancelled."""
    tasks = [None] * len(sources)
    ready = []
    try:
        while True:
            for i, source in enumerate(sources):
                if tasks[i] is None:
                    done, value = eager.run(source())
                    if done:
                        ready.append(value)
                    else:
                        tasks[i] = value
                elif tasks[i].done():
                    task, tasks[i] = tasks[i], None
                    ready.append(task.result())
            if not ready:
                await asyncio.wait([t for t in tasks if t is not None],
                                   return_when=asyncio.FIRST_COMPLETED)
                continue
            for message in ready:
                await dispatch(message)
            ready.clear()
    finally:
        for task in tasks:
            if task is not None:
                task.cancel()
                try:
                    await task
                except asyncio.CancelledError:
                    pass


async def run_consumer(consumer, scope, receive, send):
    """``channels.consumer.AsyncConsumer.__call__`` with :func:`dispatch_many` as its loop."""
    consumer.scope = scope
    consumer.channel_layer = get_channel_layer(consumer.channel_layer_alias)
    if consumer.channel_layer is not None:
        consumer.channel_name = await consumer.channel_layer.new_channel()
        consumer.channel_receive = functools.partial(consumer.channel_layer.receive,
                                                     consumer.channel_name)
    consumer.base_send = async_to_sync(send) if consumer._sync else send
    sources = [receive] if consumer.channel_layer is None else [receive,
                                                                 consumer.channel_receive]
    try:
        await dispatch_many(sources, consumer.dispatch)
    except StopConsumer:
        pass
