"""What every listener of a session shares, whatever protocol it speaks: one loop's rules.

``SessionListener`` is the one way to listen to a session, used by every person-side listener
(the JSON-RPC, v0.9 and AG-UI sockets, the SSE streams, the MCP watcher): counting the listener
in the session and joining its group (``attach``), the session's event stream (sequence
numbers, epochs, gaps, resync: one order for every adapter), the kinds its adapter shows
(``adapter``: an event of a kind the adapter's clients are not shown is dropped here, after its
number is taken), direct delivery and the sequence watch (``start_stream``), consent changes,
operator closes, and its lifecycle (``life``: ``a2ui.core.lifecycle``). A listener driven by a
Channels dispatch loop is a socket (below); one driven by its own channel is a
``consumers.streams.ChannelListener`` (the SSE streams, the MCP watcher).

``SessionSocket`` adds what a socket a person talks through owns: the stream token from the auth middleware, the rate limit, counting the
socket in the session (``sessions.asocket_opened``/``asocket_closed``), joining the session's
group, the session's event stream (sequence numbers, epochs, gaps, resync: one order for every
adapter), direct delivery and the sequence watch, the opened/resumed notice to the agent, the
person's missing consents, the session metrics, and operator closes. A protocol's consumer adds
its wire: ``show`` (an event its clients are sent), ``send_state`` (its snapshot of the
session) and ``announce_close`` (what its clients are told before an operator close).
"""

import asyncio
import time

from a2ui.conf import a2ui_settings
from a2ui.consent import choices as consent
from a2ui.consumers import seqwatch
from a2ui.core import adapters, events
from a2ui.core.closes import CloseCode
from a2ui.core.lifecycle import Event, Lifecycle, State
from a2ui.infra import caps, groups, outages, prom, shared, tracing
from a2ui.push import direct as direct_delivery
from a2ui.push import sessions as session_actions
from a2ui.rpc.errors import ErrorCode, ProtocolError
from a2ui.sessions import clients
from a2ui.sessions import lifecycle as sessions
from a2ui.sessions.counters import buffer


