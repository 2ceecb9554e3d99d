"""A session's event stream over a plain HTTP response (SSE), on the connection base.

``SessionStream`` is a ``SessionSocket`` driven by a response iterator instead of a Channels
dispatch loop, so the view stays a Django view (URL routing, prefixes, middleware). It plays the
consumer's part: a channel of its own, counting and joining (``attach``), the session's event
order with gaps and epochs (``a2ui_event``), direct pushes and the sequence watch's resync
orders (``take_direct``), consent changes and operator closes (``a2ui_close``). Django's ASGI
handler closes the iterator when the client goes (``aclosing``), and ``frames`` then leaves:
stop direct pushes, leave the groups, uncount.

A stream adds its wire: ``open`` (what a new stream sends first), ``show`` and ``send_state``
(as every socket), ``idle`` (called when nothing arrived for ``idle_seconds``: keepalives,
deadlines) and ``leaving`` (last words before it uncounts); each writes SSE chunks with
``write``. The v0.9 surface stream (``a2ui.api.streams``) and the AG-UI 1.0 run stream
(``a2ui.agui1.stream``) are the two.
"""

import asyncio
import collections
import logging

from channels.layers import get_channel_layer

from ..core import events
from ..services import groups, outages, sessions, shared
from .session import SessionSocket

log = logging.getLogger("a2ui.consumers")


class SessionStream(SessionSocket):
    idle_seconds = 15.0
    metered = False  # a stream only reads: nothing of its own to flush when it ends

    def __init__(self, token, session_id, counted=None):
        self.token = token
        self.target = session_id
        self.preset_count = counted  # counted already by whoever admitted the stream
        self.groups = []
        self.out = []  # chunks to write, in order
        self.ended = False
        self._deferred = collections.deque()  # direct pushes and resync orders (seqwatch)
        self._wake = asyncio.Event()
        self._in_hand = False

    # The wire (each stream's) ----------------------------------------------------------------

    def write(self, chunk):
        self.out.append(chunk)

    async def open(self):
        """What a new stream sends first (after it is counted and joined)."""

    async def idle(self):
        """Nothing arrived for ``idle_seconds``."""

    async def leaving(self):
        """The stream ends (the client went, or it ended itself): last words to the services."""

    # What SessionSocket and direct delivery ask of a consumer --------------------------------

    async def close(self, code=None, reason=None):
        self.ended = True  # the stream ends: its client is told nothing more

    async def take_direct(self, event):
        self._deferred.append(event)
        self._wake.set()

    # The loop --------------------------------------------------------------------------------

    async def frames(self):
        layer = self.channel_layer = get_channel_layer()
        self.channel_name = await layer.new_channel()
        self.loop = asyncio.get_running_loop()
        receiving = waking = None
        try:
            # Counted and joined before anything is read (SessionSocket.attach): an event
            # racing the start is in what is read or arrives after it, never neither.
            if self.preset_count is None:
                await self.attach(self.target, fresh=False)
            else:
                self.counted = self.preset_count
                await self.join_clients(self.target, resumed=True)
                await self.join(groups.session_group(self.target))
                self.last_seq, self.epoch = await shared.current_seq(self.target.hex)
            self.session_id = self.target
            await self.join(groups.token_group(self.token.jti))
            await self.open()
            if not self.ended:
                self.start_stream()  # what open wrote goes first: take direct pushes now
            for chunk in self._written():
                yield chunk
            while not self.ended:
                if receiving is None:
                    receiving = asyncio.ensure_future(layer.receive(self.channel_name))
                if waking is None:
                    waking = asyncio.ensure_future(self._wake.wait())
                done, _ = await asyncio.wait({receiving, waking}, timeout=self.idle_seconds,
                                             return_when=asyncio.FIRST_COMPLETED)
                if not done:
                    await self.idle()
                else:
                    self._in_hand = True
                    try:
                        if receiving in done:
                            message, receiving = receiving.result(), None
                            await self._handle(message)
                        if waking in done:
                            waking = None
                            self._wake.clear()
                        while self._deferred and not self.ended:
                            await self.a2ui_event(self._deferred.popleft())
                    finally:
                        self._in_hand = False
                for chunk in self._written():
                    yield chunk
        finally:
            for task in (receiving, waking):
                if task is not None:
                    task.cancel()
            await asyncio.shield(asyncio.ensure_future(self._leave()))

    async def _handle(self, message):
        handler = {
            events.MESSAGE_TYPE: self.a2ui_event,
            "a2ui.close": self.a2ui_close,
            "a2ui.consent_changed": self.a2ui_consent_changed,
        }.get(message.get("type"))
        if handler is not None:  # anything else is another kind of socket's business
            await handler(message)

    def _written(self):
        chunks, self.out = self.out, []
        return chunks

    async def _leave(self):
        """Last words, stop direct pushes, leave the groups, uncount (``detach``); each step
        best-effort: it runs when the client has gone and the task is being cancelled."""
        try:
            await self.leaving()
        except Exception:
            outages.warning(log, "ending a stream", "a2ui: ending a stream of %s failed",
                            self.target, session=self.target)
        for group in self.groups:
            try:
                await self.channel_layer.group_discard(group, self.channel_name)
            except Exception:
                outages.warning(log, "leaving a group", "a2ui: leaving %s failed", group)
        if self.session_id is not None:
            await self.detach()
        elif self.counted is not None:  # the start failed half-way
            await sessions.asocket_closed(self.target, self.counted)
        await self.leave_clients(self.target, remember=False)  # if the start failed half-way
