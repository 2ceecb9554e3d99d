"""What every socket of the app shares: frames a real transport can carry, close codes Daphne
accepts, a consumer that never crashes, and no per-frame thread hop.

Channels >= 4.2 runs ``aclose_old_connections()`` (a thread hop) before every handler and at the
end of ``websocket_disconnect``. Our handlers reach the database only through
``database_sync_to_async`` and ``a2ui.infra.dbthreads``, which look after their connections
themselves, so ``dispatch`` and the close skip that hop.
"""

import asyncio
import collections
import json
import logging
import re

from channels.consumer import get_handler_name
from channels.exceptions import StopConsumer
from channels.generic.websocket import AsyncWebsocketConsumer

from a2ui.conf import a2ui_settings
from a2ui.consumers import dispatch as dispatching
from a2ui.infra import memory, outages, prom

try:  # what Daphne raises for a send racing the peer's close, before websocket.disconnect
    from autobahn.exception import Disconnected as TransportClosed
except ImportError:  # pragma: no cover - another ASGI server
    class TransportClosed(Exception):
        pass
from a2ui.core.content import limits
from a2ui.core.errors import DomainError
from a2ui.rpc import jsonrpc
from a2ui.rpc.errors import ErrorCode, ProtocolError

log = logging.getLogger("a2ui.consumers")

NO_RESPONSE = object()  # a handler that answers later (or has answered) returns this

_SURROGATE = re.compile("[\ud800-\udfff]")


def transportable(text):
    """``text`` (JSON) as UTF-8 can carry it: lone surrogates become ``\\uXXXX`` escapes.

    JSON allows ``"\\ud800"`` and Python decodes it to a lone surrogate, which UTF-8 cannot
    encode: echoed back raw, it would make Daphne drop the socket with 1011. Outside strings
    JSON text is ASCII, so escaping each surrogate in place keeps the same JSON value.
    """
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return text


def wire_text(obj):
    """JSON text for a reply or notification that never raises on what it echoes.

    A value JSON cannot hold (NaN, Infinity, a non-JSON type) in an error's ``data`` drops the
    data; in a result it turns the reply into -32603; a notification carrying one is not sent
    (None).
    """
    try:
        return transportable(jsonrpc.encode(obj))
    except (ValueError, TypeError):
        pass
    if not isinstance(obj, dict) or "id" not in obj:
        log.warning("a2ui: dropped a notification that is not valid JSON")
        return None
    error = obj.get("error")
    if isinstance(error, dict):
        code, message = error.get("code", ErrorCode.INTERNAL_ERROR), error.get("message")
        reply = jsonrpc.error_response(obj["id"], code, message if isinstance(message, str)
                                       else None)
    else:
        log.warning("a2ui: a result that is not valid JSON was answered -32603")
        reply = jsonrpc.error_response(obj["id"], ErrorCode.INTERNAL_ERROR)
    return transportable(json.dumps(reply, separators=(",", ":"), ensure_ascii=False,
                                    default=str))


def _disconnect_waiting(receive):
    """True when the ASGI ``receive`` is a queue's ``get`` (Daphne's, the test communicator's)
    and a ``websocket.disconnect`` waits in that queue."""
    items = getattr(getattr(receive, "__self__", None), "_queue", ())
    return any(isinstance(m, dict) and m.get("type") == "websocket.disconnect" for m in items)


