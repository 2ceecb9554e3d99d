"""The default channel layer with Redis (``a2ui.apps.default_channel_layers``): channels-redis's
PUBLISH/SUBSCRIBE layer, each channel's queue a ``LeanQueue`` (``a2ui.leanqueue``: every idle
socket holds one), its connections lean on the hot path:

* **publishing** through the push path's own pipelined connection (``redisline``): a push's
  PUBLISH goes out in the write of the sequence numbers beside it (``LeanLoopLayer.publisher``);
* **receiving** on one subscribed connection per loop (``a2ui.layer.shards.LineShard``), each
  message handed over in the read's callback; a session event goes straight to the consumers
  registered here for direct pushes (``LeanLoopLayer.hand_over``), as a push from this process
  does, instead of each socket's queue and dispatch loop.

Each shard's subscription says when it reconnects: whatever was published while it was away
never reached this process, and ``a2ui.consumers.seqwatch`` resyncs the sockets that miss a
number at once instead of after its grace.

It overrides private parts of channels-redis 4.x (``RedisPubSubLoopLayer._subscribe_to_channel``
and ``.channels``, ``RedisPubSubChannelLayer._get_layer`` and ``._layers``,
``RedisSingleShardConnection._do_receiving``, ``._receive_message``, ``._ensure_redis``,
``._ensure_receiver``, ``._lock``, ``._subscribed_to`` and ``._pubsub``,
``channels_redis.utils._wrap_close``). Should an upgrade remove any of them, the stock loop
layer is used (plain ``asyncio.Queue`` per channel), with one WARNING;
tests/consumers/test_leanqueue.py names what is missing.
"""

import asyncio
import collections
import logging

from channels_redis import pubsub, utils
from channels_redis.pubsub import RedisPubSubChannelLayer, RedisPubSubLoopLayer

from a2ui.consumers import eager
from a2ui.core import events
from a2ui.core.shardmap import ShardMap
from a2ui.infra import groups, memory, redisline, shared
from a2ui.layer.shards import LineShard, Shard
from a2ui.leanqueue import LeanQueue
from a2ui.push import direct

log = logging.getLogger("a2ui.layer")


