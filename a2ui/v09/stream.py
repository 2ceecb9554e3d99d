"""GET /api/v4/sessions/<id>/surfaces/stream?token=<stream token>: A2UI v0.9 over SSE.

The one HTTP endpoint that takes a stream token (an A2UI stream, like the sockets), and the
only credential it takes: an async Django view outside DRF (whose authentication refuses
stream tokens everywhere else, seed 000 section 8.3), whose response runs a ``SurfaceStream``:
the connection base every person socket has (``a2ui.consumers.socket.SessionSocket``). The token comes from ``?token=``
(``EventSource`` cannot set headers) or ``Authorization: Bearer``.

Each SSE event is one A2UI v0.9 server message (``data:`` is its JSON) whose ``id:`` is its
sequence number in the session's surface stream, marked ``.c`` while the client holds surfaces
translated from seed-000 components and requests (``a2ui.v09.view``: not in the store, so not
numbered). A reconnecting ``EventSource`` sends ``Last-Event-ID``: if nothing was missed (an
unmarked id equal to the store's number, nothing to translate) the stream continues where it
stopped; otherwise (or on a first connect) an ``a2ui-reset`` event says "drop every surface", then each surface's
current state follows (only its last event carries an id, so a cut snapshot is re-sent whole).
Comment lines keep idle connections alive.
"""

import json

from channels.db import database_sync_to_async
from django.http import JsonResponse

from a2ui import handoff, tokens
from a2ui import surfaces as surface_service
from a2ui.api.exceptions import HTTP_STATUS
from a2ui.consumers.streams import SessionStream
from a2ui.core.errors import DomainError
from a2ui.core.events import Kind
from a2ui.infra import caps, prom
from a2ui.rpc.errors import ErrorCode, ProtocolError
from a2ui.sessions import clients
from a2ui.sessions import lifecycle as sessions
from a2ui.v09.view import SessionView, event_id, parse_event_id

KEEPALIVE_SECONDS = 15
RETRY_MS = 2000


def _error(code, message, status, **data):
    if prom.ON:
        prom.refused("v09.sse", int(code))
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
    """``(surface store number, holds translated surfaces)`` (``a2ui.v09.view.parse_event_id``)."""
    return parse_event_id(request.headers.get("Last-Event-ID") or request.GET.get("lastEventId"))


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
    try:  # the person's streams are capped (a2ui.infra.caps): 429, nothing opened
        lease = await caps.acquire_stream(token, caps.address_of_request(request))
    except caps.CapReached as exc:
        return _error(ErrorCode.RATE_LIMITED, exc.message, 429, **exc.data)
    stream = SurfaceStream(token, session.session_id, _last_event_id(request))
    return handoff.event_stream(caps.holding(lease, stream.frames()))


class SurfaceStream(SessionStream):
    """One SSE stream of a session's v0.9 surfaces, on the connection base every socket shares
    (``a2ui.consumers.streams.SessionStream``: counting, the session's event order with gaps
    and epochs, direct delivery and the sequence watch, consent changes, operator closes).
    This class is the SSE wire: ``open`` is the snapshot (or nothing, for a reconnect that
    missed nothing), ``show`` turns a surface batch into ``data:`` events numbered by the
    surface store, ``send_state`` is the ``a2ui-reset`` snapshot, ``idle`` a keepalive.
    """

    adapter_name = "v09"
    idle_seconds = KEEPALIVE_SECONDS
    client_protocol = "v09"

    def client_catalogs(self):
        return clients.ALL  # an SSE stream declares nothing: it is sent every surface

    def __init__(self, token, session_id, last_id):
        super().__init__(token, session_id)
        self.last_id, self.last_held = last_id
        self.tracker = surface_service.Tracker()
        self.view = SessionView()  # seed-000 components and requests (a2ui.v09.view)

    async def open(self):
        seq, states = await surface_service.aload(self.session_id)
        snap = await sessions.asnapshot(self.session_id)
        self.write(f"retry: {RETRY_MS}\n\n".encode())
        if self.last_id is not None and self.last_id == seq and not self.last_held \
                and not snap.components and not snap.requests:
            self.tracker.seq = seq  # a reconnect that missed nothing
        else:  # translated surfaces are not numbered by the store: a resume gets them again
            self.out.extend(_snapshot(self.tracker, self.view, seq, states, snap))

    async def idle(self):
        self.write(b": keepalive\n\n")

    async def show(self, kind, message):
        if kind is not Kind.SURFACE_BATCH:  # seed 000's components and requests, translated
            messages = self.view.event(kind, message["data"])
            if messages is None:
                await self.send_state()
                return
            held = event_id(self.tracker.seq, self.view.holds)
            self.out.extend(sse(m, held) for m in messages)
            return
        numbered = self.tracker.accept_numbered(surface_service.tracked(message["data"]))
        if numbered is None:  # the surface store's own numbering has a gap
            await self.send_state()
            return
        self.out.extend(sse(m, event_id(n, self.view.holds)) for n, m in numbered)

    async def send_state(self):
        seq, states = await surface_service.aload(self.session_id)
        snap = await sessions.asnapshot(self.session_id)
        self.out.extend(_snapshot(self.tracker, self.view, seq, states, snap))


def _snapshot(tracker, view, seq, states, snap):
    """``a2ui-reset`` (the client drops every surface), then the store's surfaces and the
    translated ones; only the last event carries an id, so a cut snapshot is re-sent whole."""
    tracker.surfaces, view.sent = {}, {}
    messages = tracker.resync(seq, states) + view.reset(snap.components, snap.requests)
    last = event_id(seq, view.holds)
    yield sse({}, event="a2ui-reset")
    for i, message in enumerate(messages):
        yield sse(message, last if i == len(messages) - 1 else None)
    if not messages:
        yield sse(event_id=last)
