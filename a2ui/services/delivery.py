"""Agent-to-UI delivery: one path for the agent WebSocket, the REST endpoint and the Python API.

``aemit`` takes one session event (``a2ui.core.events``) already validated and sanitized by
the adapter that read it (seed 000's agent methods: ``a2ui.adapters.pushes``) and does, in order: the owner check
(cached), the state change for kinds that have one (a component, a pending request), the
per-session sequence number, the buffered metrics, and the delivery: straight to the consumers
when every socket of the session is in this process (``a2ui.services.direct``), else one group
send. progress, notify and navigate touch no database at all.
"""

from django.db import IntegrityError, transaction

from ..core import events
from ..core.errors import DomainError, Fault
from ..core.events import Kind
from . import activity, components, consent, dbthreads, direct, pending, sessions, shared, stream
from .metrics import buffer

STATELESS = frozenset({Kind.PROGRESS, Kind.NOTIFY, Kind.NAVIGATE})


async def aemit(agent_id, session_id, kind, data, *, reply_channel="", rpc_id=None,
                prefix=""):
    """Apply and deliver one agent event; return (seq, PendingRequest or None).

    ``request.opened`` events wait for the person: ``reply_channel`` gets the outcome. The same
    request again (``pending.ask``: a retry) is not shown again: ``(None, request)``, and
    ``reply_channel`` waits on it, or gets its outcome at once.
    Activity kinds (``services.activity``) are checked against the stored activity and stored
    (``prefix``: where the event sits in the agent's message, for the error's path).
    """
    if kind in STATELESS:
        return await _apush_stateless(agent_id, session_id, kind, data), None
    sid = await sessions.aensure_agent_session(agent_id, session_id)
    request = None
    if kind is Kind.REQUEST_OPENED:
        await consent.aensure_session(sid)  # -32010 while a required consent is missing
        asked = await dbthreads.run(
            pending.ask, sid, data["kind"], data["params"], reply_channel, rpc_id
        )
        request = asked.row
        if not asked.new:
            await pending.aretried(asked)
            return None, request
    elif _stores(kind):
        data = await dbthreads.run(_in_session, _apply, sid, kind, data, prefix)
    return await _send(sid, kind, data), request


async def aemit_batch(agent_id, session_id, items):
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
    if any(_stores(kind) for kind, _ in items):
        items = await dbthreads.run(_in_session, _apply_all, sid, items)
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
    seq, epoch, sockets = await shared.next_seq_and_sockets(sid.hex, direct.wanted(sid.hex))
    buffer.add(
        sid,
        rendered=int(kind is Kind.COMPONENT_RENDERED),
        inputs=int(kind is Kind.REQUEST_OPENED),
        pushed=True,
    )
    await stream.send(sid, seq, sockets, events.to_message(kind, data, seq, epoch))
    return seq


async def _apush_stateless(agent_id, session_id, kind, data):
    """The hot path (progress, toasts): owner check and sequence number in one Redis trip.

    A sequence number taken for a session that then fails the check is never sent; only a
    session that is not live (or not this agent's) fails it, and such a session has no
    socket to see the gap.
    """
    sid = sessions.parse_session_id(session_id)
    owner, seq, epoch, sockets = await shared.cached_session_and_next_seq(
        sid.hex, direct.wanted(sid.hex)
    )
    if owner is None or owner[0] != str(agent_id or ""):
        await sessions.aensure_agent_session(agent_id, sid)
    buffer.add(sid, pushed=True)
    await stream.send(sid, seq, sockets, events.to_message(kind, data, seq, epoch))
    return seq
