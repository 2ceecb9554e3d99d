"""The statements of leaving clients on PostgreSQL, one text whatever the number of sessions
(the keys as an array: ``a2ui.infra.sql``). The rows are locked in key order, so batches of
other processes that lock some of the same rows wait for each other instead of deadlocking."""

import json
import uuid

from django.db import connections

from a2ui.infra import sql
from a2ui.models import A2UISessionLog


def _ids(session_ids):
    return [s if isinstance(s, uuid.UUID) else uuid.UUID(str(s)) for s in session_ids]


def _live():
    return [str(state) for state in A2UISessionLog.LIVE_STATES]


def lock_resumable(session_ids):
    """``{session UUID: resumable_clients}`` of the live sessions among ``session_ids``, each
    row locked ``FOR NO KEY UPDATE`` until the caller's transaction ends."""
    connection = connections["default"]
    table, cols = sql.names(A2UISessionLog)
    pk, clients = cols["session_id"], cols["resumable_clients"]
    statement = (f"SELECT {pk}, {clients} FROM {table} WHERE {pk} = ANY(%s::uuid[]) "
                 f"AND {cols['state']} = ANY(%s::text[]) ORDER BY {pk} FOR NO KEY UPDATE")
    with connection.cursor() as cursor:
        cursor.execute(statement, [_ids(session_ids), _live()])
        rows = cursor.fetchall()
    return {pk: sql.from_db(A2UISessionLog, "resumable_clients", value, connection)
            for pk, value in rows}


def set_resumable(entries):
    """Set ``resumable_clients`` of each session (``{session UUID: list}``), in one statement."""
    table, cols = sql.names(A2UISessionLog)
    pk = cols["session_id"]
    statement = (f"UPDATE {table} SET {cols['resumable_clients']} = k.clients::jsonb "
                 f"FROM unnest(%s::uuid[], %s::text[]) AS k(sid, clients) WHERE {pk} = k.sid")
    keys = list(entries)
    with connections["default"].cursor() as cursor:
        cursor.execute(statement, [keys, [json.dumps(entries[k]) for k in keys]])


def detach(session_ids, now):
    """``detached_at`` of the live sessions among ``session_ids`` set to ``now``."""
    connection = connections["default"]
    table, cols = sql.names(A2UISessionLog)
    pk = cols["session_id"]
    statement = (f"UPDATE {table} SET {cols['detached_at']} = %s WHERE {pk} IN ("
                 f"SELECT {pk} FROM {table} WHERE {pk} = ANY(%s::uuid[]) "
                 f"AND {cols['state']} = ANY(%s::text[]) ORDER BY {pk} FOR NO KEY UPDATE)")
    with connection.cursor() as cursor:
        cursor.execute(statement, [sql.prep(A2UISessionLog, "detached_at", now, connection),
                                   _ids(session_ids), _live()])
