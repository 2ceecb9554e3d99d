"""Stage 3 of a push, the store: what the push changes, in one transaction, before anything is
sent.

Each kind's change is its domain's (a component: ``a2ui.surfaces.components``; a v0.9 batch:
``a2ui.surfaces.store``; activity: ``a2ui.surfaces.activity``; a request:
``a2ui.requests.pending``); a batch of events is stored all or nothing, and an event the stored
state refuses (``ui.update`` of a component that is not there) raises its DomainError with
``data.index`` and nothing is stored. Progress, notify and navigate store nothing.

A database connection lost while storing leaves the commit unknown: if nothing reached the
server it is a plain failure, else the session's clients resync and the agent is answered
OUTCOME_UNKNOWN (``a2ui.push.keys``). A session deleted meanwhile (from the admin) is -32001
with nothing stored.
"""

from django.db import IntegrityError, transaction

from a2ui.core.errors import DomainError, Fault
from a2ui.core.events import Kind
from a2ui.infra import dbthreads
from a2ui.push import keys
from a2ui.requests import pending
from a2ui.sessions import fence
from a2ui.surfaces import activity, components
from a2ui.surfaces import store as surfaces

#: Kinds that store nothing: with no idempotency key, the owner check and the number are one
#: round trip (``a2ui.push.sequence.take_owned``).
STATELESS = frozenset({Kind.PROGRESS, Kind.NOTIFY, Kind.NAVIGATE})


def stores(kind):
    """True when events of ``kind`` change the stored state."""
    return kind in (Kind.COMPONENT_RENDERED, Kind.COMPONENT_UPDATED, Kind.SURFACE_BATCH) \
        or kind in activity.KINDS


def apply(sid, kind, data, prefix=""):
    """The stored-state change of one event (none for stateless kinds); returns the data to
    send (an activity diff gets its full content; a v0.9 batch its surface numbers)."""
    if kind is Kind.COMPONENT_RENDERED:
        components.store_render(sid, data)
    elif kind is Kind.COMPONENT_UPDATED:
        components.store_update(sid, data)
    elif kind is Kind.SURFACE_BATCH:
        first, out = surfaces.store_batch(sid, data["messages"])
        data = surfaces.batch_data(first, out)
    elif kind in activity.KINDS:
        data = activity.store(sid, kind, data, prefix)
    return data


def apply_all(sid, items, prefix=""):
    """``apply`` of each ``(kind, data)`` in one transaction; the applied items."""
    if len(items) == 1:
        kind, data = items[0]
        return [(kind, apply(sid, kind, data, prefix))]
    applied = []
    with transaction.atomic():
        for index, (kind, data) in enumerate(items):
            try:
                applied.append((kind, apply(sid, kind, data, prefix)))
            except DomainError as exc:
                exc.data = {**(exc.data if isinstance(exc.data, dict) else {}), "index": index}
                raise
    return applied


def in_session(call, sid, *args):
    """``call(sid, *args)`` in one transaction that holds the session against erasure
    (``a2ui.sessions.fence``: an erased session is -32001 with nothing stored); a session
    deleted meanwhile (from the admin) is -32001 with nothing stored too: its rows' foreign
    key fails as an IntegrityError at the commit (the constraints are deferred)."""
    try:
        with transaction.atomic():
            fence.hold(sid)
            return call(sid, *args)
    except IntegrityError:
        raise DomainError(Fault.SESSION_NOT_FOUND, data={"session_id": str(sid)}) from None


async def run(sid, call, *args):
    """``in_session(call, sid, *args)`` on the per-message pool; a lost connection is a plain
    failure when nothing reached the server, else OUTCOME_UNKNOWN (the clients resync)."""
    try:
        return await dbthreads.run(in_session, call, sid, *args)
    except keys.CONNECTION_LOST as exc:
        if keys.never_sent(exc):
            raise  # not stored: a failure
        raise keys.lost(sid) from None


async def save(sid, items, prefix=""):
    """Store ``items`` (``(kind, data)`` pairs) all or nothing; the items to send."""
    if not any(stores(kind) for kind, _ in items):
        return items
    return await run(sid, apply_all, items, prefix)


async def ask(sid, kind, params, reply_channel="", rpc_id=None):
    """Open a request (``pending.ask``: a retry of the same request is taken up, not asked
    again); its ``Asked``."""
    return await run(sid, pending.ask, kind, params, reply_channel, rpc_id)


def outcome_of(applied):
    """What a retry with the push's idempotency key is answered (JSON): a v0.9 batch's
    surface numbers, else nothing of its own."""
    for kind, data in applied:
        if kind is Kind.SURFACE_BATCH:
            first, out = data["first_seq"], data["messages"]
            return {"delivered": len(out), "seq": first + len(out) - 1}
    return {}
