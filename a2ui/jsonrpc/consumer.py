"""The user socket, /ws/v4/a2ui?token=<stream_a2ui token>: seed 000's UI side.

Lifecycle (seed section 6): the token is checked at connect (-32006 and close 4006 otherwise),
``a2ui.init`` opens or resumes a session, then agent pushes arrive through the session's group
and user answers go to the services. Every push carries a sequence number; a gap means the
channel layer dropped something, and the socket is resynchronised from the database.
"""


from django.utils import translation
from django.utils.translation import gettext_lazy

from a2ui import surfaces as surface_service
from a2ui.compliance import replay as replaylog
from a2ui.conf import a2ui_settings
from a2ui.consent import choices as consent
from a2ui.consumers.base import NO_RESPONSE, DirectDeliveryMixin, JsonRpcConsumer, log
from a2ui.consumers.socket import SessionSocket
from a2ui.core.content import methods
from a2ui.core.errors import DomainError, Fault
from a2ui.core.events import Kind
from a2ui.infra import groups, shared
from a2ui.jsonrpc import events as wire
from a2ui.jsonrpc.capabilities import server_capabilities
from a2ui.push import answers, person, sweep
from a2ui.push import sessions as session_actions
from a2ui.requests import pending
from a2ui.rpc import jsonrpc
from a2ui.rpc.errors import CLOSE_CODES, ErrorCode, ProtocolError
from a2ui.sessions import admission, clients, presence
from a2ui.sessions import lifecycle as sessions
from a2ui.sessions.counters import buffer
from a2ui.web.i18n import scope_language

State = sessions.State
#: Operator closes (a2ui.push.revocation) and the title of the notice sent before them.
OPERATOR_CLOSES = {4010: gettext_lazy("Session terminated"), 4011: gettext_lazy("Access revoked")}