class SafeSocketMixin:
    """What keeps a socket alive whatever it is sent: Daphne-proof close codes and frames, and
    a last-resort guard so that no exception ever crashes the consumer (Daphne's 1011)."""

    async def close(self, code=None, reason=None):
        # Daphne (autobahn) refuses any close code whose type is not exactly int, and our
        # close codes are IntEnum members: the socket would die with 1011 instead.
        if code is not None and code is not True:
            code = int(code)
        await super().close(code=code, reason=reason)

    async def send(self, text_data=None, bytes_data=None, close=False):
        if text_data is not None:
            text_data = transportable(text_data)
        try:
            await super().send(text_data=text_data, bytes_data=bytes_data, close=close)
        except TransportClosed:
            # The peer closed (or the frame it sent was over the cap) and the disconnect is
            # still on its way: nothing can reach it any more, and nothing is wrong here.
            self.gone = True

    async def dispatch(self, message):
        try:
            await self.dispatch_guarded(message)
        except StopConsumer:
            raise
        except Exception as exc:
            # A bug, not the peer's fault: log it once, answer without detail, live on (an
            # outage of Redis or the database is one line: services.outages).
            if not outages.report(exc, message.get("type"), self.outage_session()):
                log.exception("a2ui: unexpected error handling %s", message.get("type"))
            if message.get("type") == "websocket.disconnect":
                raise StopConsumer() from None  # the socket is gone: end, do not linger
            if getattr(self, "gone", False):
                return
            if message.get("type") == "websocket.connect":
                await self.close()  # before accept: the handshake is denied (HTTP 403)
            elif message.get("type") == "websocket.receive":
                await self.internal_error()

    gone = False  # the socket closed; work still finishing must not write to it

    def outage_session(self, params=None):
        """The session a failure was for, for its log line: the message's, else the socket's."""
        session = params.get("session_id") if isinstance(params, dict) else None
        return session if session is not None else getattr(self, "session_id", None)

    @property
    def max_payload_size(self):
        """Every protocol's frame limit, in UTF-8 bytes (``A2UI['MAX_PAYLOAD_SIZE']``)."""
        return a2ui_settings.MAX_PAYLOAD_SIZE

    def oversized(self, raw):
        """True for a frame over the limit (or none at all): each protocol answers it with its
        own payload-too-large error before reading it. ``a2ui serve`` lets frames up to twice
        the limit reach the app, so the client hears why (``a2ui.serving``)."""
        return raw is None or limits.over_limit(raw, self.max_payload_size)

    async def dispatch_guarded(self, message):
        """The handler for ``message`` (no per-frame thread hop: see the module's docs)."""
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            # A channel-layer message for another kind of socket in the same groups (or from
            # a newer version of the app): not this socket's business.
            if message.get("type", "").startswith("websocket."):
                raise ValueError(f"No handler for message type {message['type']}")
            return
        await handler(message)

    #: The socket's clean-up (``websocket_disconnect``), once started: a task of its own.
    _closing = None

    _left = None  # the websocket.disconnect received, once it was

    async def __call__(self, scope, receive, send):
        async def watched():
            message = await receive()
            if message.get("type") == "websocket.disconnect":
                self._left = message
            return message

        try:
            return await dispatching.run_consumer(self, scope, watched, send)
        except asyncio.CancelledError:
            # Daphne cancels an application still running ``application_close_timeout`` (10 s)
            # after its client left. Under a mass close thousands of disconnects queue behind
            # each other, and many are cancelled while they wait or halfway through: their
            # clean-up (direct delivery, socket counts, leases, the session's detach) still
            # runs, in a task the cancel does not reach. (Halfway: ``websocket_disconnect``
            # started it. Still waiting: the disconnect was received, or waits in the
            # application's queue. Any other cancel, the event loop's end, is left as it was.)
            if self._closing is None and (self._left is not None or _disconnect_waiting(receive)):
                self._start_closing(self._left or {"type": "websocket.disconnect", "code": 1006})
            raise

    async def websocket_disconnect(self, message):
        self.gone = True
        if self._closing is None:
            self._start_closing(message)
        await asyncio.shield(self._closing)
        raise StopConsumer()

    def _start_closing(self, message):
        self.gone = True
        self._closing = asyncio.get_running_loop().create_task(self._close_once(message))
        memory.finishing(self._closing)

    async def _close_once(self, message):
        """``AsyncWebsocketConsumer.websocket_disconnect``: groups left, then ``disconnect``; a
        failure logged as :meth:`dispatch` logs one. Without its ``aclose_old_connections()``:
        a thread hop per socket (see the module's docs), a third of a close's time on the event
        loop when 10,000 sockets close at once."""
        try:
            for group in self.groups:
                await self.channel_layer.group_discard(group, self.channel_name)
            await self.disconnect(message["code"])
        except StopConsumer:
            pass
        except Exception as exc:
            if not outages.report(exc, "websocket.disconnect", self.outage_session()):
                log.exception("a2ui: unexpected error handling websocket.disconnect")

    async def internal_error(self):
        """What the peer is told when the guard caught something."""


