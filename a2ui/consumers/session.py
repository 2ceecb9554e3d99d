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

A socket a person talks through adds its own: ``a2ui.consumers.socket.SessionSocket``.
"""

import time

from a2ui.consent import choices as consent
from a2ui.consumers import seqwatch
from a2ui.core import adapters, events
from a2ui.core.lifecycle import Event, Lifecycle
from a2ui.infra import groups, outages, prom, shared, tracing
from a2ui.push import direct as direct_delivery
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
