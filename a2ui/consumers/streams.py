"""Listeners driven by a channel of their own instead of a Channels dispatch loop.

``ChannelListener`` is a ``SessionListener`` (``consumers.session``: the one loop's rules) with
the loop itself: a channel of its own on the channel layer, counting and joining (``attach``),
the session's event order with gaps and epochs (``a2ui_event``), direct pushes and the sequence
watch's resync orders (``take_direct``, in order with what the layer brings), consent changes
and operator closes (``a2ui_close``). ``listen`` is the loop, an async generator that yields after
each turn (what the turn wrote can go out); when it ends (its consumer closes it, or the
listener closes) it leaves: stop direct pushes, leave the groups, uncount.

Two kinds are driven this way:

* ``SessionStream``, a session's events over a plain HTTP response (SSE), so the view stays a
  Django view (URL routing, prefixes, middleware); its body is sent in front of Django once the
  request has ended (``a2ui.handoff``), and closed when the client goes (``aclosing``). A stream adds its wire: ``open`` (what a new stream sends
  first), ``show`` and ``send_state`` (as every socket), ``idle`` (called when nothing arrived
  for ``idle_seconds``: keepalives, deadlines) and ``leaving`` (last words before it uncounts);
  each writes SSE chunks with ``write``. The v0.9 surface stream (``a2ui.v09.stream``) and the
  AG-UI 1.0 run stream (``a2ui.agui1.stream``) are the two.
* the MCP watcher's sessions (``a2ui.mcp.watch``): ``show`` is a resource notification.
"""

import asyncio
import collections
import contextvars
import logging

from asgiref.sync import SyncToAsync
from channels.layers import get_channel_layer
from django.db import connections

from a2ui.consumers.session import SessionListener
from a2ui.core import events
from a2ui.core.lifecycle import Event
from a2ui.infra import groups, outages, shared
from a2ui.sessions import lifecycle as sessions

log = logging.getLogger("a2ui.consumers")


class ChannelListener(SessionListener):
    idle_seconds = 15.0
    metered = False  # a stream only reads: nothing of its own to flush when it ends

    #: The channel-layer messages a listener handles (the rest are other sockets' business).
    HANDLERS = {
        events.MESSAGE_TYPE: "a2ui_event",
        "a2ui.close": "a2ui_close",
        "a2ui.consent_changed": "a2ui_consent_changed",
    }

    def __init__(self, token, session_id, counted=None):
        super().__init__()
        self.token = token
        self.target = session_id
        self.preset_count = counted  # counted already by whoever admitted the listener
        self.groups = []
        self._deferred = None  # a deque of direct pushes and resync orders (seqwatch), if any
        #: A future the loop waits on beside the layer's receive (set by ``wake``): a future,
        #: not an ``asyncio.Event`` and a task waiting on it (a task less per listener).
        self._woken = None
        self._in_hand = False

    # Hooks -----------------------------------------------------------------------------------

    async def start(self):
        """Attached (counted, joined, sequence read) and not yet streaming: join more groups,
        send what a new listener sends first."""

    async def idle(self):
        """Nothing arrived for ``idle_seconds``."""

    async def leaving(self):
        """The listener ends (the client went, or it ended itself): last words."""

    def turned(self):
        """What ``listen`` yields after each turn: None (one yield), or a list whose items it
        yields one by one (``SessionStream``: the chunks written, none if nothing was)."""

    def _turn_out(self):
        out = self.turned()
        return (out,) if out is None else out

    # What SessionListener and direct delivery ask of a listener -------------------------------

    async def close(self, code=None, reason=None):
        """The listener ends: its client is told nothing more. Closing on an operator's or the
        session's order (``a2ui_close``: CLOSING) is not finishing (the session goes on)."""
        self.life.fire_if(Event.FINISHED)

    async def take_direct(self, event):
        if self._deferred is None:
            self._deferred = collections.deque()
        self._deferred.append(event)
        self.wake()

    def wake(self):
        """The loop takes a turn now (direct pushes waiting, or its own reason to look)."""
        woken = self._woken
        if isinstance(woken, asyncio.Future):
            if not woken.done():
                woken.set_result(None)
        else:
            self._woken = True  # woken before the loop waits: it takes a turn at once

    def detach_thread(self):
        """Called first by ``listen``: the listener's own database calls are not tied to a
        thread of the request it started in (``SessionStream``)."""

    # The loop --------------------------------------------------------------------------------

    async def listen(self):
        self.detach_thread()
        layer = self.channel_layer = get_channel_layer()
        self.channel_name = await layer.new_channel()
        self.loop = asyncio.get_running_loop()
        receiving = None
        try:
            # Counted and joined before anything is read (SessionListener.attach): an event
            # racing the start is in what is read or arrives after it, never neither.
            if self.preset_count is None:
                await self.attach(self.target, fresh=False)
            else:
                self.counted = self.preset_count
                await self.join_clients(self.target, resumed=True)
                await self.join(groups.session_group(self.target))
                self.last_seq, self.epoch = await shared.current_seq(self.target.hex)
            self.opened(self.target)
            await self.start()
            if self.life.streaming:
                self.start_stream()  # what start wrote goes first: take direct pushes now
            for item in self._turn_out():
                yield item
            while self.life.streaming:
                if receiving is None:
                    # In a context of its own: a task's context is a copy of its creator's,
                    # which keeps what the listener's last database call left there (asgiref
                    # re-homes every Local's storage into the caller's context: about 3 KB)
                    # for as long as the task waits. Receiving needs none of it.
                    receiving = self.loop.create_task(layer.receive(self.channel_name),
                                                      context=contextvars.Context())
                woken = self._woken is True
                if not woken and not receiving.done():
                    self._woken = self.loop.create_future()
                    await asyncio.wait((receiving, self._woken), timeout=self.idle_seconds,
                                       return_when=asyncio.FIRST_COMPLETED)
                    woken = self._woken.done()
                self._woken = None
                if not woken and not receiving.done():
                    await self.idle()
                else:
                    self._in_hand = True
                    try:
                        if receiving.done():
                            message, receiving = receiving.result(), None
                            await self._handle(message)
                        deferred = self._deferred
                        while deferred and self.life.streaming:
                            await self.a2ui_event(deferred.popleft())
                        if deferred is not None and not deferred:
                            self._deferred = None
                    finally:
                        self._in_hand = False
                for item in self._turn_out():
                    yield item
        finally:
            if receiving is not None:
                receiving.cancel()
            if isinstance(self._woken, asyncio.Future):
                self._woken.cancel()
            await asyncio.shield(asyncio.ensure_future(self._leave()))

    async def _handle(self, message):
        name = self.HANDLERS.get(message.get("type"))
        if name is not None:  # anything else is another kind of socket's business
            await getattr(self, name)(message)

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
        try:
            if self.session_id is not None:
                await self.detach()
            elif self.counted is not None:  # the start failed half-way
                await sessions.asocket_closed(self.target, self.counted)
            await self.leave_clients(self.target, remember=False)  # if the start failed half-way
        finally:
            self.life.fire_if(Event.DISCONNECTED)


