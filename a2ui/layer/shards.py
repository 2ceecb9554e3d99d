"""The channel layer's connections to Redis, one per shard of a loop's layer
(``a2ui.layer.LeanLoopLayer``).

* :class:`LineShard` (the default layer, whose URL ``redisline`` takes): subscriptions on one
  ``a2ui.layer.subscriber.Subscriber`` connection, each chunk read handed over message by message
  in the connection's own callback; publishes go through the layer's pipelined connection.
* :class:`Shard`: channels-redis's redis-py shard (its ``PubSub`` read one message per call),
  for hosts only redis-py takes, with the same reconnect rules.

Either says when its subscription comes back (:func:`subscription_restored`): whatever was
published while it was away never reached this process, and ``a2ui.consumers.seqwatch``
resyncs the sockets that miss a number at once instead of after its grace.
"""

import asyncio
import logging
import time

from channels_redis import pubsub

from a2ui.layer.subscriber import Subscriber

#: channels-redis's own logger: ``a2ui.apps`` filters its outage tracebacks to one line.
layer_log = logging.getLogger("channels_redis.pubsub")


#: The receive loop's wait after a failed read, doubled on each failure up to the cap
#: (channels-redis waits 1 s each time: up to a second more before a subscription comes back
#: after a restart or a failover).
RETRY_FIRST_SECONDS = 0.05
RETRY_CAP_SECONDS = 0.5
#: A failed read is logged at most this often (channels-redis logs one a second).
LOG_EVERY_SECONDS = 1.0


def _retrieved(future):
    if not future.cancelled():
        future.exception()  # a caller that went is not reported as an unretrieved failure


def next_retry(delay):
    """The wait after a failed read that followed a wait of ``delay`` (0: none yet)."""
    return min(max(delay * 2, RETRY_FIRST_SECONDS), RETRY_CAP_SECONDS)


def subscription_restored():
    """This loop's subscription reconnected (its channels subscribed again)."""
    from a2ui.consumers import seqwatch

    seqwatch.subscription_restored()


class Shard(pubsub.RedisSingleShardConnection):
    """channels-redis's shard, whose subscription says when it comes back.

    redis-py reconnects a ``PubSub`` in place and subscribes its channels again, inside a read
    (its retry) or on the next one after a failed read: either way through the connection's
    connect callbacks, where this one is registered after redis-py's own (so the channels are
    subscribed again before it runs). It calls :func:`subscription_restored`. A connection that
    is replaced by a new one counts as well.

    The receive loop is channels-redis's with a short backoff after a failure
    (:func:`next_retry`) instead of a fixed second, and a ``TimeoutError`` from a read counted
    as a failure (channels-redis re-raises it, which ends its receive task for good: nothing
    subscribed would be received again).
    """

    def __init__(self, host, channel_layer):
        super().__init__(host, channel_layer)
        self._watched = None  # the PubSub connection whose reconnects call _reconnected
        self._unsubscribing = []  # (channel, future) of the UNSUBSCRIBEs asked for, not sent
        self._unsubscriber = None

    async def subscribe(self, channel):
        await self._unsubscribe_pending()  # an UNSUBSCRIBE asked for before goes first
        await super().subscribe(channel)
        self._watch_connection()

    async def unsubscribe(self, channel):
        """channels-redis's, the channels asked for in one turn (or while the last UNSUBSCRIBE
        was being sent) in one command: a closing socket leaves its own channel and its
        token's and session's groups, three commands through redis-py each (its lock, retry
        wrapper, encoding and a write) when 10,000 sockets close at once. The caller waits for
        its channel's; a SUBSCRIBE asked for later goes after it."""
        await self.unsubscribe_soon(channel)

    def unsubscribe_soon(self, channel):
        """:meth:`unsubscribe` asked for now: the future of its UNSUBSCRIBE (a caller that stops
        waiting for it does not take the channel out)."""
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        future.add_done_callback(_retrieved)
        self._unsubscribing.append((channel, future))
        if self._unsubscriber is None or self._unsubscriber.done():
            self._unsubscriber = loop.create_task(self._unsubscribe_pending())
        return future

    async def _unsubscribe_pending(self):
        while self._unsubscribing:
            batch, self._unsubscribing = self._unsubscribing, []
            async with self._lock:
                names = list(dict.fromkeys(c for c, _ in batch if c in self._subscribed_to))
                try:
                    if names:
                        self._ensure_redis()
                        self._ensure_receiver()
                        await self._pubsub.unsubscribe(*names)
                        self._subscribed_to.difference_update(names)
                except Exception as exc:
                    for _, future in batch:
                        if not future.done():
                            future.set_exception(exc)
                    continue
            for _, future in batch:
                if not future.done():
                    future.set_result(None)

    def _watch_connection(self):
        connection = getattr(self._pubsub, "connection", None)
        if connection is None or connection is self._watched:
            return
        replaced, self._watched = self._watched is not None, connection
        connection.register_connect_callback(self._reconnected)
        if replaced:
            subscription_restored()

    def _reconnected(self, connection):
        if connection is self._watched and self._pubsub is not None and self._pubsub.subscribed:
            subscription_restored()

    async def flush(self):
        await super().flush()
        self._watched = None

    def _receive_message(self, message):
        if message is not None:
            name = message["channel"]
            self.channel_layer.received(name.decode() if isinstance(name, bytes) else name,
                                        message["data"])

    async def _do_receiving(self):
        delay, logged = 0, -LOG_EVERY_SECONDS
        while True:
            try:
                if self._pubsub and self._pubsub.subscribed:
                    message = await self._pubsub.get_message(
                        ignore_subscribe_messages=True, timeout=0.1)
                    self._watch_connection()
                    self._receive_message(message)
                else:
                    await asyncio.sleep(0.1)
                delay = 0
            except asyncio.CancelledError:
                raise
            except Exception:  # Redis away (a2ui.apps makes each record one line)
                now = time.monotonic()
                if now - logged >= LOG_EVERY_SECONDS:  # as often as channels-redis's loop
                    logged = now
                    layer_log.exception("Unexpected exception in receive task")
                delay = next_retry(delay)
                await asyncio.sleep(delay)


class LineShard:
    """A shard whose subscription is one ``subscriber.Subscriber`` connection (no redis-py).

    Each message read is handed to the loop's layer at once (``LeanLoopLayer.received``); a
    lost connection is revived at once, then after :func:`next_retry`'s waits, with every
    channel subscribed again, and says so (:func:`subscription_restored`)."""

    def __init__(self, url, channel_layer, timeout):
        self.host = url
        self.channel_layer = channel_layer
        self.timeout = timeout
        self._subscriber = self._new_subscriber()

    def _new_subscriber(self):
        return Subscriber(self.host, self.channel_layer.received,
                          lambda: subscription_restored(), next_retry, self.timeout)

    @property
    def _subscribed_to(self):
        """The channels subscribed (what grows with the sockets: ``memory.shrink``)."""
        return self._subscriber.channels

    async def subscribe(self, channel):
        await self._subscriber.subscribe(channel)

    async def unsubscribe(self, channel):
        await self._subscriber.unsubscribe(channel)

    def unsubscribe_soon(self, channel):
        """The future of the channel's UNSUBSCRIBE, queued now on the subscribed connection
        (the UNSUBSCRIBEs of one turn go out in one write, with no task each)."""
        return self._subscriber.unsubscribe_soon(channel)

    async def flush(self):
        self._subscriber.close()
        self._subscriber = self._new_subscriber()
