"""The default channel layer with Redis (``a2ui.apps.default_channel_layers``): channels-redis's
PUBLISH/SUBSCRIBE layer, each channel's queue a ``LeanQueue`` (``a2ui.leanqueue``: every idle
socket holds one).

Each shard's subscription says when it reconnects (:class:`Shard`): whatever was published while
it was away never reached this process, and ``a2ui.consumers.seqwatch`` resyncs the sockets that
miss a number at once instead of after its grace.

It overrides private parts of channels-redis 4.x (``RedisPubSubLoopLayer._subscribe_to_channel``
and ``.channels``, ``RedisPubSubChannelLayer._get_layer`` and ``._layers``,
``RedisSingleShardConnection._do_receiving``, ``._receive_message``, ``._ensure_redis``,
``._ensure_receiver``, ``._lock``, ``._subscribed_to`` and ``._pubsub``,
``channels_redis.utils._wrap_close``). Should an upgrade remove any of them, the stock loop
layer is used (plain ``asyncio.Queue`` per channel), with one WARNING; tests/consumers/test_leanqueue.py
names what is missing.
"""

import asyncio
import collections
import logging
import time

from channels_redis import pubsub, utils
from channels_redis.pubsub import RedisPubSubChannelLayer, RedisPubSubLoopLayer

from a2ui.core import events
from a2ui.infra import eager, groups, memory, redisline, shared
from a2ui.leanqueue import LeanQueue
from a2ui.push import direct

log = logging.getLogger("a2ui.layer")
#: channels-redis's own logger: ``a2ui.apps`` filters its outage tracebacks to one line.
layer_log = logging.getLogger("channels_redis.pubsub")


def missing_internals():
    """The channels-redis members this module relies on that are not there (names)."""
    wanted = [(pubsub.RedisPubSubLoopLayer, "_subscribe_to_channel"),
              (pubsub.RedisPubSubLoopLayer, "_get_shard"),
              (pubsub.RedisPubSubChannelLayer, "_get_layer"),
              (pubsub.RedisSingleShardConnection, "_do_receiving"),
              (pubsub.RedisSingleShardConnection, "_receive_message"),
              (pubsub.RedisSingleShardConnection, "_ensure_redis"),
              (pubsub.RedisSingleShardConnection, "_ensure_receiver"),
              (utils, "_wrap_close")]
    return [f"{getattr(owner, '__name__', owner)}.{name}" for owner, name in wanted
            if not hasattr(owner, name)]


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
        if message is None:
            return
        name = message["channel"]
        if isinstance(name, bytes):
            name = name.decode()
        layer = self.channel_layer
        if not (name.startswith(layer.session_groups) and layer.hand_over(name, message["data"])):
            super()._receive_message(message)

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