class SessionListener:
    """One loop's rules to listen to a session (see the module's docs).

    A listener names its adapter (``adapter_name``, registered in ``A2UI['ADAPTERS']``): the kinds
    its clients are shown (``Adapter.kinds``) are read here, once per event, and the rest are
    dropped before ``show``. It needs ``channel_layer``, ``channel_name`` and ``groups`` (the
    Channels consumer's, or its own channel's), and implements ``show`` (one event on its
    wire), ``send_state`` (its snapshot, after a gap or a new epoch) and ``close`` (the socket
    or stream ends).
    """

    adapter_name = None  # the registered adapter whose kinds this listener shows ...
    adapter = None  # ... or the Adapter itself (None, and no name: every kind)
    session_id = None
    token = None
    epoch = None  # of the sequence counter ``last_seq`` belongs to (a2ui.infra.shared)
    counted = None  # the epoch this listener is counted under in the session's socket count
    last_seq = 0
    missing_consents = ()  # required consent types not granted (a2ui.consent_changed updates)
    last_activity = 0.0
    metered = True  # the listener counts the person's messages in the session's metrics
    gone = False  # the transport closed; work still finishing must not write to it

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.life = Lifecycle()
        adapter = self.adapter
        if adapter is None and self.adapter_name:
            adapter = adapters.get(self.adapter_name)
        self.kinds = None if adapter is None else adapter.kinds

    # Attaching -------------------------------------------------------------------------------

    async def join(self, group):
        await self.channel_layer.group_add(group, self.channel_name)
        self.groups.append(group)

    async def attach(self, sid, fresh):
        """Count, join, then read the sequence number: an event racing the attach is either
        in the snapshot read after this or arrives through the group (or both; every kind is
        idempotent), never neither. ``session_id`` is left to ``opened``."""
        self.counted = await sessions.asocket_opened(sid, fresh=fresh)
        await self.join_clients(sid, resumed=not fresh)
        await self.join(groups.session_group(sid))
        self.last_seq, self.epoch = await shared.current_seq(sid.hex)

    def opened(self, sid):
        """Attached: the session's events are this listener's from now on."""
        self.session_id = sid
        self.life.fire(Event.SESSION_OPENED)

    async def unattach(self, sid, resumed, log):
        """Undo a failed ``attach``; each step best-effort (what failed may fail again)."""
        group = groups.session_group(sid)
        steps = []
        if group in self.groups:
            self.groups.remove(group)
            steps.append(self.channel_layer.group_discard(group, self.channel_name))
        if self.counted is not None:
            steps.append(sessions.asocket_closed(sid, self.counted))
        steps.append(self.leave_clients(sid, remember=False))
        if not resumed:  # opened for this socket, shown by none: let the resume window close it
            steps.append(sessions.adetach_session(sid))
        for step in steps:
            try:
                await step
            except Exception:
                outages.warning(log, "undoing an attach", "a2ui: undoing a failed attach of %s "
                                "failed", sid, session=sid)
        self.session_id = None
        self.counted = self.epoch = None
        self.last_seq = 0

    def start_stream(self):
        """Counted, joined, snapshot out: take direct pushes and be watched for losses."""
        direct_delivery.register(self.session_id.hex, self)
        seqwatch.ensure_started()

    async def detach(self):
        """The listener ends: stop direct pushes, flush counters, uncount (unless the session's
        close did: ``Lifecycle.keeps_count``)."""
        if self.session_id is None:
            return
        direct_delivery.unregister(self.session_id.hex, self)  # before the uncount
        if self.metered:
            await buffer.flush(self.session_id)
        await self.leave_clients(self.session_id, remember=not self.life.keeps_count)
        if not self.life.keeps_count:
            await sessions.asocket_closed(self.session_id, self.counted)

    # The session's clients and what each declared (a2ui.sessions.clients) -------------------

    client_protocol = None  # the protocol's adapter name; None: not in the session's registry
    client_lease = None

    def client_catalogs(self):
        """The v0.9 catalogs this client is sent surfaces of: ids, ``clients.ALL``, or None."""
        return None

    async def join_clients(self, sid, resumed):
        """Register this client (its protocol and catalogs) among the session's clients."""
        if self.client_protocol is not None and self.client_lease is None:
            self.client_lease = await clients.ajoin(
                sid, self.client_protocol, self.client_catalogs(), resumed)

    async def leave_clients(self, sid, remember):
        """Unregister it; ``remember``: keep its declaration with the session for its resume."""
        lease, self.client_lease = self.client_lease, None
        if lease is not None:
            await clients.aleave(sid, lease, remember)

    # The session's event stream --------------------------------------------------------------

    async def a2ui_event(self, message):
        """One session event (``a2ui.core.events``), or a resync order from ``seqwatch``."""
        if message.get("resync"):
            if prom.ON:
                prom.resynced(self.client_protocol or "other", "order")
            await self.resync()
            return
        if self.session_id is None:
            return
        self.last_activity = time.monotonic()
        seq = message.get("seq")
        if seq is not None:
            epoch = message.get("epoch")
            if epoch is not None and epoch != self.epoch:
                if prom.ON:
                    prom.resynced(self.client_protocol or "other", "epoch")
                await self.resync()  # the counter was lost and started again
            elif seq > self.last_seq + 1:  # an event went missing
                if prom.ON:
                    prom.resynced(self.client_protocol or "other", "gap")
                await self.send_state()
            if epoch is None or epoch == self.epoch:
                self.last_seq = max(self.last_seq, seq)
        kind = events.kind_of(message)
        if kind is not None and (self.kinds is None or kind in self.kinds):
            parent = message.get("traceparent")
            if parent is None:  # not traced (always, with tracing off)
                await self.show(kind, message)
                return
            with tracing.span("a2ui.deliver", parent, message.get("tracestate"), kind=str(kind),
                              seq=seq, protocol=self.client_protocol):
                await self.show(kind, message)

    async def resync(self):
        """Resend the session's state and take the counter's current epoch.

        Read the counter first, then the snapshot (as ``attach`` does): an event numbered
        after what was read arrives by itself. Under a new epoch the listener also counts
        itself again, rebuilding the session's socket count.
        """
        if not self.life.streaming or self.gone:
            return
        sid = self.session_id
        seq, epoch = await shared.current_seq(sid.hex)
        if epoch != self.counted:
            self.counted = await sessions.asocket_opened(sid)
        await self.send_state()
        self.last_seq, self.epoch = seq, epoch

    async def show(self, kind, message):  # pragma: no cover - each protocol's
        raise NotImplementedError

    async def send_state(self):  # pragma: no cover - each protocol's
        raise NotImplementedError

    # Consent and closes ----------------------------------------------------------------------

    async def load_consents(self, session):
        self.missing_consents = await consent.amissing_types(session.user_id)

    def consent_changed(self, consent_type, granted):
        missing = [t for t in self.missing_consents if t != consent_type]
        if not granted and consent_type in consent.required_types():
            missing.append(consent_type)
        self.missing_consents = [t for t in consent.required_types() if t in missing]

    async def a2ui_consent_changed(self, message):
        """The person granted or revoked a consent, in this or another socket or process."""
        if self.session_id is not None:
            self.consent_changed(message["consent_type"], message["granted"])

    async def a2ui_close(self, message):
        """An operator (or the session's end) closes the listener: say why, then close. Once:
        a listener already closing (the idle watchdog, a refusal) has said why."""
        if not self.life.fire_if(Event.CLOSE_REQUESTED):
            return
        reason = message.get("reason", "")
        await self.announce_close(message["code"], reason)
        await self.close(code=message["code"], reason=reason[:120])

    async def announce_close(self, code, reason):
        """Hook: what the protocol's clients are told before an operator close."""


