"""The erasure fence: once a person's data is erased, nothing of theirs is written again.

An erasure (``a2ui.compliance.person.erase``) marks each of the person's sessions erased
(``A2UISessionLog.erased_at``) in the transaction that deletes their content, after taking
each session row's lock (``FOR UPDATE``, in key order). Every writer of a session's content
takes that row's shared key lock first, in its own transaction, and writes only if the session
is not erased:

* the push pipeline's store (``a2ui.push.store.in_session``: components, requests, surfaces,
  activity, idempotency keys): :func:`hold`, refused as ``session_not_found``;
* the start of a run (``a2ui.runs.records.start``): :func:`hold`;
* the replay log's batched writes (``a2ui.compliance.replay``): :func:`erased`, the events
  of an erased session dropped.

The locks make the two orders safe on PostgreSQL (READ COMMITTED): a writer that locked first
commits before the erasure takes its lock, so the erasure's deletes see its rows; a writer
that comes later waits for the erasure's commit and then sees ``erased_at`` set (the locking
read checks its condition again on the row's new version). Both lock in key order, so they
cannot deadlock each other; ``FOR KEY SHARE`` does not conflict with the plain updates of a
session row (counters, state), only with the erasure's ``FOR UPDATE``. SQLite has one writer
at a time: the reads alone do.
"""

import uuid

from django.db import connection, transaction
from django.utils import timezone

from a2ui.core.errors import DomainError, Fault
from a2ui.infra import sql
from a2ui.models import A2UISessionLog


def _locking(clause):
    return f" {clause}" if connection.vendor == "postgresql" else ""


def uuid_of(session_id):
    return session_id if isinstance(session_id, uuid.UUID) else uuid.UUID(str(session_id))


def _key(session_id):
    return sql.prep(A2UISessionLog, "session_id", uuid_of(session_id), connection)


def _select(session_ids, lock, extra=""):
    table, cols = sql.names(A2UISessionLog)
    ids = sorted({str(uuid_of(s)) for s in session_ids})
    ids = [_key(s) for s in ids]
    marks = ", ".join(["%s"] * len(ids))
    query = (f"SELECT {cols['session_id']}, {cols['erased_at']} FROM {table} "
             f"WHERE {cols['session_id']} IN ({marks}){extra} "
             f"ORDER BY {cols['session_id']}{_locking(lock)}")
    with connection.cursor() as cursor:
        cursor.execute(query, ids)
        return [(sql.from_db(A2UISessionLog, "session_id", sid, connection), erased)
                for sid, erased in cursor.fetchall()]


def hold(session_id):
    """In the caller's transaction: lock the session against erasure until it commits;
    DomainError ``session_not_found`` if it is erased (or gone)."""
    rows = _select([session_id], "FOR KEY SHARE")
    if not rows or rows[0][1] is not None:
        raise DomainError(Fault.SESSION_NOT_FOUND, data={"session_id": str(session_id)})


def erased(session_ids):
    """In the caller's transaction: of ``session_ids``, the erased ones (a set of UUIDs);
    the others are locked against erasure until it commits (one not found is not erased)."""
    if not session_ids:
        return set()
    return {sid for sid, at in _select(session_ids, "FOR KEY SHARE") if at is not None}


def close(session_ids, now=None):
    """In the caller's transaction (the erasure's): wait for every writer of these sessions,
    then mark them erased; from its commit on, no writer writes to them."""
    session_ids = sorted({str(uuid_of(s)) for s in session_ids})
    if not session_ids:
        return 0
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("fence.close runs inside the erasure's transaction")
    for i in range(0, len(session_ids), 500):
        _select(session_ids[i:i + 500], "FOR UPDATE")
    return A2UISessionLog.objects.filter(pk__in=list(session_ids)).update(
        erased_at=now or timezone.now())
