"""Agent-to-UI delivery: one path for the agent WebSocket, the REST endpoint and the Python API.

``aemit`` takes one session event (``a2ui.core.events``) already validated and sanitized by
the adapter that read it (seed 000's agent methods: ``a2ui.jsonrpc.pushes``) and does, in order: the owner check
(cached), the state change for kinds that have one (a component, a pending request), the
per-session sequence number, the buffered metrics, and the delivery: straight to the consumers
when every socket of the session is in this process (``a2ui.push.direct``), else one group
send. progress, notify and navigate touch no database at all.

The order is store (commit), then deliver, and the answer says what happened
(``a2ui.push.keys``): a push is sent to clients only once it is stored; a failure
after the commit is not an error (the answer carries a ``warning`` and the clients resync); a
connection lost while storing is resolved with the push's idempotency key, or answered
OUTCOME_UNKNOWN. A push with an idempotency key (``key``) stores it in the same transaction,
and a retry with the same key is answered ``replayed`` without storing or showing anything
again.
"""

import logging

from django.db import IntegrityError, transaction

from a2ui.consent import choices as consent
from a2ui.core import events
from a2ui.core.content import idempotency
from a2ui.core.errors import DomainError, Fault
from a2ui.core.events import Kind
from a2ui.infra import dbthreads, outages, shared, tracing
from a2ui.push import direct
from a2ui.push import fanout as stream
from a2ui.push import keys as outcomes
from a2ui.requests import pending
from a2ui.sessions import clients
from a2ui.sessions import lifecycle as sessions
from a2ui.sessions.counters import buffer
from a2ui.surfaces import activity, components

log = logging.getLogger("a2ui.services")

STATELESS = frozenset({Kind.PROGRESS, Kind.NOTIFY, Kind.NAVIGATE})


class Pushed(int):
    """What a push answers when it has no sequence number of its own to report (0): a retry
    of a push already stored (``replayed``, with the original ``outcome``), or a push stored
    but not delivered live (``warning``)."""

    replayed = False
    warning = None
    outcome = None

    def __new__(cls, *, replayed=False, warning=None, outcome=None):
        self = super().__new__(cls, 0)
        self.replayed, self.warning, self.outcome = replayed, warning, outcome
        return self


def answer(seq, **fields):
    """``{"delivered": true, "seq": n, "clients": {protocol: n}}``, the answer of one push;
    for a :class:`Pushed`, ``seq`` null with ``replayed`` or ``warning`` (and no ``clients``).
    """
    out = {"delivered": True, "seq": None if isinstance(seq, Pushed) else seq, **fields}
    return flag(out, seq)


def flag(out, *seqs):
    """``out`` with ``replayed`` / ``warning`` when a push of ``seqs`` was a :class:`Pushed`
    (a batch's flags are the whole batch's), and ``clients``: the session's attached clients
    per protocol when the last one sent live was sent (``clients.Sent``)."""
    for seq in seqs:
        if getattr(seq, "clients", None) is not None:
            out["clients"] = seq.clients
        if isinstance(seq, Pushed):
            if seq.replayed:
                out["replayed"] = True
            if seq.warning:
                out["warning"] = seq.warning
    return out


async def aemit(agent_id, session_id, kind, data, *, reply_channel="", rpc_id=None,
                prefix="", key=None):
    """:func:`_aemit` in an ``a2ui.push`` span (``tracing``: a no-op when off)."""
    with tracing.span("a2ui.push", kind=str(kind), session=session_id):
        return await _aemit(agent_id, session_id, kind, data, reply_channel=reply_channel,
                            rpc_id=rpc_id, prefix=prefix, key=key)