class SessionSocket(SessionListener):
    """A socket a person talks through (Channels dispatch loop): the listener, plus the rate
    limit, the cap, the handshake deadline, the idle watchdog, the opened/resumed notice to the
    agent and the consent gate."""

    # Inbound ---------------------------------------------------------------------------------

    async def check_rate(self):
        """-32005 past ``RATE_LIMIT_PER_MINUTE`` messages from this session (or socket)."""
        self.last_activity = time.monotonic()
        scope_key = self.session_id.hex if self.session_id else self.channel_name
        if await shared.hit_rate_limit(scope_key, a2ui_settings.RATE_LIMIT_PER_MINUTE):
            raise ProtocolError(
                ErrorCode.RATE_LIMITED,
                data={"limit_per_minute": a2ui_settings.RATE_LIMIT_PER_MINUTE},
            )

    # The cap on a person's sockets (a2ui.infra.caps) ---------------------------------------

    cap_lease = None

    async def take_cap(self):
        """A place among the token's person's session sockets (every socket protocol counts
        in one cap, per agent, and per client address): None, or the ``CapReached`` refusal
        to tell the client in the protocol's words (close code 4001)."""
        try:
            self.cap_lease = await caps.acquire_socket(self.token, caps.address_of(self.scope))
        except caps.CapReached as exc:
            return exc
        return None

    async def free_cap(self):
        if self.cap_lease is not None:
            await self.cap_lease.release_shielded()

    # Handshake -------------------------------------------------------------------------------

    #: A socket that has opened no session this long after connecting is closed: it holds a
    #: connection and group memberships for nothing (every client sends its handshake first).
    HANDSHAKE_TIMEOUT_SECONDS = 30
    handshake_timer = None

    async def during_handshake(self, work):
        """Await ``work`` (a coroutine opening or resuming the session) as the handshake: the
        deadline lets it finish, and a handshake that failed may be sent again."""
        if not self.life.fire_if(Event.HANDSHAKE_RECEIVED):
            return await work  # attached already (or closing): the handler says what is wrong
        try:
            return await work
        finally:
            self.life.fire_if(Event.HANDSHAKE_FAILED)  # still handshaking: it did not open

    def start_handshake_deadline(self):
        # A timer, not a task: an idle socket holds it until it fires (a task costs KBs).
        self.handshake_timer = asyncio.get_running_loop().call_later(
            self.HANDSHAKE_TIMEOUT_SECONDS, self._handshake_due)

    def stop_handshake_deadline(self):
        if self.handshake_timer is not None:
            self.handshake_timer.cancel()
            self.handshake_timer = None

    def _handshake_due(self):
        self.handshake_timer = None
        if self.gone or self.life.state is not State.CONNECTED:
            return  # a session opened (or the socket is closing): nothing to do
        self.handshake_timer = asyncio.get_running_loop().create_task(self._handshake_deadline())

    async def _handshake_deadline(self):
        while self.life.handshaking:  # under load: one that arrived in time is not cut off
            await asyncio.sleep(0.1)
        self.handshake_timer = None
        if not self.gone and self.life.state is State.CONNECTED:  # no session, not closing
            self.life.fire(Event.CLOSE_REQUESTED)
            await self.handshake_missed()

    async def handshake_missed(self):
        """Hook: tell the client, then close (each protocol in its own words and code)."""

    async def refused(self, code, reason=None):
        """Close a socket the server refuses (a cap, a session limit, a bad handshake): it
        counts in no session."""
        self.life.fire_if(Event.CLOSE_REQUESTED)
        await self.close(code=code, reason=reason)

    # Idle watchdog ---------------------------------------------------------------------------

    watchdog = None

    def start_watchdog(self):
        """Close the session after ``SESSION_INACTIVITY_TIMEOUT_SECONDS`` with nothing from
        the person and nothing to show them (``last_activity``), on every protocol alike.

        A timer (``loop.call_later``) checked at most every 60 s, not a task: an idle socket
        holds it all its life, and a sleeping task costs about ten times more memory."""
        self.last_activity = time.monotonic()
        self._arm_watchdog(asyncio.get_running_loop())

    def stop_watchdog(self):
        if self.watchdog is not None:
            self.watchdog.cancel()  # the timer, or the task closing the session
            self.watchdog = None

    def _arm_watchdog(self, loop):
        idle = time.monotonic() - self.last_activity
        limit = a2ui_settings.SESSION_INACTIVITY_TIMEOUT_SECONDS
        if idle >= limit:
            self.watchdog = loop.create_task(self._expire())
        else:
            self.watchdog = loop.call_later(min(limit - idle, 60) + 0.01, self._watchdog_due)

    def _watchdog_due(self):
        self.watchdog = None
        if self.gone or self.life.ending:
            return
        self._arm_watchdog(asyncio.get_running_loop())

    async def _expire(self):
        if self.gone or self.life.ending:
            return
        await self.announce_expiry()
        # The session's own close order is ours: not again (a2ui_close sees CLOSING).
        self.life.fire(Event.CLOSE_REQUESTED)
        if self.session_id is not None:
            await session_actions.aclose_session(
                self.session_id, sessions.State.TIMED_OUT, "Session inactive for too long.",
                close_code=CloseCode.SESSION_EXPIRED,
            )
        await self.close(code=CloseCode.SESSION_EXPIRED)

    async def announce_expiry(self):
        """Hook: what the protocol's clients are told before an idle session is closed."""

    # Attached --------------------------------------------------------------------------------

    async def announce(self, session, resumed, capabilities):
        """``session.opened`` / ``session.resumed`` to the agent's sockets."""
        await groups.tell_agent(
            session.agent_id,
            events.Notice.SESSION_RESUMED if resumed else events.Notice.SESSION_OPENED,
            {
                "session_id": str(self.session_id),
                "user": self.token.user.get_username(),
                "client_info": session.client_info,
                "capabilities": capabilities,
                "consents_missing": list(self.missing_consents),
            },
        )

    async def disconnect(self, code):
        """The transport closed: stop the timers, detach, free the cap, then CLOSED."""
        self.stop_handshake_deadline()
        self.stop_watchdog()
        try:
            await self.detach()
        finally:
            self.life.fire_if(Event.DISCONNECTED)
            await self.free_cap()

    # Consent ---------------------------------------------------------------------------------

    async def agent_id(self):
        """The session's agent (the shared cache, else the token's), for the person's events."""
        cached = await shared.cached_session(self.session_id.hex)
        if cached is not None:
            return cached[0] or None
        return self.token.agent_id

    async def check_consent(self):
        """The person-side gate, the same on every socket: while a required consent is
        missing, the prompt again (``prompt_consents``), then -32010 (``consent.require``)."""
        if self.missing_consents:
            await self.prompt_consents()
        consent.require(self.missing_consents)

    async def prompt_consents(self):
        """Hook: show the person the missing consents, in the protocol's words."""
