"""GET /api/v4/sessions/<id>/surfaces/stream?token=<stream token>: A2UI v0.9 over SSE.

The one HTTP endpoint that takes a stream token (an A2UI stream, like the sockets), and the
only credential it takes: an async Django view outside DRF (whose authentication refuses
stream tokens everywhere else, seed 000 section 8.3), whose response runs a ``SurfaceStream``:
the connection base every person socket has (``a2ui.consumers.session.SessionSocket``). The token comes from ``?token=``
(``EventSource`` cannot set headers) or ``Authorization: Bearer``.

Each SSE event is one A2UI v0.9 server message (``data:`` is its JSON) whose ``id:`` is its
sequence number in the session's surface stream. A reconnecting ``EventSource`` sends
``Last-Event-ID``: if nothing was missed the stream continues where it stopped; otherwise (or
on a first connect) an ``a2ui-reset`` event says "drop every surface", then each surface's
current state follows (only its last event carries an id, so a cut snapshot is re-sent whole).
Comment lines keep idle connections alive.
"""

import asyncio
import collections
import json
import logging

from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.http import JsonResponse, StreamingHttpResponse

from .. import tokens
from ..consumers.session import SessionSocket
from ..core import events
from ..core.errors import DomainError
from ..core.events import Kind
from ..protocol.errors import ErrorCode, ProtocolError
from ..services import groups, sessions
from ..services import surfaces as surface_service
from .exceptions import HTTP_STATUS

log = logging.getLogger("a2ui.api")

KEEPALIVE_SECONDS = 15
RETRY_MS = 2000


def _error(code, message, status, **data):
    body = {"error": {"code": int(code), "message": message}}
    if data:
        body["error"]["data"] = data
    return JsonResponse(body, status=status)


def _raw_token(request):
    header = request.headers.get("Authorization", "")
    scheme, _, value = header.partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    return request.GET.get("token")


def _last_event_id(request):
    raw = request.headers.get("Last-Event-ID") or request.GET.get("lastEventId")
    try:
        return int(raw) if raw not in (None, "") else None
    except ValueError:
        return None


def sse(message=None, event_id=None, event=None, ascii_only=False):
    lines = []
    if event is not None:
        lines.append(f"event: {event}")
    if event_id is not None:
        lines.append(f"id: {event_id}")
    if message is not None:
        lines.append("data: " + json.dumps(message, ensure_ascii=ascii_only,
                                           separators=(",", ":")))
    text = "\n".join(lines) + "\n\n"
    try:
        return text.encode()
    except UnicodeEncodeError:
        # A lone surrogate (valid JSON as "\\ud800", not UTF-8): escaped, the same JSON value.
        return sse(message, event_id, event, ascii_only=True)


async def surface_stream(request, session_id):
    if request.method != "GET":
        return _error(ErrorCode.INVALID_REQUEST, "Use GET.", 405)
    raw = _raw_token(request)
    if not raw:
        return _error(ErrorCode.AUTH_FAILED, "A stream token is required: ?token=<stream token>.",
                      401)
    try:
        token = await database_sync_to_async(tokens.verify_stream_token)(raw)
    except tokens.TokenError as exc:
        return _error(ErrorCode.AUTH_FAILED, exc.reason, 401)
    try:
        session = await surface_service.acheck_stream_session(token, session_id)
    except DomainError as exc:
        exc = ProtocolError.of(exc)
        return _error(exc.code, exc.message, HTTP_STATUS.get(exc.code, 400), **(exc.data or {}))
    stream = SurfaceStream(token, session.session_id, _last_event_id(request))
    response = StreamingHttpResponse(
        stream.frames(),
        content_type="text/event-stream",
    )
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"
    return response


