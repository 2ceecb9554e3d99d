"""The AG-UI socket, /ws/agui?token=<stream_agui token>[&session_id=<id>] (seed 003).

On connect the token is checked (``stream_agui`` only: any other credential gets ERROR
CONNECTION_ERROR and close 4006), a session is opened (or ``session_id`` resumed, or the
person's detached session with the agent taken over) and CONNECTION_STATUS CONNECTED names it
(``session_id``); a resumed session's state follows (``mapping.session_state``: components,
v0.9 surfaces and open requests as RENDER_REQUESTs, then the activity: transcript, tool calls,
state document, plan cards, tree, roster, open artifacts), then the live events
(``a2ui.agui.mapping``). The person sends USER_ACTION and TEXT_MESSAGE (``a2ui.agui.actions``);
a refused frame is answered with ERROR and the socket stays usable. Before an operator close the client gets CONNECTION_STATUS DISCONNECTED.
"""

import logging
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer

from a2ui import surfaces, tokens
from a2ui.agui import PROTOCOL_VERSION, TOKEN_TYPE, mapping
from a2ui.agui import actions as agui_actions
from a2ui.agui import protocol as p
from a2ui.consent import choices as consent
from a2ui.consumers.base import DirectDeliveryMixin, SafeSocketMixin, transportable
from a2ui.consumers.socket import SessionSocket
from a2ui.core.errors import DomainError
from a2ui.infra import groups, outages, prom, shared
from a2ui.push import person, sweep
from a2ui.push import sessions as session_actions
from a2ui.rpc.errors import CLOSE_CODES, ErrorCode, ProtocolError
from a2ui.sessions import admission
from a2ui.sessions import lifecycle as sessions
from a2ui.sessions.counters import buffer

log = logging.getLogger("a2ui.agui")
CAPABILITIES = {"agui": {"version": PROTOCOL_VERSION}}


def _verify(raw):
    if not raw:
        raise tokens.TokenError("No credential presented: use ?token=<stream_agui token>.")
    kind = tokens.peek_any_stream_token(raw)
    if kind is not None and kind != TOKEN_TYPE:
        raise tokens.TokenError(f"A {kind} token is not valid here: use a stream_agui token.")
    return tokens.verify_stream_token(raw, TOKEN_TYPE)