async def _aemit(agent_id, session_id, kind, data, *, reply_channel="", rpc_id=None,
                 prefix="", key=None):
    """Apply and deliver one agent event; return (seq, PendingRequest or None).

    ``request.opened`` events wait for the person: ``reply_channel`` gets the outcome (their
    ``request_id`` is their idempotency key: no ``key``). The same request again
    (``pending.ask``: a retry) is not shown again: ``(None, request)``, and ``reply_channel``
    waits on it, or gets its outcome at once.
    Activity kinds (``services.activity``) are checked against the stored activity and stored
    (``prefix``: where the event sits in the agent's message, for the error's path).
    ``key``: an idempotency key (``a2ui.core.content.idempotency.Key``).
    """
    if kind in STATELESS and key is None:
        return await _apush_stateless(agent_id, session_id, kind, data), None
    sid = await sessions.aensure_agent_session(agent_id, session_id)
    if key is not None:
        if kind is Kind.REQUEST_OPENED:
            raise ValueError("a request's request_id is its idempotency key")
        return (await _akeyed(sid, [(kind, data)], key, _apply_one, kind, data, prefix))[0], None
    request = None
    if kind is Kind.REQUEST_OPENED:
        await consent.aensure_session(sid)  # -32010 while a required consent is missing
        try:
            asked = await dbthreads.run(
                pending.ask, sid, data["kind"], data["params"], reply_channel, rpc_id
            )
        except outcomes.CONNECTION_LOST as exc:
            if outcomes.never_sent(exc):
                raise  # not stored: a failure
            raise outcomes.lost(sid) from None
        request = asked.row
        if not asked.new:
            await pending.aretried(asked)
            return None, request
    elif _stores(kind):
        try:
            data = await dbthreads.run(_in_session, _apply, sid, kind, data, prefix)
        except outcomes.CONNECTION_LOST as exc:
            if outcomes.never_sent(exc):
                raise  # not stored: a failure
            raise outcomes.lost(sid) from None
    return (await _deliver(sid, [(kind, data)]))[0], request


async def _akeyed(sid, items, key, apply, *args):
    """Store ``items`` with ``apply(sid, *args)`` (the applied items) and the key in one
    transaction, then deliver; or answer a retry. Returns the items' sequence numbers."""
    fingerprint = idempotency.fingerprint([(str(kind), data) for kind, data in items])
    stores = any(_stores(kind) for kind, _ in items)
    try:
        if stores:
            applied, replay = await dbthreads.run(
                _in_session, outcomes.keyed, sid, apply, key, fingerprint, _no_outcome, *args)
        else:  # nothing stored but the key: claim it, then send
            applied, replay = items, await dbthreads.run(
                _in_session, outcomes.claim, sid, key, fingerprint)
    except outcomes.CONNECTION_LOST as exc:
        if outcomes.never_sent(exc) or await outcomes.asettle(sid, key) is None:
            raise  # not stored: a failure, and nothing was sent
        if stores:  # stored by this call, never sent: the clients resync
            stream.repair(sid)
            return [Pushed(warning=outcomes.WARNING_LATE)] * len(items)
        applied, replay = items, None  # claimed by this call: send
    if replay is not None:
        if stores:  # the original may be stored but not delivered (its process died)
            stream.repair(sid)
        return [Pushed(replayed=True, outcome=replay)] * len(items)
    if stores:
        return await _deliver(sid, applied)
    seqs = []
    try:
        for kind, data in applied:
            seqs.append(await _send(sid, kind, data))
    except Exception:
        if seqs:  # partly shown: keep the key, so a retry shows nothing twice (at most once)
            raise
        try:  # nothing sent: free the key for the retry
            await dbthreads.run(outcomes.release, sid, key)
        except Exception:
            log.warning("a2ui: idempotency key of an unsent push to %s kept", sid)
        raise
    return seqs


def _no_outcome(result):
    return {}


def _apply_one(sid, kind, data, prefix):
    return [(kind, _apply(sid, kind, data, prefix))]


async def _deliver(sid, items):
    """Send stored events in order. A failure now, after the commit, is no error: the push is
    stored, so its answer is a :class:`Pushed` with a warning and the clients resync."""
    seqs = []
    for kind, data in items:
        try:
            seqs.append(await _send(sid, kind, data))
        except Exception as exc:
            outages.tally()
            log.warning("a2ui: a push to session %s was stored but not delivered (%s: %s): "
                        "its clients resync", sid, type(exc).__name__, exc)
            stream.repair(sid)
            late = Pushed(warning=outcomes.WARNING_LATE)
            return seqs + [late] * (len(items) - len(seqs))
    return seqs


