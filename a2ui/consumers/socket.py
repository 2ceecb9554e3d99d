"""A socket a person talks through, on the one listener every session listener shares
(``a2ui.consumers.session.SessionListener``).

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
from a2ui.consumers.session import SessionListener
from a2ui.core import events
from a2ui.core.closes import CloseCode
from a2ui.core.lifecycle import Event, State
from a2ui.infra import caps, groups, shared
from a2ui.push import sessions as session_actions
from a2ui.rpc.errors import ErrorCode, ProtocolError
from a2ui.sessions import lifecycle as sessions


class SessionSocket(SessionListener):
    """A socket a person talks through (Channels dispatch loop): the listener, plus the rate
    limit, the cap, the handshake deadline, the idle watchdog, the opened/resumed notice to the
    agent and the consent gate."""

    #: When the socket connected (wall clock, seconds): before it opened or resumed a session.
    #: Its notice to the agent carries it (``a2ui.sessions.lifecycle.ToldOnce``).
    began = 0.0

    async def websocket_connect(self, message):
        self.began = time.time()
        await super().websocket_connect(message)

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
            since=self.began,
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