class AguiConsumer(SessionSocket, DirectDeliveryMixin, SafeSocketMixin, AsyncWebsocketConsumer):
    adapter_name = "agui"
    client_protocol = "agui"  # declares no v0.9 catalog (a2ui.sessions.clients)

    async def internal_error(self):
        await self.send_event(p.error(p.CONNECTION_ERROR, "Internal error."))

    async def send_event(self, event):
        if self.gone:
            return
        try:
            text = p.encode(event)
        except (p.AguiError, ValueError, TypeError):
            log.warning("a2ui: dropped an AG-UI event that is not valid", exc_info=True)
            return
        await self.send(text_data=transportable(text))

    # Connection ------------------------------------------------------------------------------

    async def connect(self):
        await self.accept()
        query = parse_qs(self.scope.get("query_string", b"").decode("latin-1"))
        try:
            self.token = await database_sync_to_async(_verify)((query.get("token") or [""])[0])
        except tokens.TokenError as exc:
            if exc.record is not None:
                await sessions.arecord_rejected(exc.record, exc.reason)
            await self.refuse(p.error(p.CONNECTION_ERROR, exc.reason, {"reason": "auth_failed"}),
                              CLOSE_CODES[ErrorCode.AUTH_FAILED])
            return
        except Exception as exc:  # the database is unreachable: say so, one log line
            if not outages.report(exc, "AG-UI authentication"):
                raise
            reason = f"Service unavailable ({outages.cause(exc)}); retry shortly."
            await self.refuse(p.error(p.CONNECTION_ERROR, reason, {"reason": "unavailable"}),
                              1000)
            return
        refused = await self.take_cap()
        if refused is not None:
            await self.refuse(mapping.fault_error(refused.fault, refused.message, refused.data),
                              CLOSE_CODES[ErrorCode.RATE_LIMITED])
            return
        for group in (groups.token_group(self.token.jti), groups.user_group(self.token.user_id)):
            await self.join(group)
        sweep.ensure_started()
        requested = (query.get("session_id") or [None])[0]
        try:
            if requested:
                session, resumed = await admission.aresume_session(self.token, requested), True
            else:
                session, resumed = await session_actions.aadmit(
                    self.token, {"protocol": "agui"}, CAPABILITIES, reuse=True)
        except DomainError as exc:
            await self.refuse(mapping.fault_error(exc.fault, exc.message, exc.data),
                              ProtocolError.of(exc).close_code)
            return
        sid = session.session_id
        try:
            await self.load_consents(session)
            await self.attach(sid, fresh=not resumed)
            await shared.cache_session(sid.hex, session.agent_id, session.user_id)
        except BaseException:
            await self.unattach(sid, resumed, log)
            raise
        self.opened(sid)  # the connection is the handshake: connected -> streaming
        buffer.add(sid)
        await self.send_event(p.connection_status(
            "CONNECTED", "Resumed the session." if resumed else "Connected.", str(sid)))
        if resumed:
            await self.send_state()
        if self.missing_consents:
            await self.prompt_consents()
        self.start_stream()
        self.start_watchdog()
        await self.announce(session, resumed, CAPABILITIES)

    def count_refusal(self, error):
        """Count an ERROR event refusing what the client sent (``prom.refused``: its
        ``details.reason``, else its code); returns it."""
        if prom.ON:
            details = error.get("details")
            reason = details.get("reason") if isinstance(details, dict) else None
            prom.refused("agui", reason if isinstance(reason, str) else error.get("code"))
        return error

    async def refuse(self, error, code):
        if error.get("details", {}).get("reason") != "unavailable":  # an outage: its metric
            self.count_refusal(error)
        await self.send_event(error)
        await self.send_event(p.connection_status("FAILED", error["message"]))
        await self.refused(code)

    async def announce_expiry(self):
        await self.send_event(p.error(p.CONNECTION_ERROR, "Session inactive for too long.",
                                      {"reason": "session_expired"}))
        await self.send_event(p.connection_status("DISCONNECTED",
                                                  "Session inactive for too long."))

    # Inbound ---------------------------------------------------------------------------------

    async def receive(self, text_data=None, bytes_data=None):
        raw = text_data if text_data is not None else bytes_data
        try:
            if self.oversized(raw):
                raise p.AguiError(p.INVALID_EVENT_DATA, "The frame is too large.", {
                    "reason": "payload_too_large",
                    "max_payload_size": self.max_payload_size})
            await self.check_rate()  # every frame counts, refused ones too
            try:
                text = raw if isinstance(raw, str) else raw.decode("utf-8")
            except UnicodeDecodeError:
                raise p.AguiError(p.PARSE_ERROR, "The frame is not UTF-8 text.") from None
            event = p.parse_text(text)
            if self.session_id is None:
                raise p.AguiError(p.CONNECTION_ERROR, "No session is attached.")
            buffer.add(self.session_id)
            if event["type"] == "USER_ACTION":
                await agui_actions.user_action(self, event)
            else:
                await person.text_message(self, event)
        except p.AguiError as exc:
            await self.send_event(self.count_refusal(p.error_of(exc)))
        except DomainError as exc:  # a consent refusal was prompted by check_consent
            await self.send_event(self.count_refusal(
                mapping.fault_error(exc.fault, exc.message, exc.data)))
        except Exception as exc:
            if not outages.report(exc, "AG-UI event", self.outage_session()):
                log.exception("a2ui: unexpected error on the AG-UI socket")
            await self.internal_error()

    # Outbound --------------------------------------------------------------------------------

    async def show(self, kind, message):
        # Translated and encoded once per event and process; each socket adds its envelope.
        for text in mapping.encoded_cached(self.session_id.hex, kind, message):
            if text is None:
                log.warning("a2ui: dropped an AG-UI event that is not valid")
            elif not self.gone:
                await self.send(text_data=transportable(p.frame(text)))

    async def send_state(self):
        snapshot = await sessions.asnapshot(self.session_id)
        _, states = await surfaces.aload(self.session_id)
        for event in mapping.session_state(
                snapshot.components, snapshot.requests,
                [s.snapshot_messages() for s in states if not s.deleted], snapshot.activity):
            await self.send_event(event)

    async def prompt_consents(self):
        await self.send_event(mapping.consent_required(
            {"consent_types": consent.describe(self.missing_consents)}))

    async def announce_close(self, code, reason):
        await self.send_event(p.connection_status("DISCONNECTED", reason or None))