class JsonRpcConsumer(SafeSocketMixin, AsyncWebsocketConsumer):
    async def internal_error(self):
        await self.send_obj(ProtocolError(ErrorCode.INTERNAL_ERROR).to_response())

    async def send_obj(self, obj):
        if not self.gone:
            text = wire_text(obj)
            if text is not None:
                await self.send(text_data=text)

    async def send_error(self, exc, request_id=None):
        if exc.request_id is None:
            exc.request_id = request_id
        await self.send_obj(exc.to_response())

    #: The metrics' protocol label of the socket's refusals (``prom.refused``).
    refusal_protocol = "jsonrpc"

    async def refuse_input(self, exc, request_id=None):
        """:meth:`send_error` for a refusal of what the client sent (counted in the metrics;
        not an internal error or an outcome it awaited)."""
        if prom.ON:
            prom.refused(self.refusal_protocol, int(exc.code))
        await self.send_error(exc, request_id)

    async def reject(self, code, reason):
        """Accept, say why in a JSON-RPC error, and close: the client learns the reason."""
        await self.accept()
        await self.refuse_input(ProtocolError(code, data={"reason": reason}))
        await self.close(code=ProtocolError(code).close_code)

    async def receive(self, text_data=None, bytes_data=None):
        raw = text_data if text_data is not None else bytes_data
        try:
            msg = jsonrpc.parse(raw or "", max_size=self.max_payload_size)
        except ProtocolError as exc:
            if not await self.took_response(raw):
                await self.refuse_input(exc)
            return
        if await self.respond_to(msg, self.handle(msg)):
            await self.after_response()

    async def respond_to(self, msg, work):
        """Await ``work`` (a coroutine) and answer ``msg`` with its result or error.

        Failed notifications are answered too (with a null id): a silent drop would leave a
        person staring at a form that did nothing. Returns True when the work succeeded.
        """
        try:
            result = await work
        except DomainError as exc:
            await self.refuse_input(ProtocolError.of(exc), msg.id)
            return False
        except Exception as exc:
            if not outages.report(exc, msg.method, self.outage_session(msg.params)):
                log.exception("a2ui: unexpected error handling %s", msg.method)
            await self.send_error(ProtocolError(ErrorCode.INTERNAL_ERROR), msg.id)
            return False
        if result is not NO_RESPONSE and not msg.is_notification:
            await self.send_obj(jsonrpc.result(msg.id, result))
        return True

    async def after_response(self):
        """Hook: work to do once the response to the current message has gone out."""

    async def took_response(self, raw):
        """Hook: ``raw``, not a request, is the peer's response to a request of ours (True:
        taken; False: refused as an invalid request). Only the agent socket sends requests."""
        return False

    async def handle(self, msg):  # pragma: no cover - abstract
        raise NotImplementedError


class DirectDeliveryMixin:
    """Takes pushes handed over by ``a2ui.push.direct``, one message at a time, in order.

    A direct push is handled at once only when the consumer is idle: not handling a message and
    holding none received from the channel layer but not yet dispatched (the receive task is
    done before ``dispatch`` runs). Otherwise it waits in ``_deferred`` and is handled right
    after the current message, by whoever holds ``_turn``. The subclass handles events in
    ``a2ui_event`` and keeps ``last_seq`` (``consumers.socket.SessionSocket``).
    """

    last_seq = 0
    loop = None
    _in_hand = False
    _deferred = ()  # a deque while pushes wait (an idle socket holds none: 760 bytes each)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._turn = asyncio.Lock()

    # Channels assigns ``channel_receive`` in __call__; wrap it to see a message in hand.
    @property
    def channel_receive(self):
        return self._receive_from_layer

    @channel_receive.setter
    def channel_receive(self, receive):
        self._layer_receive = receive
        self.loop = asyncio.get_running_loop()

    async def _receive_from_layer(self):
        message = await self._layer_receive()
        self._in_hand = True
        return message

    async def dispatch(self, message):
        if not message["type"].startswith("websocket."):
            self._in_hand = False
        async with self._turn:
            await super().dispatch(message)
            await self._drain()

    async def take_direct(self, event):
        if self._turn.locked() or self._in_hand or self._deferred:
            if not self._deferred:
                self._deferred = collections.deque()
            self._deferred.append(event)
            return
        async with self._turn:
            await self._push(event)
            await self._drain()

    async def _drain(self):
        while self._deferred:
            await self._push(self._deferred.popleft())
        self._deferred = ()

    async def _push(self, event):
        """A failure here is this socket's, not the sender's: log it as the layer path would."""
        try:
            await self.a2ui_event(event)
        except Exception as exc:
            if not outages.report(exc, "direct push", self.outage_session()):
                log.exception("a2ui: direct push to %s failed",
                              getattr(self, "channel_name", "?"))
