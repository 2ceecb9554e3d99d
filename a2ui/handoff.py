"""Long responses streamed in front of Django: a view answers, Django's handler lets the request
go, and the stream goes on without it.

A response that streams for minutes (an AG-UI 1.0 run, the v0.9 surface stream) is served by
Django's ASGI handler for as long as it lasts: the handler keeps the request (its ``META``, its
body file), the response and the iterators middleware wrap around it, and two tasks (one waits
for the client to leave, one sends), about 17 KB of RSS per stream at 2,000 runs
(docs/performance.md, "What an idle AG-UI 1.0 run holds").

Behind :class:`StreamHandoff` (``a2ui.asgi.http_application`` puts it in front of Django) a
view answers with :func:`event_stream`: every check, middleware and signal runs as for any
response, but Django sends a response with an empty body, so its handler ends the request as
for any other (``response.close()``, ``request_finished``, its thread and tasks gone). The
layer then sends the view's body itself, from the task Daphne gave the connection, with one
task of its own that waits for the client to leave (and then cancels the sending, as Django's
handler does).

The view's response carries a header naming the stream (a random mark of the request, never
sent): a response that a middleware put in its place is sent as it is, and the stream is
closed unread. Without the layer (Django's test client, a project that builds its own ASGI
application from Django's) :func:`event_stream` is a ``StreamingHttpResponse`` as before.
"""

import asyncio
import contextvars
import logging
import secrets
from contextlib import aclosing

from django.http import HttpResponse, StreamingHttpResponse

log = logging.getLogger("a2ui.handoff")

#: The response header that names a handed-off stream (removed before the response is sent).
MARK = "X-A2UI-Handoff"
_MARK = MARK.lower().encode()
#: Headers of Django's empty response that do not describe the stream sent in its place
#: (``CommonMiddleware`` sets ``Content-Length: 0``).
_DROPPED = frozenset({_MARK, b"content-length"})

_slot = contextvars.ContextVar("a2ui_handoff_slot", default=None)


class _Slot:
    """One request's place for the body a view hands off."""

    __slots__ = ("body", "mark", "gone")

    def __init__(self):
        self.body = None
        self.mark = None
        self.gone = False  # the client left while Django served the request


def event_stream(body, content_type="text/event-stream"):
    """The response of a view whose body (an async iterator of bytes) streams for long:
    handed off to :class:`StreamHandoff` when the request came through it, else a
    ``StreamingHttpResponse``. Either way with ``Cache-Control: no-cache`` and
    ``X-Accel-Buffering: no`` (a proxy in front sends each event as it comes)."""
    slot = _slot.get()
    if slot is None or slot.body is not None:
        response = StreamingHttpResponse(body, content_type=content_type)
    else:
        slot.body = body
        slot.mark = secrets.token_hex(8)
        response = HttpResponse(b"", content_type=content_type)
        response[MARK] = slot.mark
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"
    return response


class StreamHandoff:
    """ASGI middleware in front of Django's handler: sends the bodies views hand off with
    :func:`event_stream` once Django has ended their requests (see the module's docs)."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        handed = await self._django(scope, receive, send)
        if handed is not None:
            await _send_body(*handed, receive, send)

    async def _django(self, scope, receive, send):
        """Django serves the request; (head, body) of a stream handed off, or None.

        In a task of its own, with a copy of this task's context: what Django's handler leaves
        in its context (``asgiref`` re-homes every ``Local``'s storage into the caller's context
        after each ``sync_to_async`` call, ``response.close()``'s included: about 1 KB) goes
        with it, instead of staying in the context of the task that sends the stream."""
        slot = _Slot()
        start = None

        async def receiving():
            message = await receive()
            if message["type"] == "http.disconnect":
                slot.gone = True
            return message

        async def sending(message):
            nonlocal start
            kind = message["type"]
            if kind == "http.response.start" and slot.mark is not None:
                headers = message.get("headers") or ()
                mark = slot.mark.encode()
                if any(k.lower() == _MARK and v == mark for k, v in headers):
                    start = {**message,
                             "headers": [(k, v) for k, v in headers
                                         if k.lower() not in _DROPPED]}
                    return
            elif kind == "http.response.body" and start is not None:
                return  # the empty body of the response that stands for the stream
            await send(message)

        context = contextvars.copy_context()
        context.run(_slot.set, slot)
        serving = asyncio.get_running_loop().create_task(
            self.app(scope, receiving, sending), context=context)
        try:
            await asyncio.shield(serving)
        except asyncio.CancelledError:
            serving.cancel()  # the server's cancel: Django's too, and wait for its end
            await asyncio.wait((serving,))
            raise
        finally:
            body, slot.body = slot.body, None
            if body is not None and (start is None or slot.gone or not serving.done()
                                     or serving.cancelled() or serving.exception()):
                # Another response was sent in its place, or nobody is left to read it.
                await _close(body)
                body = None
        serving.result()  # Django's own error, raised as it would be without the layer
        return None if body is None else (start, body)


async def _close(body):
    aclose = getattr(body, "aclose", None)
    if aclose is not None:
        try:
            await aclose()
        except Exception:
            log.exception("a2ui: closing a stream that was not sent failed")


def _bytes(chunk):
    return chunk.encode() if isinstance(chunk, str) else bytes(chunk)


def _left(watcher):
    """The watcher saw the client leave."""
    return (watcher.done() and not watcher.cancelled() and watcher.exception() is None
            and watcher.result() is True)


async def _watch(receive, task):
    """Waits for the client to leave, then cancels the sending ``task`` (True)."""
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            task.cancel()
            return True


async def _send_body(start, body, receive, send):
    """Sends the response's ``start`` and ``body``, chunk by chunk until it ends, or until the
    client leaves (the body is closed: its ``finally`` runs, as when Django's handler closes a
    streaming response)."""
    await send(start)
    del start
    task = asyncio.current_task()
    # In an empty context: the watcher needs nothing of the request's.
    watcher = asyncio.get_running_loop().create_task(_watch(receive, task),
                                                     context=contextvars.Context())
    try:
        async with aclosing(body):
            async for chunk in body:
                if chunk:
                    await send({"type": "http.response.body",
                                "body": chunk if isinstance(chunk, bytes) else _bytes(chunk),
                                "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})
    except asyncio.CancelledError:
        if not _left(watcher):
            raise  # the server's own cancel (its shutdown, its close timeout)
        task.uncancel()  # the client left: the body is closed, the response is over
    except Exception:
        log.exception("a2ui: a handed-off stream failed")
        try:
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        except Exception:
            pass
    finally:
        if not watcher.done():
            watcher.cancel()
        elif not watcher.cancelled() and watcher.exception() is not None:
            log.warning("a2ui: waiting for a stream's client to leave failed: %r",
                        watcher.exception())
