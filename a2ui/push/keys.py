"""Stage 4 of a push, the keys: what the agent is told is what happened (idempotency keys
and unknown outcomes).

A push is stored first (committed), then delivered; what the agent is answered follows that:

* a failure before or at the store (nothing committed) is an error, and nothing was sent;
* a failure after the commit (Redis or the channel layer failed to number or deliver it) is a
  success with a ``warning``: the push is stored, and the session's clients show it when they
  resync (``fanout.repair`` makes them);
* a database connection lost while storing leaves the commit unknown. With an idempotency key
  the server finds out at once (``probe``: a committed key is there, one in flight is waited
  for); without one, or when the database cannot tell yet, the answer is ``OUTCOME_UNKNOWN``
  (-32012, HTTP 503) and the clients resync, so they show the push exactly when it is stored.

**Idempotency keys.** A push with a key stores the key (``PushKey``) in the same transaction as
the push itself, so the key exists exactly when the push does, whatever dies when (the process,
Redis, the database connection). A retry with the same key for the same session finds it: it is
answered with the original outcome plus ``"replayed": true``, nothing is stored or sent again,
and the session's clients resync (the original may have been stored but never delivered, e.g.
its process was killed after the commit). The same key with different content is -32602. Keys
are kept for ``A2UI['IDEMPOTENCY_KEY_TTL_SECONDS']`` (the housekeeping sweep deletes older ones)
and go with their session. A push without a key costs nothing more than before.

Progress, notify and navigate store nothing: with a key, the key alone is stored before the
push is sent and removed again when sending fails, so they are shown at most once.
"""

import logging
from datetime import timedelta

from django.db import DatabaseError, InterfaceError, OperationalError, connections, transaction
from django.utils import timezone

from a2ui.conf import a2ui_settings
from a2ui.core.errors import DomainError, Fault
from a2ui.infra import dbthreads, sql
from a2ui.models import PushKey
from a2ui.push import fanout

log = logging.getLogger("a2ui.outcomes")

#: A database error after which whether the statement (or the commit) took effect is unknown:
#: the connection was lost. Other database errors are statement errors: nothing took effect.
CONNECTION_LOST = (OperationalError, InterfaceError)

#: Where a database error arises while a connection is being made (Django's backend connecting,
#: psycopg's pool handing one out): no statement of the call reached the server.
_CONNECTING = {"ensure_connection", "connect", "get_new_connection", "getconn",
               "_getconn_with_check_loop"}


def never_sent(exc):
    """True when the database error ``exc`` (of :data:`CONNECTION_LOST`) arose while a
    connection was being made or handed out (the database unreachable, the pool exhausted),
    so nothing of the push reached the server: it is not stored, a plain failure. Otherwise
    (lost in the middle of a statement or of the commit) the outcome is unknown."""
    seen = 0
    while exc is not None and seen < 5:
        tb = exc.__traceback__
        while tb is not None:
            code = tb.tb_frame.f_code
            path = code.co_filename.replace("\\", "/")
            if code.co_name in _CONNECTING and ("/django/db/" in path or "/psycopg" in path):
                return True
            tb = tb.tb_next
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return False

WARNING_LATE = ("Stored, but not delivered live (Redis or the channel layer failed): the "
                "session's clients show it when they resync.")


class _Taken(Exception):
    """The key is already stored: roll the push back and answer the original outcome."""


def keyed(session_id, apply, key, fingerprint, outcome, *args):
    """``apply(session_id, *args)`` and the key, in one transaction: ``(result, None)``; or,
    when a push with this key is stored already, nothing done: ``(None, its outcome)``.

    ``outcome(result)`` is what a retry is answered (JSON). The key is looked up first (a retry
    may no longer apply: a v0.9 surface created already, a state delta's old value changed) and
    inserted after the push, so a retry racing the original waits for its commit at the key's
    INSERT and then replays it.
    """
    try:
        with transaction.atomic():
            if push_key(session_id, key.value) is not None:
                raise _Taken
            try:
                result = apply(session_id, *args)
            except DomainError:
                # Refused: maybe by the state its own original left, committed meanwhile.
                if _stored(session_id, key):
                    raise _Taken from None
                raise
            if insert_key(session_id, key.value, fingerprint, outcome(result),
                                 timezone.now()):
                return result, None
            raise _Taken
    except _Taken:
        pass
    return None, replay(session_id, key, fingerprint)


def _stored(session_id, key):
    try:
        return push_key(session_id, key.value) is not None
    except DatabaseError:  # the refusal's transaction cannot read any more: it stands
        return False


