"""The SDK's Streamable HTTP server transport, leaner while a session idles.

Why a subclass: a person's MCP client keeps its session open for as long as it is connected,
with the GET stream of the server's notifications, mostly idle. The SDK's transport (mcp 2.3)
holds, per session and stream, about 60 KB of Python objects (docs/performance.md,
"Capacity"): the GET stream is sse-starlette's ``EventSourceResponse``, a task group of five
tasks (the body, the keep-alive ping, a shutdown watch, the writer fed by the transport's
message router, the disconnect watch) and two memory object streams; the session has a
message-router task between two more memory object streams, each waiting with an anyio
``Event`` (an ``asyncio.Event`` and its deque). :class:`Transport` keeps the SDK's behaviour
and wire, with:

* the GET stream served in the request's own task and one that waits for the client to leave:
  each event goes to the wire as it is routed (:class:`_GetStream` stands in for the stream
  pair the SDK registers under ``GET_STREAM_KEY``), and the request sends sse-starlette's
  keep-alive comment every ``PING_SECONDS``. The same status, headers, events and pings; a
  second GET is refused 409, a ``Last-Event-ID`` resumes through the SDK's replay, and the
  stream ends when the session does (DELETE, idle timeout, shutdown);
* the session's streams (``connect``): the inbound one a rendezvous of futures
  (:class:`_Inbound`, what the SDK's dispatcher reads, with the sender's context as the SDK's
  context streams give it), and outbound messages routed in the sender's task
  (:class:`_Outbound`, the SDK's ``message_router`` without its task: one at a time, in the
  order they come, each to completion even if its sender is cancelled);
* a client's notification or response (answered 202 before it is handled) handed on with a
  request of its scope's ``SLIM_SCOPE`` keys only: the SDK's dispatcher keeps the last message
  it read until the next, an idle client's ``notifications/initialized`` for hours, and with
  it the finished request's queue and buffers and what the application put in its scope (the
  caller, ``a2ui.mcp.app``, whose database rows are for the handlers of requests; /mcp has
  no handler of a client's notification).

/mcp runs under Daphne's asyncio loop: the waits here are asyncio futures, the cheapest there.
"""

import asyncio
import contextvars
import logging
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from http import HTTPStatus

import anyio
from mcp.server.streamable_http import (
    CONTENT_TYPE_SSE,
    GET_STREAM_KEY,
    LAST_EVENT_ID_HEADER,
    MCP_SESSION_ID_HEADER,
    EventMessage,
    StreamableHTTPServerTransport,
    check_accept_headers,
)
from mcp.shared.message import ServerMessageMetadata
from mcp_types import JSONRPCError, JSONRPCResponse
from sse_starlette.event import ServerSentEvent, ensure_bytes
from starlette.requests import Request

log = logging.getLogger("a2ui.mcp")

#: The keep-alive comment's period (sse-starlette's default, which the SDK's GET stream used).
PING_SECONDS = 15.0
#: The scope a client's notification or response is handed on with (the module's docstring).
SLIM_SCOPE = ("type", "asgi", "http_version", "method", "scheme", "server", "client", "root_path",
              "path", "raw_path", "query_string", "headers")
#: The event separator (sse-starlette's default).
SEP = "\r\n"


class _GetStream:
    """Both ends of the GET stream as the transport sees them (``_request_streams[GET]``): the
    message router ``send``s an event, which goes to the wire at once; ``close``/``aclose``
    (the session ends, ``close_standalone_sse_stream``) end the response."""

    __slots__ = ("transport", "asgi_send", "done")

    def __init__(self, transport, asgi_send, done):
        self.transport, self.asgi_send, self.done = transport, asgi_send, done

    async def send(self, event_message):
        if self.done.done():
            raise anyio.ClosedResourceError
        body = ensure_bytes(self.transport._create_event_data(event_message), SEP)
        try:
            await self.asgi_send({"type": "http.response.body", "body": body, "more_body": True})
        except Exception as exc:  # the server refused the write: the stream is over
            self.close()
            raise anyio.BrokenResourceError from exc

    def close(self):
        if not self.done.done():
            self.done.set_result(None)

    async def aclose(self):
        self.close()


def ping():
    """sse-starlette's keep-alive comment."""
    return ensure_bytes(ServerSentEvent(comment=f"ping - {datetime.now(UTC)}", sep=SEP),
                        SEP)