async def aemit_batch(agent_id, session_id, items, key=None):
    """:func:`_aemit_batch` in an ``a2ui.push`` span (``tracing``: a no-op when off)."""
    with tracing.span("a2ui.push", kind="batch", session=session_id, items=len(items)):
        return await _aemit_batch(agent_id, session_id, items, key)


async def _aemit_batch(agent_id, session_id, items, key=None):
    """Apply a batch of agent events all or nothing, then deliver them in order; return the
    sequence numbers.

    ``items`` are ``(kind, data)`` pairs, validated, none of them ``request.opened`` (a request
    waits for its own answer). The state changes of the whole batch run in one transaction: an
    item refused by the stored state (``ui.update`` of a component that is not there, an
    activity the stored one does not allow) raises its DomainError with ``data.index`` and
    nothing of the batch is stored or sent.
    """
    if any(kind is Kind.REQUEST_OPENED for kind, _ in items):
        raise ValueError("a batch cannot open requests")
    sid = await sessions.aensure_agent_session(agent_id, session_id)
    if key is not None:
        return await _akeyed(sid, items, key, _apply_all, items)
    if any(_stores(kind) for kind, _ in items):
        try:
            items = await dbthreads.run(_in_session, _apply_all, sid, items)
        except outcomes.CONNECTION_LOST as exc:
            if outcomes.never_sent(exc):
                raise  # not stored: a failure
            raise outcomes.lost(sid) from None
        return await _deliver(sid, items)
    return [await _send(sid, kind, data) for kind, data in items]


def _stores(kind):
    return kind in (Kind.COMPONENT_RENDERED, Kind.COMPONENT_UPDATED) or kind in activity.KINDS


def _apply(sid, kind, data, prefix=""):
    """The stored-state change of one event (none for stateless kinds); returns the data to
    send (an activity diff gets its full content)."""
    if kind is Kind.COMPONENT_RENDERED:
        components.store_render(sid, data)
    elif kind is Kind.COMPONENT_UPDATED:
        components.store_update(sid, data)
    elif kind in activity.KINDS:
        data = activity.store(sid, kind, data, prefix)
    return data


def _apply_all(sid, items):
    applied = []
    with transaction.atomic():
        for index, (kind, data) in enumerate(items):
            try:
                applied.append((kind, _apply(sid, kind, data)))
            except DomainError as exc:
                exc.data = {**(exc.data if isinstance(exc.data, dict) else {}), "index": index}
                raise
    return applied


def _in_session(apply, sid, *args):
    """``apply(sid, *args)``; a session deleted meanwhile (from the admin) is -32001 with
    nothing stored. Its rows' foreign key fails as an IntegrityError at the statement in
    autocommit, or at the commit of a transaction (the constraints are deferred): components,
    activity, one event or a batch alike."""
    try:
        return apply(sid, *args)
    except IntegrityError:
        raise DomainError(Fault.SESSION_NOT_FOUND, data={"session_id": str(sid)}) from None


async def _send(sid, kind, data):
    seq, epoch, sockets, members = await shared.next_seq_and_sockets(
        sid.hex, direct.wanted(sid.hex), clients=True)
    buffer.add(
        sid,
        rendered=int(kind is Kind.COMPONENT_RENDERED),
        inputs=int(kind is Kind.REQUEST_OPENED),
        pushed=True,
    )
    await stream.send(sid, seq, sockets, events.to_message(kind, data, seq, epoch))
    return clients.Sent(seq, clients.count(members))


async def _apush_stateless(agent_id, session_id, kind, data):
    """The hot path (progress, toasts): owner check and sequence number in one Redis trip.

    A sequence number taken for a session that then fails the check is never sent; only a
    session that is not live (or not this agent's) fails it, and such a session has no
    socket to see the gap.
    """
    sid = sessions.parse_session_id(session_id)
    owner, seq, epoch, sockets, members = await shared.cached_session_and_next_seq(
        sid.hex, direct.wanted(sid.hex), clients=True
    )
    if owner is None or owner[0] != str(agent_id or ""):
        await sessions.aensure_agent_session(agent_id, sid)
    buffer.add(sid, pushed=True)
    await stream.send(sid, seq, sockets, events.to_message(kind, data, seq, epoch))
    return clients.Sent(seq, clients.count(members))