def missing_internals():
    """The channels-redis members this module relies on that are not there (names)."""
    wanted = [(pubsub.RedisPubSubLoopLayer, "_subscribe_to_channel"),
              (pubsub.RedisPubSubLoopLayer, "_get_shard"),
              (pubsub.RedisPubSubChannelLayer, "_get_layer"),
              (pubsub.RedisSingleShardConnection, "_do_receiving"),
              (pubsub.RedisSingleShardConnection, "_receive_message"),
              (pubsub.RedisSingleShardConnection, "_ensure_redis"),
              (pubsub.RedisSingleShardConnection, "_ensure_receiver"),
              (utils, "_wrap_close"), (utils, "_consistent_hash")]
    return [f"{getattr(owner, '__name__', owner)}.{name}" for owner, name in wanted
            if not hasattr(owner, name)]


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

    def __init__(self, *args, line_url=None, line_urls=None, shard_names=None, **kwargs):
        super().__init__(*args, **kwargs)
        n = len(self._shards)
        urls = list(line_urls or ([line_url] if line_url else []))
        #: Each shard's URL, for its subscribed connection and the pipelined connection its
        #: publishes go through (None: redis-py's, as channels-redis does).
        self._line_urls = urls if len(urls) == n else [None] * n
        #: A session group's shard: rendezvous hashing of the session over the shards' names,
        #: as ``a2ui.infra.shared`` places the session's state (A2UI['REDIS_SHARDS']); any
        #: other name by channels-redis's hash.
        self._map = ShardMap(shard_names) if shard_names and n > 1 else None
        self._shards = [self._shard(shard.host, url)
                        for shard, url in zip(self._shards, self._line_urls, strict=True)]
        self._leaving = collections.deque()
        self._leaver = None
        self._lines = [None] * n  # each shard's Line, once asked for; False: none (redis-py)
        self._own_lines = set()  # the shards whose Line is this layer's: it closes them

    def _shard(self, host, url):
        """The subscribed connection to ``host``: one ``a2ui.layer.subscriber`` connection to
        ``url`` when ``redisline`` takes it, else channels-redis's redis-py shard."""
        if url:
            try:
                return LineShard(url, self, shared.REDIS_TIMEOUT_SECONDS)
            except ValueError:  # a URL only redis-py takes (unix://)
                pass
        return Shard(host, self)

    def _shard_index(self, name):
        if self._map is not None and name.startswith(self.session_groups):
            return self._map.index(name[len(self.session_groups):])
        return utils._consistent_hash(name, len(self._shards))

    def _get_shard(self, channel_or_group_name):
        shards = self._shards
        if len(shards) == 1:
            return shards[0]
        return shards[self._shard_index(channel_or_group_name)]

    # Publishing ------------------------------------------------------------------------------

    def publisher(self, index=0):
        """The ``redisline.Line`` this loop publishes to shard ``index`` through, or None (the
        shard's redis-py client). With the default layer it is the connection the push path's
        sequence numbers use on that server (``shared.hot_line``), so a push's PUBLISH goes
        out in the same write as the commands of the pushes beside it: no lock, no second
        connection, one system call per turn."""
        line = self._lines[index]
        if line is None:
            url = self._line_urls[index]
            line = shared.hot_line(url) if url else None
            if line is None and url:
                try:
                    line = redisline.Line(url, shared.REDIS_TIMEOUT_SECONDS)
                    self._own_lines.add(index)
                except ValueError:  # a URL only redis-py takes (unix://)
                    line = None
            line = self._lines[index] = line or False
        return line or None

    async def publish(self, channel, data):
        """PUBLISH ``data`` (serialized) to ``channel``, in the order of this loop's publishes."""
        index = 0 if len(self._shards) == 1 else self._shard_index(channel)
        line = self.publisher(index)
        if line is None:
            await self._shards[index].publish(channel, data)
        else:
            await line.execute(("PUBLISH", channel, data))

    async def send(self, channel, message):
        await self.publish(channel, self.channel_layer.serialize(message))

    async def group_send(self, group, message):
        await self.publish(self._get_group_channel_name(group),
                           self.channel_layer.serialize(message))

    async def group_send_soon(self, group, message):
        """``group_send`` without waiting for Redis' reply: the future of the reply, or None
        when the publish went out the waiting way (no pipelined connection open yet, or none
        at all). The publish keeps its place among this loop's publishes; a failure shows in
        the future only (the caller tells the group's sockets to resync: ``push.fanout``)."""
        channel = self._get_group_channel_name(group)
        data = self.channel_layer.serialize(message)
        line = self.publisher(0 if len(self._shards) == 1 else self._shard_index(channel))
        future = None if line is None else line.send_soon(("PUBLISH", channel, data))
        if future is None:
            await self.publish(channel, data)
        return future

    async def flush(self):
        # Before the connections close (at the end of an ``async_to_sync`` loop, too): a
        # pending unsubscribe is moot once they do, and left pending it outlives its loop.
        leaver, self._leaver = self._leaver, None
        self._leaving.clear()
        if leaver is not None and not leaver.done():
            leaver.cancel()
            await asyncio.gather(leaver, return_exceptions=True)
        await super().flush()
        lines, self._lines = self._lines, [None] * len(self._shards)
        for index in self._own_lines:
            if lines[index]:
                lines[index].close()
        self._own_lines = set()

    # Receiving -------------------------------------------------------------------------------

    def received(self, name, data):
        """A message published to ``name`` (a channel or a group's channel) reached this loop:
        a session event goes to the consumers registered for direct pushes
        (:meth:`hand_over`), the rest to each channel's queue as channels-redis does."""
        if name.startswith(self.session_groups) and self.hand_over(name, data):
            return
        queue = self.channels.get(name)
        if queue is not None:
            queue.put_nowait(data)
            return
        for channel in self.groups.get(name, ()):
            queue = self.channels.get(channel)
            if queue is not None:
                queue.put_nowait(data)

    def hand_over(self, name, data):
        """Deliver a message published to a session's group (``name``, its Redis channel) to
        the consumers here registered for direct pushes (``a2ui.push.direct``) the way a push
        from this process reaches them: deserialized once, handed to each consumer's
        ``take_direct`` at once (``a2ui.consumers.eager``), without its channel's queue and
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
        soon = getattr(shard, "unsubscribe_soon", None)  # a2ui's shards; else a task
        return soon(channel) if soon is not None else asyncio.ensure_future(
            shard.unsubscribe(channel))

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
