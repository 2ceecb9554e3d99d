"""One subscribed Redis connection per event loop: the receiving end of the channel layer.

Why: redis-py's ``PubSub`` hands over one message per ``get_message`` call (a timeout, a lock,
a parse and a coroutine each); under load a read brings many. Here the connection is a
``redisline`` connection in subscribed mode: each chunk read is parsed with hiredis and every
message in it is handed to ``on_message(channel, data)`` at once, in the connection's own
callback; SUBSCRIBE and UNSUBSCRIBE are pipelined commands on it, answered in order.

Losing the connection (Redis restarted, failed over, or dropped it) starts a reconnect at once,
then after waits of ``retry(previous wait)``; the new connection subscribes every channel again
before anything else goes out on it, and ``on_restored()`` is called: whatever was published
while it was away never arrived. URLs as ``redisline`` takes them (Sentinel included: a new
connection goes to the primary the sentinels name).
"""

import asyncio
import logging
import time

import hiredis

from a2ui.infra import redisline

log = logging.getLogger("a2ui.layer")

#: A failed reconnect is logged at most this often.
LOG_EVERY_SECONDS = 1.0
_MESSAGE = b"message"


class _Subscribed(redisline._Protocol):
    """A ``redisline`` connection whose published messages go to ``on_message``; every other
    reply (subscribe and unsubscribe confirmations, setup) answers the waiting commands."""

    def __init__(self, loop, timeout, on_message, on_lost):
        super().__init__(loop, timeout)
        self.reader = hiredis.Reader(replyError=redisline.ReplyError)  # bytes: payloads as sent
        self.on_message = on_message
        self.on_lost = on_lost

    def data_received(self, data):
        self.reader.feed(data)
        gets, on_message = self.reader.gets, self.on_message
        while (reply := gets()) is not False:
            if type(reply) is list and reply and reply[0] == _MESSAGE:
                on_message(reply[1], reply[2])
            elif self.waiting:
                self.answered(reply)

    def connection_lost(self, exc):
        super().connection_lost(exc)
        self.on_lost(self)


class Subscriber(redisline.Line):
    """The channels subscribed on one Redis server, kept subscribed across reconnects."""

    def __init__(self, url, on_message, on_restored, retry, timeout=15.0):
        super().__init__(url, timeout)
        #: The channels subscribed (or to be, on the next connection): names as str.
        self.channels = set()
        self._on_message = on_message
        self._on_restored = on_restored
        self._retry = retry
        self._opened = 0
        self._reviver = None
        self._closed = False

    def protocol(self, loop, timeout):
        return _Subscribed(loop, timeout, self._message, self._lost)

    def _message(self, channel, data):
        try:
            self._on_message(channel.decode(), data)
        except Exception:  # one message's failure is its receiver's: the connection reads on
            log.exception("a2ui: a published message could not be handed over")

    async def subscribe(self, channel):
        if channel in self.channels:
            return
        self.channels.add(channel)
        try:
            await self.execute(("SUBSCRIBE", channel))
        except BaseException:
            self.channels.discard(channel)
            raise

    async def unsubscribe(self, channel):
        await self.unsubscribe_soon(channel)

    def unsubscribe_soon(self, channel):
        """:meth:`unsubscribe` without a coroutine: the future of the UNSUBSCRIBE's reply (done
        at once when there is nothing to send: not subscribed, or no connection open, so not
        subscribed anywhere now)."""
        future = None
        if channel in self.channels:
            self.channels.discard(channel)
            future = self.send_soon(("UNSUBSCRIBE", channel))
        if future is None:
            future = asyncio.get_running_loop().create_future()
            future.set_result(None)
        return future

    async def _open(self):
        protocol = await super()._open()
        if self.channels:  # a new connection: every channel again, before anything else
            names = list(self.channels)
            await protocol.send(redisline.pack(("SUBSCRIBE", *names)), len(names))
        self._opened += 1
        if self._opened > 1:
            self._on_restored()
        return protocol

    def _lost(self, protocol):
        if self._closed or protocol is not self._protocol:
            return
        if self._reviver is None or self._reviver.done():
            self._reviver = protocol.loop.create_task(self._revive())

    async def _revive(self):
        delay, logged = 0, -LOG_EVERY_SECONDS
        while not self._closed:
            protocol = self._protocol
            if protocol is not None and protocol.lost is None:
                return  # connected again meanwhile (a subscribe did it)
            try:
                await self._connect()
                return
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # Redis still away
                now = time.monotonic()
                if now - logged >= LOG_EVERY_SECONDS:
                    logged = now
                    log.warning("a2ui: the channel layer's subscription is not back yet (%s: %s)",
                                type(exc).__name__, exc)
            delay = self._retry(delay)
            await asyncio.sleep(delay)

    def close(self):
        self._closed = True
        if self._reviver is not None:
            self._reviver.cancel()
            self._reviver = None
        super().close()