class SurfaceStream(SessionSocket):
    """One SSE stream of a session's v0.9 surfaces, on the connection base every socket shares.

    ``SessionSocket`` does what it does for the sockets: counting, joining, the session's event
    order (a gap or a new epoch resends the surfaces), direct delivery and the sequence watch,
    consent changes and operator closes. This class is the SSE wire: ``show`` turns a
    surface batch into ``data:`` events numbered by the surface store, ``send_state`` is the
    ``a2ui-reset`` snapshot. It is driven by the view's response iterator (``frames``) instead
    of a Channels dispatch loop, so it stays a Django view (URL routing, prefixes, middleware);
    Django's ASGI handler cancels the iterator when the client goes, and ``frames`` then
    uncounts (tests/surfaces/test_sse.py).
    """

    def __init__(self, token, session_id, last_id):
        self.token = token
        self.target = session_id
        self.last_id = last_id
        self.groups = []
        self.tracker = surface_service.Tracker()
        self.out = []  # SSE chunks to write, produced by show / send_state
        self.ended = False
        self._deferred = collections.deque()  # direct pushes and resync orders (seqwatch)
        self._wake = asyncio.Event()
        self._in_hand = False

    # What SessionSocket and direct delivery ask of a consumer --------------------------------

    async def close(self, code=None, reason=None):
        self.ended = True  # an EventSource is told nothing more: the stream ends

    async def take_direct(self, event):
        self._deferred.append(event)
        self._wake.set()

    async def show(self, kind, message):
        if kind is not Kind.SURFACE_BATCH:
            return  # the other kinds are seed 000's: nothing an A2UI v0.9 stream shows
        numbered = self.tracker.accept_numbered(surface_service.tracked(message["data"]))
        if numbered is None:  # the surface store's own numbering has a gap
            await self.send_state()
            return
        self.out.extend(sse(m, event_id) for event_id, m in numbered)

    async def send_state(self):
        seq, states = await surface_service.aload(self.session_id)
        self.out.extend(_snapshot(self.tracker, seq, states))

    # The stream ------------------------------------------------------------------------------

    async def frames(self):
        layer = self.channel_layer = get_channel_layer()
        self.channel_name = await layer.new_channel()
        self.loop = asyncio.get_running_loop()
        receiving = waking = None
        try:
            # Counted and joined before the surfaces are read (SessionSocket.attach): an event
            # racing the connect is in what is read or arrives after it, never neither.
            await self.attach(self.target, fresh=False)
            self.session_id = self.target
            await self.join(groups.token_group(self.token.jti))
            seq, states = await surface_service.aload(self.session_id)
            yield f"retry: {RETRY_MS}\n\n".encode()
            if self.last_id is not None and self.last_id == seq:
                self.tracker.seq = seq  # a reconnect that missed nothing
            else:
                self.out.extend(_snapshot(self.tracker, seq, states))
            self.start_stream()  # the snapshot is out (queued first): take direct pushes
            for chunk in self._written():
                yield chunk
            while not self.ended:
                if receiving is None:
                    receiving = asyncio.ensure_future(layer.receive(self.channel_name))
                if waking is None:
                    waking = asyncio.ensure_future(self._wake.wait())
                done, _ = await asyncio.wait({receiving, waking}, timeout=KEEPALIVE_SECONDS,
                                             return_when=asyncio.FIRST_COMPLETED)
                if not done:
                    yield b": keepalive\n\n"
                    continue
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
            await self._leave()

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
        """Stop direct pushes, leave the groups, uncount (``SessionSocket.detach``); each step
        best-effort, and shielded: it runs when the client has gone and the task is cancelled."""
        async def leave():
            for group in self.groups:
                try:
                    await self.channel_layer.group_discard(group, self.channel_name)
                except Exception:
                    log.warning("a2ui: leaving %s failed", group, exc_info=True)
            if self.session_id is not None:
                await self.detach()
            elif self.counted is not None:  # the attach failed half-way
                await sessions.asocket_closed(self.target, self.counted)

        await asyncio.shield(asyncio.ensure_future(leave()))


def _snapshot(tracker, seq, states):
    tracker.surfaces = {}
    messages = tracker.resync(seq, states)
    yield sse({}, event="a2ui-reset")
    for i, message in enumerate(messages):
        yield sse(message, seq if i == len(messages) - 1 else None)
    if not messages:
        yield sse(event_id=seq)
