"""GET /api/v4/sessions/<id>/surfaces/stream?token=<stream token>: A2UI v0.9 over SSE.

The one HTTP endpoint that takes a stream token (an A2UI stream, like the sockets), and the
only credential it takes: a plain async Django view outside DRF (whose authentication refuses
stream tokens everywhere else, seed 000 section 8.3). The token comes from ``?token=``
(``EventSource`` cannot set headers) or ``Authorization: Bearer``.

Each SSE event is one A2UI v0.9 server message (``data:`` is its JSON) whose ``id:`` is its
sequence number in the session's surface stream. A reconnecting ``EventSource`` sends
``Last-Event-ID``: if nothing was missed the stream continues where it stopped; otherwise (or
on a first connect) an ``a2ui-reset`` event says "drop every surface", then each surface's
current state follows (only its last event carries an id, so a cut snapshot is re-sent whole).
Comment lines keep idle connections alive.
"""

import asyncio
import json

from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.http import JsonResponse, StreamingHttpResponse

from .. import tokens
from ..core import events
from ..core.errors import DomainError
from ..core.events import Kind
from ..protocol.errors import ErrorCode, ProtocolError
from ..services import groups, sessions
from ..services import surfaces as surface_service
from .exceptions import HTTP_STATUS

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
    response = StreamingHttpResponse(
        _events(session.session_id, token.jti, _last_event_id(request)),
        content_type="text/event-stream",
    )
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"
    return response


async def _events(session_id, jti, last_id):
    layer = get_channel_layer()
    channel = await layer.new_channel()
    joined = [groups.session_group(session_id), groups.token_group(jti)]
    # Counted like a socket (before joining, as SessionSocket.attach): direct delivery skips
    # the group only when every listener of the session is a counted one of this process.
    counted = await sessions.asocket_opened(session_id)
    for group in joined:
        await layer.group_add(group, channel)
    receiving = None
    try:
        tracker = surface_service.Tracker()
        seq, states = await surface_service.aload(session_id)  # after joining: nothing lost
        yield f"retry: {RETRY_MS}\n\n".encode()
        if last_id is not None and last_id == seq:
            tracker.seq = seq
        else:
            for chunk in _snapshot(tracker, seq, states):
                yield chunk
        while True:
            if receiving is None:
                receiving = asyncio.ensure_future(layer.receive(channel))
            done, _ = await asyncio.wait({receiving}, timeout=KEEPALIVE_SECONDS)
            if not done:
                yield b": keepalive\n\n"
                continue
            event, receiving = receiving.result(), None
            if event.get("type") == "a2ui.close":
                return
            if event.get("type") != events.MESSAGE_TYPE or event.get("kind") != Kind.SURFACE_BATCH:
                continue  # other kinds are seed 000's; surface.batch numbers its own gaps
            numbered = tracker.accept_numbered(surface_service.tracked(event["data"]))
            if numbered is None:
                seq, states = await surface_service.aload(session_id)
                for chunk in _snapshot(tracker, seq, states):
                    yield chunk
                continue
            for event_id, message in numbered:
                yield sse(message, event_id)
    finally:
        if receiving is not None:
            receiving.cancel()
        for group in joined:
            await layer.group_discard(group, channel)
        await sessions.asocket_closed(session_id, counted)


def _snapshot(tracker, seq, states):
    tracker.surfaces = {}
    messages = tracker.resync(seq, states)
    yield sse({}, event="a2ui-reset")
    for i, message in enumerate(messages):
        yield sse(message, seq if i == len(messages) - 1 else None)
    if not messages:
        yield sse(event_id=seq)