def claim(session_id, key, fingerprint, outcome=None):
    """Store the key alone (a push that stores nothing else); None when stored now, else the
    original outcome."""
    if insert_key(session_id, key.value, fingerprint, outcome or {}, timezone.now()):
        return None
    return replay(session_id, key, fingerprint)


def release(session_id, key):
    """Forget a claimed key whose push was not sent (so a retry sends it)."""
    delete_key(session_id, key.value)


def replay(session_id, key, fingerprint):
    """The stored outcome of ``key``; -32602 when it was stored for a different push."""
    row = push_key(session_id, key.value)
    if row is None:  # expired between the INSERT and here: the push is long gone
        return {}
    if row.fingerprint != fingerprint:
        raise DomainError(Fault.INVALID_INPUT, data={
            "path": key.path,
            "reason": "already used in this session for a different push"})
    return row.outcome


def probe(session_id, key):
    """After a lost connection: the outcome stored with ``key``, or None when the push was not
    stored. A transaction still holding the key is waited for (the INSERT below blocks on it)."""
    with transaction.atomic():
        if insert_key(session_id, key.value, "", {}, timezone.now()):
            transaction.set_rollback(True)
            return None
    row = push_key(session_id, key.value)
    return None if row is None else row.outcome


def unknown(session_id, key=None):
    data = {"session_id": str(session_id)}
    message = ("The database connection was lost while the push was stored: it may or may "
               "not have been. ")
    if key is None:
        message += "Send pushes with an idempotency_key to retry them safely."
    else:
        data["idempotency_key"] = key.value
        message += "Retry it with the same idempotency_key: it is stored and shown once."
    return DomainError(Fault.OUTCOME_UNKNOWN, message, data)


EXPIRE_BATCH = 1000


def expire_due():
    """Delete keys older than ``IDEMPOTENCY_KEY_TTL_SECONDS`` (a batch per call); how many."""
    cutoff = timezone.now() - timedelta(seconds=a2ui_settings.IDEMPOTENCY_KEY_TTL_SECONDS)
    due = list(PushKey.objects.filter(created_at__lt=cutoff)
               .values_list("pk", flat=True)[:EXPIRE_BATCH])
    if not due:
        return 0
    deleted, _ = PushKey.objects.filter(pk__in=due).delete()
    return deleted


async def asettle(session_id, key):
    """After a connection lost while storing a push with ``key``: its stored outcome, or None
    when it was not stored; OUTCOME_UNKNOWN when the database cannot tell yet (the session's
    clients are then told to resync, so they show the push exactly if it is stored)."""
    try:
        return await dbthreads.run(probe, session_id, key)
    except DatabaseError:
        fanout.repair(session_id)
        raise unknown(session_id, key) from None


def lost(session_id, key=None):
    """A push's store lost its connection and the outcome cannot be found out: tell the
    session's clients to resync and return the OUTCOME_UNKNOWN error to raise."""
    fanout.repair(session_id)
    return unknown(session_id, key)


# The statements (``a2ui.infra.sql``) -------------------------------------------------------------


def insert_key(session_id, key, fingerprint, outcome, created_at):
    """INSERT the session's push key ``key`` unless it is there: True when this call stored it.

    A key still held by a transaction in flight makes the statement wait for that transaction's
    end (the unique index), so False means a push with this key was committed."""
    connection = connections["default"]
    table, cols = sql.names(PushKey)
    statement = (f"INSERT INTO {table} ({cols['session']}, {cols['key']}, {cols['fingerprint']}, "
           f"{cols['outcome']}, {cols['created_at']}) VALUES (%s, %s, %s, %s, %s) "
           f"ON CONFLICT ({cols['session']}, {cols['key']}) DO NOTHING")
    params = [sql.prep(PushKey, "session", session_id, connection), key, fingerprint,
              sql.prep(PushKey, "outcome", outcome, connection),
              sql.prep(PushKey, "created_at", created_at, connection)]
    with connection.cursor() as cursor:
        cursor.execute(statement, params)
        return cursor.rowcount == 1


def push_key(session_id, key):
    """The session's push key ``key`` (a PushKey) or None."""
    connection = connections["default"]
    table, columns = sql.select_all(PushKey)
    _, cols = sql.names(PushKey)
    statement = f"SELECT {columns} FROM {table} WHERE {cols['session']} = %s AND {cols['key']} = %s"
    with connection.cursor() as cursor:
        cursor.execute(statement, [sql.prep(PushKey, "session", session_id, connection), key])
        row = cursor.fetchone()
    return None if row is None else sql.instance(PushKey, row, connection)


def delete_key(session_id, key):
    connection = connections["default"]
    table, cols = sql.names(PushKey)
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {table} WHERE {cols['session']} = %s AND {cols['key']} = %s",
                       [sql.prep(PushKey, "session", session_id, connection), key])