async def _until_disconnect(receive, stream):
    """Read the request until the client leaves, then end the stream."""
    try:
        while (await receive())["type"] != "http.disconnect":
            pass
    finally:
        stream.close()


class _Inbound:
    """State of the session's inbound stream: the POST requests send, the SDK's dispatcher
    receives; a send waits until its message is received (as the SDK's stream of no buffer)."""

    __slots__ = ("senders", "receiver", "sending_closed", "receiving_closed", "last_context")

    def __init__(self):
        self.senders = []  # (context, item, future) of the sends waiting to be received
        self.receiver = None  # the future of the receive waiting for a send
        self.sending_closed = self.receiving_closed = False
        self.last_context = None


class _Closing:
    """What anyio's memory object streams offer around ``close``: ``aclose`` and ``async with``."""

    __slots__ = ()

    async def aclose(self):
        self.close()

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        self.close()


class _InboundSend(_Closing):
    __slots__ = ("state",)

    def __init__(self, state):
        self.state = state

    async def send(self, item):
        state = self.state
        if self.state.sending_closed:
            raise anyio.ClosedResourceError
        if state.receiving_closed:
            raise anyio.BrokenResourceError
        context = contextvars.copy_context()
        receiver = state.receiver
        if receiver is not None and not receiver.done():
            state.receiver = None
            receiver.set_result((context, item))
            return
        taken = asyncio.get_running_loop().create_future()
        entry = (context, item, taken)
        state.senders.append(entry)
        try:
            await taken
        except BaseException:
            if entry in state.senders:
                state.senders.remove(entry)
            raise

    def close(self):
        state = self.state
        state.sending_closed = True
        if state.receiver is not None and not state.receiver.done():
            state.receiver.set_exception(anyio.EndOfStream())
        state.receiver = None


class _InboundReceive:
    __slots__ = ("state",)

    def __init__(self, state):
        self.state = state

    @property
    def last_context(self):
        return self.state.last_context

    async def receive(self):
        state = self.state
        if state.receiving_closed:
            raise anyio.ClosedResourceError
        if state.senders:
            context, item, taken = state.senders.pop(0)
            if not taken.done():
                taken.set_result(None)
            state.last_context = context
            return item
        if state.sending_closed:
            raise anyio.EndOfStream
        waiter = state.receiver = asyncio.get_running_loop().create_future()
        try:
            context, item = await waiter
        except BaseException:
            if state.receiver is waiter:
                state.receiver = None
            if waiter.done() and not waiter.cancelled() and waiter.exception() is None:
                state.senders.insert(0, (*waiter.result(), waiter))  # handed over, not taken
            raise
        state.last_context = context
        return item

    def close(self):
        state = self.state
        state.receiving_closed = True
        senders, state.senders = state.senders, []
        for _, _, taken in senders:
            if not taken.done():
                taken.set_exception(anyio.BrokenResourceError())
        if state.receiver is not None and not state.receiver.done():
            state.receiver.set_exception(anyio.ClosedResourceError())
        state.receiver = None

    async def aclose(self):
        self.close()

    def __aiter__(self):
        return self

    async def __anext__(self):
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        self.close()


class _Outbound(_Closing):
    """The session's outbound stream: each message the SDK's dispatcher sends is routed (stored
    for resumption, then handed to its request's stream or the GET stream) in the sender's task,
    one at a time in the order they come, to completion."""

    __slots__ = ("transport", "lock", "closed")

    def __init__(self, transport):
        self.transport, self.lock, self.closed = transport, asyncio.Lock(), False

    async def send(self, session_message):
        if self.closed:
            raise anyio.ClosedResourceError
        async with self.lock:
            with anyio.CancelScope(shield=True):
                try:
                    await self.transport._route(session_message)
                except Exception:
                    log.exception("a2ui: an MCP message was not routed")

    def close(self):
        self.closed = True