class A2UIUserConsumer(SessionSocket, DirectDeliveryMixin, JsonRpcConsumer):
    adapter_name = "jsonrpc"
    surface_tracker = None  # a2ui.surfaces.Tracker once a v0.9 client initialized
    presence_of = None  # the agent whose presence this socket is told (a2ui.sessions.presence)
    client_protocol = "jsonrpc"

    def client_catalogs(self):
        return self.surface_tracker.catalogs if self.v09 and self.surface_tracker else None

    # Connection ------------------------------------------------------------------------------

    async def connect(self):
        auth = self.scope.get("a2ui_auth")
        if auth is not None and auth.unavailable:
            await self.reject(ErrorCode.INTERNAL_ERROR, auth.error)
            return
        if auth is None or auth.token is None:
            reason = auth.error if auth is not None else "No credential presented."
            if auth is not None and auth.refused_token is not None:
                await sessions.arecord_rejected(auth.refused_token, reason)
            await self.reject(ErrorCode.AUTH_FAILED, reason)
            return
        self.token = auth.token
        # The texts the server writes for the person (consents, an operator's close) are in
        # the page's language: the handshake's language cookie or Accept-Language.
        self.language = scope_language(self.scope)
        refused = await self.take_cap()
        if refused is not None:
            await self.accept()
            await self.refuse_input(ProtocolError.of(refused))
            await self.refused(CLOSE_CODES[ErrorCode.RATE_LIMITED])
            return
        self.last_seq = 0
        self.v09 = False
        self.pending_out = []
        await self.join(groups.token_group(self.token.jti))
        await self.join(groups.user_group(self.token.user_id))
        await self.accept()
        sweep.ensure_started()
        self.start_watchdog()
        self.start_handshake_deadline()

    async def handshake_missed(self):
        await self.send_error(ProtocolError(
            ErrorCode.SESSION_NOT_FOUND, "No a2ui.init arrived in time: send it first.",
            data={"timeout_seconds": self.HANDSHAKE_TIMEOUT_SECONDS}))
        await self.close(code=int(CLOSE_CODES[ErrorCode.SESSION_NOT_FOUND]))

    async def announce_expiry(self):
        await self.send_error(ProtocolError(ErrorCode.SESSION_EXPIRED))

    # Inbound ---------------------------------------------------------------------------------

    async def handle(self, msg):
        await self.check_rate()
        handler = self.HANDLERS.get(msg.method)
        if handler is None:
            if msg.method in methods.AGENT_TO_UI:
                raise ProtocolError(
                    ErrorCode.METHOD_NOT_FOUND, "Method not allowed from the UI side",
                    data={"method": msg.method},
                )
            raise ProtocolError(ErrorCode.METHOD_NOT_FOUND, data={"method": msg.method[:100]})
        if msg.method != "a2ui.init":
            if self.session_id is None:
                raise ProtocolError(
                    ErrorCode.SESSION_NOT_FOUND, "Send a2ui.init first",
                )
            buffer.add(self.session_id)
            return await handler(self, msg)
        return await self.during_handshake(handler(self, msg))

    async def on_init(self, msg):
        params = methods.validate_params("a2ui.init", msg.params)
        if self.session_id is not None:
            raise ProtocolError(ErrorCode.INVALID_REQUEST, "Session already initialized")
        resumed = bool(params.get("session_id"))
        if resumed:
            session = await admission.aresume_session(self.token, params["session_id"])
        else:
            # A new tab takes over the person's detached session with this agent, if any
            # (services/admission.py): then it is a resume, snapshot included.
            try:
                session, resumed = await session_actions.aadmit(
                    self.token, params.get("client_info", {}), params.get("capabilities", {}),
                    reuse=True,
                )
            except DomainError as exc:
                if exc.fault != Fault.MAX_SESSIONS:
                    raise
                # Retrying cannot help: answer, then close with 4007 (docs/client.md).
                exc = ProtocolError.of(exc)
                await self.refuse_input(exc, msg.id)
                await self.refused(exc.close_code)
                return NO_RESPONSE
        try:
            snapshot = await self._attach(session, params, resumed)
            agent_status = await self._watch_agent(session.agent_id)
        except BaseException:
            await self.unattach(session.session_id, resumed, log)
            raise
        self.pending_out.append(self._after_init(session, snapshot))
        result = {
            "session_id": str(self.session_id),
            "server_capabilities": server_capabilities(
                a2ui_settings.MAX_PAYLOAD_SIZE, a2ui_settings.RATE_LIMIT_PER_MINUTE
            ),
            "resumed": resumed,
        }
        if agent_status is not None:
            result["agent_status"] = agent_status
        if consent.required_types():  # what the page lists under "Your consent"
            result["consents"] = self.consent_state()
        return result

    language = None

    def consent_state(self):
        with translation.override(self.language):
            return consent.state(self.missing_consents)

    async def _watch_agent(self, agent_id):
        """Join the agent's presence group, then read its presence: a change after the read
        arrives as an ``a2ui.agent_status`` notification after this answer (the initial state
        plus the changes is the current state). None: the session has no agent."""
        if not agent_id:
            return None
        group = groups.presence_group(agent_id)
        if group not in self.groups:
            await self.join(group)
        self.presence_of = agent_id
        return await presence.astatus(agent_id)

    async def _attach(self, session, params, resumed):
        """Count, join, read the sequence number and the snapshot; ``session_id`` set last.

        A failure on the way (Redis or the database gone) leaves the socket uninitialized, so
        the client's retry of ``a2ui.init`` works (``_unattach`` undoes what was done).
        """
        sid = session.session_id
        await self.load_consents(session)
        catalogs = self._declared_catalogs(session, params, resumed)
        self.v09 = catalogs is not None
        self.surface_tracker = surface_service.Tracker(catalogs)
        self.surface_tracker.seq = session.surface_seq
        await self.attach(sid, fresh=not resumed)
        snapshot = await sessions.asnapshot(sid) if resumed else None
        await shared.cache_session(sid.hex, session.agent_id, session.user_id)
        self.opened(sid)
        buffer.add(sid)
        return snapshot

    @staticmethod
    def _declared_catalogs(session, params, resumed):
        """The v0.9 catalogs this client is sent (None: no surfaces): what ``a2ui.init``
        declared; else, resuming, what this protocol's client declared before it left
        (``a2ui.sessions.clients``: kept with the session); else the session's opener's."""
        declared = params.get("capabilities") or {}
        if surface_service.declares_a2ui(declared):  # "v0.9.1" or "v0.9"
            return surface_service.client_catalog_ids(declared)
        if resumed:
            kept = clients.inherited(session, "jsonrpc")
            if kept is not clients.MISSING:
                return frozenset(kept) if isinstance(kept, list) else None
        return surface_service.client_catalog_ids(session.capabilities)

    async def _after_init(self, session, snapshot):
        if self.missing_consents:
            await self.prompt_consents()
        if snapshot is not None:
            await self.send_snapshot(snapshot)
        self.start_stream()
        await self.announce(session, snapshot is not None, session.capabilities)

    async def prompt_consents(self):
        with translation.override(self.language):
            data = {"consent_types": consent.describe(self.missing_consents)}
        await replaylog.arecord(self.session_id, 0, Kind.CONSENT_REQUIRED, data)
        await self.send(text_data=wire.encode(Kind.CONSENT_REQUIRED, data))

    async def after_response(self):
        while self.pending_out:
            await self.pending_out.pop(0)

    async def send_snapshot(self, snapshot):
        for c in snapshot.components:
            params = {k: c[k] for k in ("component_id", "component_type", "data", "metadata")}
            if not params["metadata"]:
                del params["metadata"]
            await self.send_obj(jsonrpc.notification("ui.render", params))
        for r in snapshot.requests:
            await self.send_obj(jsonrpc.notification(pending.METHOD_BY_KIND[r["kind"]], r["params"]))
        if self.v09:
            await self.send_surfaces_snapshot(snapshot.surfaces)
        if any(snapshot.activity.values()):  # the activity, whole: replaces what the client has
            await self.send_obj(jsonrpc.notification(
                "ui.activity", {"kind": "snapshot", "data": snapshot.activity}))

    async def send_surfaces_snapshot(self, states=None):
        """v0.9 surfaces as one ``a2ui.v09`` notification marked ``"snapshot": true``: what the
        client has is replaced (sent even when empty: a resuming client may hold surfaces
        deleted while it was away, which no message of the snapshot names).

        The states are re-read with their sequence number (``states`` may be older), after the
        socket joined the session group, so no live update falls between the two.
        """
        seq, loaded = await surface_service.aload(self.session_id)
        messages = self.surface_tracker.resync(seq, loaded)
        await self.send_obj(jsonrpc.notification("a2ui.v09", {"messages": messages,
                                                              "snapshot": True}))

    async def on_respond(self, msg):
        params = methods.validate_params("user.respond", msg.params)
        await self.check_consent()
        if not await answers.arespond(self.session_id, params["request_id"], params["value"],
                                      via="jsonrpc"):
            await self._forward_form(params)
        return {"ok": True}

    async def _forward_form(self, params):
        """A submitted form component goes to the agent as user.respond, keyed by its id."""
        await groups.tell_agent(await self.agent_id(), "user.respond", {
            "session_id": str(self.session_id),
            "request_id": params["request_id"],
            "component_id": params["request_id"],
            "value": params["value"],
        })

    async def on_approve(self, msg):
        params = methods.validate_params("user.approve", msg.params)
        await self.check_consent()
        value = {"approved": params["approved"], "reason": params.get("reason", "")}
        await answers.aanswer(self.session_id, params["request_id"], "confirm", value,
                             via="jsonrpc")
        return {"ok": True}

    async def on_cancel(self, msg):
        params = methods.validate_params("user.cancel", msg.params)
        await groups.tell_agent(await self.agent_id(), "user.cancel",
                                {"session_id": str(self.session_id), **params})
        return {"ok": True}

    async def on_consent(self, msg):
        consent_type, granted = consent.validate_params(msg.params)
        await consent.count_choice(self.token.user_id, self.scope)
        change = await consent.arecord_choice(
            self.token.user, consent_type, granted, self.session_id
        )
        await consent.anotify(change)
        self.consent_changed(consent_type, granted)
        return {
            "consent_type": consent_type,
            "granted": granted,
            "missing": list(self.missing_consents),
            "consents": self.consent_state(),
        }

    async def on_message(self, msg):
        """The person's chat message: the AG-UI socket's TEXT_MESSAGE, sender the person."""
        params = methods.validate_params("user.message", msg.params)
        await person.text_message(
            self, {"sender": self.token.user.get_username(), **params},
            prefix="params", action="user.message")
        return {"ok": True}

    async def on_action(self, msg):
        """The person's custom action: the AG-UI socket's USER_ACTION (an artifact edit...)."""
        params = methods.validate_params("user.action", msg.params)
        await person.custom_action(
            self, params["action_type"], params.get("component_id"), params.get("payload"),
            audit_as="user.action")
        return {"ok": True}

    async def on_v09(self, msg):
        """The person's A2UI v0.9 ``action`` / ``error`` messages, for the agent."""
        params = msg.params if isinstance(msg.params, dict) else {}
        delivered = await person.aclient_messages(
            self.session_id, params.get("messages"), params.get("dataModel")
        )
        return {"delivered": delivered}

    HANDLERS = {
        "a2ui.v09": on_v09,
        "a2ui.init": on_init,
        "user.respond": on_respond,
        "user.approve": on_approve,
        "user.cancel": on_cancel,
        "user.consent": on_consent,
        "user.message": on_message,
        "user.action": on_action,
    }

    # The session's events (consumers.socket.SessionSocket) ----------------------------------

    async def show(self, kind, message):
        if kind is Kind.SURFACE_BATCH:
            await self._show_surfaces(message["data"])
            return
        text = wire.encode_cached(self.session_id.hex, message)
        if text is not None:
            await self.send(text_data=text)

    async def send_state(self):
        await self.send_snapshot(await sessions.asnapshot(self.session_id))
        if self.presence_of is not None:  # a lost presence notice is corrected here too
            await self.send_obj(wire.agent_status(await presence.astatus(self.presence_of)))

    async def _show_surfaces(self, data):
        """A2UI v0.9 surface messages; a gap in the surface store's numbers resends them."""
        if not self.v09 or self.surface_tracker is None:
            return
        messages = self.surface_tracker.accept(surface_service.tracked(data))
        if messages is None:
            await self.send_surfaces_snapshot()
        elif messages:
            await self.send_obj(jsonrpc.notification("a2ui.v09", {"messages": messages}))

    async def a2ui_consent_changed(self, message):
        """A consent of the person changed (here, in another tab or process, by the REST API
        or an operator): the page is told, so it lists it and pauses or resumes questions."""
        await super().a2ui_consent_changed(message)
        if self.session_id is None or self.gone or not consent.required_types():
            return
        await self.send_obj(jsonrpc.notification("a2ui.consent_changed", {
            "consent_type": message["consent_type"], "granted": message["granted"],
            "consents": self.consent_state()}))

    async def a2ui_agent_presence(self, message):
        """The session's agent came online or went offline (``a2ui.sessions.presence``)."""
        if self.session_id is None or self.gone:
            return
        try:
            notice = wire.agent_status(message.get("status"))
        except ValueError:  # from a newer version of the app: not this client's business
            return
        await self.send_obj(notice)

    async def announce_close(self, code, reason):
        if reason and code in OPERATOR_CLOSES:
            # Daphne does not pass close reasons on: say why in a toast the client shows.
            with translation.override(self.language):
                title = str(OPERATOR_CLOSES[code])
            await self.send_obj(jsonrpc.notification("ui.notify", {
                "level": "warning", "title": title, "message": reason, "duration_ms": 0,
            }))