class LeanLoopLayer(RedisPubSubLoopLayer):
    """The loop's layer: a ``LeanQueue`` per channel, and a channel's UNSUBSCRIBE done by the
    layer, not by the consumer whose receive was cancelled.

    channels-redis unsubscribes a consumer's channel inside that consumer's cancelled
    ``receive``, waiting for the shard's lock behind every other subscribe and unsubscribe of
    the process. Under a mass close Daphne cancels the applications still running 10 s after
    their client left (``--application-close-timeout``), and that second cancel lands in the
    wait: the channel stayed subscribed in Redis and named in the shard's set for the process's
    life (9,924 of 10,000 channels after a mass close of 10,000 sockets, each name pinning a page
    of freed memory: docs/performance.md, "Memory after close"). Here the consumer's receive
    hands the channel to the layer and ends at once; one task of the layer's unsubscribes the
    channels handed to it, in order (``a2ui.infra.memory`` waits for it before collecting).
    """

    def __init__(self, *args, line_url=None, **kwargs):
        super().__init__(*args, **kwargs)
        self._shards = [Shard(shard.host, self) for shard in self._shards]
        self._leaving = collections.deque()
        self._leaver = None
        #: Publishes go through the loop's pipelined connection to this URL (one shard only).
        self._line_url = line_url if len(self._shards) == 1 else None
        self._line = None  # the Line, once asked for; False: none (redis-py publishes)
        self._own_line = False  # the Line is this layer's (not the push path's): it closes it

    # Publishing ------------------------------------------------------------------------------

    def publisher(self):
        """The ``redisline.Line`` this loop publishes through, or None (the shard's redis-py
        client). With the default layer it is the connection the push path's sequence numbers
        use (``shared.line``), so a push's PUBLISH goes out in the same write as the commands
        of the pushes beside it: no lock, no second connection, one system call per turn."""
        if self._line is None:
            line = shared.hot_line(self._line_url) if self._line_url else None
            if line is None and self._line_url:
                try:
                    line = redisline.Line(self._line_url, shared.REDIS_TIMEOUT_SECONDS)
                    self._own_line = True
                except ValueError:  # a URL only redis-py takes (unix://)
                    line = None
            self._line = line or False
        return self._line or None

    async def publish(self, channel, data):
        """PUBLISH ``data`` (serialized) to ``channel``, in the order of this loop's publishes."""
        line = self.publisher()
        if line is None:
            await self._get_shard(channel).publish(channel, data)
        else:
            await line.execute(("PUBLISH", channel, data))

    async def send(self, channel, message):
        await self.publish(channel, self.channel_layer.serialize(message))

    async def group_send(self, group, message):
        await self.publish(self._get_group_channel_name(group),
                           self.channel_layer.serialize(message))

    async def flush(self):
        await super().flush()
        line, self._line = self._line, None
        if line and self._own_line:
            line.close()
        self._own_line = False

    # Receiving -------------------------------------------------------------------------------

    def hand_over(self, name, data):
        """Deliver a message published to a session's group (``name``, its Redis channel) to
        the consumers here registered for direct pushes (``a2ui.push.direct``) the way a push
        from this process reaches them: deserialized once, handed to each consumer's
        ``take_direct`` at once (``a2ui.infra.eager``), without its channel's queue and
        dispatch loop (a task, a wait and a deserialization per socket per push).

        A consumer whose queue holds anything gets it queued behind that, as do consumers not
        registered (still reading the snapshot) and any message that is not a session event
        (closes, consent changes). Returns False when nothing was handed over (the caller
        queues the message for every member as channels-redis does)."""
        members = self.groups.get(name)
        if not members:
            return False
        consumers = direct.consumers_of(name[len(self.session_groups):])
        if not consumers:
            return False
        message = self.channel_layer.deserialize(data)
        if message.get("type") != events.MESSAGE_TYPE:
            return False
        by_channel = {getattr(c, "channel_name", None): c for c in consumers}
        for channel in list(members):
            queue = self.channels.get(channel)
            if queue is None:
                continue
            consumer = by_channel.get(channel)
            if consumer is None or queue.qsize():
                queue.put_nowait(data)
            else:
                try:
                    eager.start(consumer.take_direct(message))
                except Exception:  # the consumer's own failure: the other members still get it
                    log.exception("a2ui: handing a push to %s failed", channel)
        return True

    @property
    def session_groups(self):
        """The Redis channel name of every session group starts so."""
        prefix = self.__dict__.get("_session_groups")
        if prefix is None:
            prefix = self._session_groups = self._get_group_channel_name(
                groups.SESSION_GROUP_PREFIX)
        return prefix

    # Subscribing -----------------------------------------------------------------------------

    async def _subscribe_to_channel(self, channel):
        self.channels[channel] = LeanQueue()
        shard = self._get_shard(channel)
        await shard.subscribe(channel)

    async def receive(self, channel):
        """``RedisPubSubLoopLayer.receive``, the clean-up of a cancelled receive left to the
        layer (:meth:`_unsubscribe_later`)."""
        if channel not in self.channels:
            await self._subscribe_to_channel(channel)
        queue = self.channels[channel]
        try:
            message = await queue.get()
        except (TimeoutError, asyncio.CancelledError, GeneratorExit):
            # As channels-redis assumes: a consumer's receive is cancelled when it exits.
            if self.channels.pop(channel, None) is not None:
                self._unsubscribe_later(channel)
            raise
        return self.channel_layer.deserialize(message)

    def _unsubscribe_later(self, channel):
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # a coroutine closed after its loop ended: nothing to tell Redis
            return
        self._leaving.append(channel)
        if self._leaver is None or self._leaver.done():
            self._leaver = loop.create_task(self._unsubscribe_leaving())
            memory.finishing(self._leaver)

    def _unsubscribe_soon(self, channel):
        shard = self._get_shard(channel)
        if isinstance(shard, Shard):
            return shard.unsubscribe_soon(channel)
        return asyncio.ensure_future(shard.unsubscribe(channel))

    async def _unsubscribe_leaving(self):
        failed, last = 0, None
        while self._leaving:
            channels = list(self._leaving)
            self._leaving.clear()
            done = await asyncio.gather(  # one UNSUBSCRIBE for them all (Shard.unsubscribe)
                *(self._unsubscribe_soon(channel) for channel in channels),
                return_exceptions=True)
            for exc in done:  # Redis away: it stays subscribed, as channels-redis leaves a
                if isinstance(exc, Exception):  # channel whose unsubscribe failed; said once
                    failed += 1
                    last = exc
        if failed:
            log.warning("a2ui: %d channel(s) not unsubscribed (%s)", failed, last)


class PubSubChannelLayer(RedisPubSubChannelLayer):
    """``channels_redis.pubsub.RedisPubSubChannelLayer`` with a ``LeanLoopLayer`` per loop."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        memory.watch("channels_redis", self)  # its tables shrunk at the collection

    def _loop_layer_class(self):
        missing = missing_internals()
        if missing:
            if not getattr(PubSubChannelLayer, "_warned", False):
                PubSubChannelLayer._warned = True
                log.warning("a2ui: channels_redis lacks %s: the stock PubSub layer is used",
                            ", ".join(missing))
            return RedisPubSubLoopLayer
        return LeanLoopLayer

    def _get_layer(self):
        loop = asyncio.get_running_loop()
        try:
            return self._layers[loop]
        except KeyError:
            layer = self._loop_layer_class()(*self._args, **self._kwargs, channel_layer=self)
            self._layers[loop] = layer
            utils._wrap_close(self, loop)
            return layer
