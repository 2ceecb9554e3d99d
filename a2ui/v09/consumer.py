"""The pure A2UI v0.9 socket, /ws/v09/a2ui?token=<stream token>[&session_id=<id>].

One JSON message per frame, ``version`` on each (docs/protocol-v09.md):

1. the client sends its capabilities first:
   ``{"version": "v0.9", "capabilities": {"v0.9": {"supportedCatalogIds": [...]}}}``;
2. the server opens a session (or resumes ``session_id``), answers
   ``{"version": "v0.9", "session": {"sessionId": ..., "resumed": bool}}``, then sends each
   surface's current state and the live updates, one server message per frame (the agent's
   v0.9 surfaces, and seed-000 components and requests translated by ``a2ui.v09.view``);
3. the client sends ``action`` and ``error`` messages; a refused one is answered with the
   standard ``{"version": "v0.9", "error": {"code": "VALIDATION_FAILED", ...}}``.

Authentication is the stream-token middleware's (``scope["a2ui_auth"]``); a socket without a
valid token gets an error frame and close 4006, like the JSON-RPC socket.
"""

import json
import logging
from urllib.parse import parse_qs

from channels.generic.websocket import AsyncWebsocketConsumer

from a2ui import surfaces as surface_service
from a2ui.consumers.base import DirectDeliveryMixin, SafeSocketMixin
from a2ui.consumers.socket import SessionSocket
from a2ui.core.content import jsonvalue
from a2ui.core.errors import DomainError
from a2ui.core.events import Kind
from a2ui.core.surfaces import PROTOCOL_VERSION, translate
from a2ui.infra import groups, outages, prom
from a2ui.push import person, sweep
from a2ui.push import sessions as session_actions
from a2ui.rpc.errors import CLOSE_CODES, ErrorCode, ProtocolError
from a2ui.sessions import lifecycle as sessions
from a2ui.sessions.counters import buffer
from a2ui.v09.view import SessionView

log = logging.getLogger("a2ui.consumers")

CLOSE_BAD_HANDSHAKE = 1008  # policy violation: no valid capabilities message in time


def error_frame(code, message, **extra):
    return {"version": PROTOCOL_VERSION, "error": {"code": code, "message": message, **extra}}


def protocol_error_frame(exc):
    """A JSON-RPC-style ProtocolError as a v0.9 error frame (code is the error's name)."""
    try:
        name = ErrorCode(exc.code).name
    except ValueError:
        name = str(exc.code)
    extra = {"data": exc.data} if exc.data is not None else {}
    return error_frame(name, exc.message, rpcCode=int(exc.code), **extra)