def leave_request_thread():
    """The current task (and the tasks it starts from now on) no longer runs its database calls
    on the thread of the Django request it serves.

    Django's ASGI handler serves each request in an ``asgiref`` ``ThreadSensitiveContext``:
    the request's thread-sensitive calls (``database_sync_to_async``, sync middleware) run on
    a thread of its own, made at its first such call and kept until the response ends. For a
    response that streams for minutes (an SSE stream, an AG-UI 1.0 run) that is an idle
    thread per stream (its stack, its interpreter state, its allocator cache: most of a run's
    memory at 1,000 runs, docs/performance.md "Capacity"). Once the view has returned, the
    stream's calls go where every socket's go (the process's one thread-sensitive thread, or
    ``a2ui.infra.dbthreads``), and the request's thread ends (its database connections
    closed on it first: back to the pool). Django ends the request as before: its
    ``response.close()`` gets a thread for that moment. Nothing here outside a request (or
    inside a context given its own executor) changes anything: behind ``a2ui.handoff`` the
    request has ended before its body is read, so this matters only without it."""
    context = SyncToAsync.thread_sensitive_context.get(None)
    if context is None:
        return
    SyncToAsync.thread_sensitive_context.set(None)
    if getattr(context, "_executor", None) is not None:
        return  # the context's owner's executor, not the request's
    executor = SyncToAsync.context_to_thread_executor.pop(context, None)
    if executor is not None:
        executor.submit(connections.close_all)
        executor.shutdown(wait=False)


class SessionStream(ChannelListener):
    """A session's events over an SSE response (see the module's docs)."""

    def __init__(self, token, session_id, counted=None):
        super().__init__(token, session_id, counted)
        self.out = []  # chunks to write, in order

    def detach_thread(self):
        leave_request_thread()

    # The wire (each stream's) ----------------------------------------------------------------

    def write(self, chunk):
        self.out.append(chunk)

    async def open(self):
        """What a new stream sends first (after it is counted and joined)."""

    @property
    def ended(self):
        """The stream has ended (closed, or finished by itself): nothing more is written."""
        return self.life.ending

    @ended.setter
    def ended(self, value):
        if value:  # the stream ends itself (an AG-UI 1.0 run that ended): the session goes on
            self.life.fire_if(Event.FINISHED)

    async def start(self):
        await self.join(groups.token_group(self.token.jti))
        await self.open()

    def turned(self):
        chunks, self.out = self.out, []
        return chunks

    def frames(self):
        """The response iterator: the listening loop itself, one chunk at a time (one
        generator, not one wrapping another: the server closes it when the client goes)."""
        return self.listen()