class Transport(StreamableHTTPServerTransport):
    @asynccontextmanager
    async def connect(self):
        """The SDK's ``connect`` with the streams of the module's docstring: no router task."""
        if self._idle_timeout is not None:
            self.idle_scope = anyio.CancelScope()
        inbound = _Inbound()
        self._read_stream_writer = read_writer = _InboundSend(inbound)
        self._read_stream = read_stream = _InboundReceive(inbound)
        self._write_stream = write_stream = _Outbound(self)
        self._write_stream_reader = None
        try:
            yield read_stream, write_stream
        finally:
            for stream_id in list(self._request_streams):
                await self._clean_up_memory_streams(stream_id)
            self._request_streams.clear()
            read_writer.close()
            read_stream.close()
            write_stream.close()

    async def _route(self, session_message):
        """The body of the SDK's ``message_router`` for one message."""
        message = session_message.message
        target = None
        # A response with a known request id goes to its request's stream; null-id errors
        # (e.g. parse errors) fall through to the GET stream since they can't be correlated.
        if isinstance(message, JSONRPCResponse | JSONRPCError) and message.id is not None:
            target = str(message.id)
        elif (isinstance(session_message.metadata, ServerMessageMetadata)
              and session_message.metadata.related_request_id is not None):
            if self.is_json_response_enabled:
                return  # a JSON body carries only the response: this one has no wire form
            target = str(session_message.metadata.related_request_id)
        stream_id = target if target is not None else GET_STREAM_KEY
        # Stored whether or not a client is connected: it is replayed when it comes back.
        event_id = None
        if self._event_store:
            event_id = await self._event_store.store_event(stream_id, message)
        streams = self._request_streams.get(stream_id)
        if streams is not None:
            try:
                await streams[0].send(EventMessage(message, event_id))
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                if self._request_streams.get(stream_id) is streams:  # not a newer stream
                    self._request_streams.pop(stream_id, None)

    def _message_metadata(self, request, *, close_sse_stream=None,
                          close_standalone_sse_stream=None, on_request_unanswered=None):
        if on_request_unanswered is None:  # a notification or a response of the client
            request = Request({key: request.scope[key] for key in SLIM_SCOPE
                               if key in request.scope})
        return super()._message_metadata(
            request, close_sse_stream=close_sse_stream,
            close_standalone_sse_stream=close_standalone_sse_stream,
            on_request_unanswered=on_request_unanswered)

    async def _handle_get_request(self, request, send):
        """The SDK's ``_handle_get_request``, with the stream served as the module says."""
        if self._read_stream_writer is None:  # pragma: no cover - connect() runs first
            raise ValueError("No read stream writer available. Ensure connect() is called first.")
        _, has_sse = check_accept_headers(request)
        if not has_sse:
            response = self._create_error_response(
                "Not Acceptable: Client must accept text/event-stream", HTTPStatus.NOT_ACCEPTABLE)
            await response(request.scope, request.receive, send)
            return
        if not await self._validate_request_headers(request, send):
            return
        if last_event_id := request.headers.get(LAST_EVENT_ID_HEADER):
            await self._replay_events(last_event_id, request, send)
            return
        if GET_STREAM_KEY in self._request_streams:
            response = self._create_error_response(
                "Conflict: Only one SSE stream is allowed per session", HTTPStatus.CONFLICT)
            await response(request.scope, request.receive, send)
            return
        # The headers of the SDK's stream, as sse-starlette completes them.
        headers = [(b"cache-control", b"no-cache, no-transform"), (b"connection", b"keep-alive"),
                   (b"content-type", CONTENT_TYPE_SSE.encode())]
        if self.mcp_session_id:
            headers.append((MCP_SESSION_ID_HEADER.encode(), self.mcp_session_id.encode()))
        headers.append((b"x-accel-buffering", b"no"))

        loop = asyncio.get_running_loop()
        stream = _GetStream(self, send, loop.create_future())
        self._request_streams[GET_STREAM_KEY] = (stream, stream)
        listener = loop.create_task(_until_disconnect(request.receive, stream))
        start, headers = {"type": "http.response.start", "status": 200, "headers": headers}, None
        try:
            await send(start)
            start = None  # not kept while the stream idles
            while not stream.done.done():
                await asyncio.wait((stream.done,), timeout=PING_SECONDS)
                if not stream.done.done():
                    await send({"type": "http.response.body", "body": ping(), "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        except Exception:
            log.debug("a2ui: MCP GET stream ended by an error", exc_info=True)
        finally:
            stream.close()
            listener.cancel()
            if self._request_streams.get(GET_STREAM_KEY, (None,))[0] is stream:
                self._request_streams.pop(GET_STREAM_KEY, None)