class A2UIV09Consumer(SessionSocket, DirectDeliveryMixin, SafeSocketMixin,
                      AsyncWebsocketConsumer):
    adapter_name = "v09"
    tracker = None
    view = None  # seed-000 components and requests as v0.9 surfaces (a2ui.v09.view)
    client_protocol = "v09"

    def client_catalogs(self):
        return self.tracker.catalogs if self.tracker is not None else None

    async def internal_error(self):
        await self.send_json(error_frame("INTERNAL_ERROR", "Internal error."))

    async def send_json(self, obj):
        if self.gone:
            return
        try:
            text = json.dumps(obj, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        except (ValueError, TypeError):
            # Not JSON (NaN, Infinity): an error loses its echoed detail, anything else is
            # not sent. SafeSocketMixin.send escapes lone surrogates.
            if "error" not in obj:
                log.warning("a2ui: dropped a v0.9 frame that is not valid JSON")
                return
            error = obj["error"]
            text = json.dumps(error_frame(str(error.get("code")), str(error.get("message"))),
                              ensure_ascii=False, separators=(",", ":"))
        await self.send(text_data=text)

    async def refuse_input(self, frame):
        """:meth:`send_json` of an error frame refusing what the client sent (counted in the
        metrics by its code: ``prom.refused``)."""
        if prom.ON:
            error = frame.get("error") if isinstance(frame, dict) else None
            prom.refused("v09", error.get("code") if isinstance(error, dict) else "other")
        await self.send_json(frame)

    # Connection ------------------------------------------------------------------------------

    async def connect(self):
        auth = self.scope.get("a2ui_auth")
        await self.accept()
        if auth is not None and auth.unavailable:
            await self.send_json(error_frame(ErrorCode.INTERNAL_ERROR.name, auth.error))
            await self.refused(None)
            return
        if auth is None or auth.token is None:
            reason = auth.error if auth is not None else "No credential presented."
            await self.refuse_input(error_frame(ErrorCode.AUTH_FAILED.name, reason or
                                                "Authentication failed."))
            await self.refused(CLOSE_CODES[ErrorCode.AUTH_FAILED])
            return
        self.token = auth.token
        refused = await self.take_cap()
        if refused is not None:
            await self.refuse_input(protocol_error_frame(ProtocolError.of(refused)))
            await self.refused(CLOSE_CODES[ErrorCode.RATE_LIMITED])
            return
        query = parse_qs(self.scope.get("query_string", b"").decode("latin-1"))
        self.requested_session = (query.get("session_id") or [None])[0]
        for group in (groups.token_group(self.token.jti), groups.user_group(self.token.user_id)):
            await self.channel_layer.group_add(group, self.channel_name)
            self.groups.append(group)
        sweep.ensure_started()
        self.start_watchdog()
        self.start_handshake_deadline()

    async def handshake_missed(self):
        await self.refuse_input(error_frame(
            "CAPABILITIES_REQUIRED", "No capabilities message arrived in time."))
        await self.close(code=CLOSE_BAD_HANDSHAKE)

    async def announce_expiry(self):
        await self.send_json(error_frame("SESSION_EXPIRED", "Session inactive for too long.",
                                         rpcCode=int(ErrorCode.SESSION_EXPIRED)))

    # Inbound ---------------------------------------------------------------------------------

    async def receive(self, text_data=None, bytes_data=None):
        raw = text_data if text_data is not None else bytes_data
        try:
            if self.oversized(raw):
                raise ProtocolError(ErrorCode.PAYLOAD_TOO_LARGE,
                                    data={"max_payload_size": self.max_payload_size})
            try:  # the JSON value policy (a2ui.core.content.jsonvalue), as on every edge
                obj = jsonvalue.loads(raw if isinstance(raw, str) else raw.decode("utf-8"))
            except jsonvalue.JSONValueError as exc:
                raise ProtocolError(ErrorCode.INVALID_PARAMS, data={
                    "path": exc.pointer, "reason": exc.reason}) from None
            except (ValueError, RecursionError):
                raise ProtocolError(ErrorCode.PARSE_ERROR) from None
            await self.check_rate()
            if self.session_id is None:
                await self.during_handshake(self.handshake(obj))
            else:
                await self.client_message(obj)
        except surface_service.SurfaceValidationError as exc:
            await self.refuse_input(exc.body)
        except DomainError as exc:
            exc = ProtocolError.of(exc)
            await self.refuse_input(protocol_error_frame(exc))
            if exc.code in (ErrorCode.SESSION_NOT_FOUND, ErrorCode.SESSION_EXPIRED,
                            ErrorCode.MAX_SESSIONS) and self.session_id is None:
                await self.refused(exc.close_code)
        except Exception as exc:
            if not outages.report(exc, "v0.9 message", self.outage_session()):
                log.exception("a2ui: unexpected error on the v0.9 socket")
            await self.send_json(error_frame("INTERNAL_ERROR", "Internal error."))

    async def handshake(self, obj):
        capabilities = surface_service.parse_client_capabilities(obj)
        session, resumed = await session_actions.aattach(
            self.token, self.requested_session, capabilities
        )
        self.stop_handshake_deadline()
        sid = session.session_id
        try:
            await self.load_consents(session)
            catalogs = surface_service.client_catalog_ids(capabilities)
            self.tracker = surface_service.Tracker(catalogs)
            self.view = SessionView(catalogs)
            await self.attach(sid, fresh=not resumed)
            await surface_service.aremember(session)
        except BaseException:
            await self.unattach(sid, resumed, log)
            raise
        self.opened(sid)
        buffer.add(sid)
        state = await self.read_state()  # before the hello: a push its client sends after it
        await self.send_json({"version": PROTOCOL_VERSION, "session": {  # arrives live
            "sessionId": str(sid), "resumed": resumed}})
        for message in state:
            await self.send_json(message)
        self.start_stream()
        await self.announce(session, resumed, capabilities)

    async def client_message(self, obj):
        buffer.add(self.session_id)
        if isinstance(obj, dict) and ("capabilities" in obj or "a2uiClientCapabilities" in obj):
            raise ProtocolError(ErrorCode.INVALID_REQUEST, "Capabilities were already sent.")
        data_model = None
        if isinstance(obj, dict) and "metadata" in obj:
            obj = dict(obj)
            metadata = obj.pop("metadata")
            if isinstance(metadata, dict):
                data_model = metadata.get("a2uiClientDataModel")
        await person.aclient_messages(self.session_id, [obj], data_model,
                                               answers=translate.ANSWERS, via="v09")

    # Outbound --------------------------------------------------------------------------------

    async def read_state(self):
        """The session's state as frames (the tracker and view reset to it)."""
        seq, states = await surface_service.aload(self.session_id)
        snap = await sessions.asnapshot(self.session_id)
        return self.tracker.resync(seq, states) + self.view.reset(snap.components,
                                                                 snap.requests)

    async def send_state(self):
        for message in await self.read_state():
            await self.send_json(message)

    async def show(self, kind, message):
        if self.tracker is None:
            return
        if kind is not Kind.SURFACE_BATCH:  # seed 000's components and requests, translated
            messages = self.view.event(kind, message["data"])
            if messages is None:
                await self.send_state()
                return
            for frame in messages:
                await self.send_json(frame)
            return
        messages = self.tracker.accept(surface_service.tracked(message["data"]))
        if messages is None:
            await self.send_state()
            return
        for frame in messages:
            await self.send_json(frame)
