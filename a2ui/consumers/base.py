"""What every JSON-RPC socket shares: framing, error replies, and no per-frame thread hop.

Channels >= 4.2 runs ``aclose_old_connections()`` (a thread hop) before every handler. Our
handlers reach the database only through ``database_sync_to_async``, which closes stale
connections itself, so ``dispatch`` skips that hop on the per-message path.
"""

import asyncio
import collections
import logging

from channels.consumer import get_handler_name
from channels.generic.websocket import AsyncWebsocketConsumer

from ..conf import a2ui_settings
from ..protocol import jsonrpc
from ..protocol.errors import ErrorCode, ProtocolError

log = logging.getLogger("a2ui.consumers")

NO_RESPONSE = object()  # a handler that answers later (or has answered) returns this


class JsonRpcConsumer(AsyncWebsocketConsumer):
    async def dispatch(self, message):
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        await handler(message)

    async def close(self, code=None, reason=None):
        # Daphne (autobahn) refuses any close code whose type is not exactly int, and our
        # close codes are IntEnum members: the socket would die with 1011 instead.
        if code is not None and code is not True:
            code = int(code)
        await super().close(code=code, reason=reason)

    gone = False  # the socket closed; work still finishing must not write to it

    async def websocket_disconnect(self, message):
        self.gone = True
        await super().websocket_disconnect(message)

    async def send_obj(self, obj):
        if not self.gone:
            await self.send(text_data=jsonrpc.encode(obj))

    async def send_error(self, exc, request_id=None):
        if exc.request_id is None:
            exc.request_id = request_id
        await self.send_obj(exc.to_response())

    async def reject(self, code, reason):
        """Accept, say why in a JSON-RPC error, and close: the client learns the reason."""
        await self.accept()
        await self.send_error(ProtocolError(code, data={"reason": reason}))
        await self.close(code=ProtocolError(code).close_code)

    async def receive(self, text_data=None, bytes_data=None):
        raw = text_data if text_data is not None else bytes_data
        try:
            msg = jsonrpc.parse(raw or "", max_size=a2ui_settings.MAX_PAYLOAD_SIZE)
        except ProtocolError as exc:
            await self.send_error(exc)
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
        except ProtocolError as exc:
            await self.send_error(exc, msg.id)
            return False
        except Exception:
            log.exception("a2ui: unexpected error handling %s", msg.method)
            await self.send_error(ProtocolError(ErrorCode.INTERNAL_ERROR), msg.id)
            return False
        if result is not NO_RESPONSE and not msg.is_notification:
            await self.send_obj(jsonrpc.result(msg.id, result))
        return True

    async def after_response(self):
        """Hook: work to do once the response to the current message has gone out."""

    async def handle(self, msg):  # pragma: no cover - abstract
        raise NotImplementedError


class DirectDeliveryMixin:
    """Takes pushes handed over by ``a2ui.services.direct``, one message at a time, in order.

    A direct push is handled at once only when the consumer is idle: not handling a message and
    holding none received from the channel layer but not yet dispatched (the receive task is
    done before ``dispatch`` runs). Otherwise it waits in ``_deferred`` and is handled right
    after the current message, by whoever holds ``_turn``. The subclass handles pushes in
    ``a2ui_push`` and keeps ``last_seq``.
    """

    last_seq = 0
    loop = None
    _in_hand = False

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._turn = asyncio.Lock()
        self._deferred = collections.deque()

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
            self._deferred.append(event)
            return
        async with self._turn:
            await self._push(event)
            await self._drain()

    async def _drain(self):
        while self._deferred:
            await self._push(self._deferred.popleft())

    async def _push(self, event):
        """A failure here is this socket's, not the sender's: log it as the layer path would."""
        try:
            await self.a2ui_push(event)
        except Exception:
            log.exception("a2ui: direct push to %s failed", getattr(self, "channel_name", "?"))
