"""The per-message statements of pending requests (``a2ui.infra.sql``: written once, run
on PostgreSQL and SQLite alike)."""

from django.db import connections

from a2ui.core.states import REQUESTS
from a2ui.infra import sql
from a2ui.models import A2UISessionLog, Agent, PendingRequest


def finish_request(session_id, request_id, kind, status, answer, now, *, deliverable,
                   live_states):
    """The conditional UPDATE of ``pending._finish``: the request becomes ``status`` from the
    states the transition into it leaves (``a2ui.core.states.REQUESTS``).

    ``deliverable`` adds what an answer needs: before its deadline, its session live and the
    session's agent (if any) active. The row as it is now if this call changed it, else None.
    """
    connection = connections["default"]
    table, cols = sql.names(PendingRequest)
    sessions, scols = sql.names(A2UISessionLog)
    agents, acols = sql.names(Agent)
    sources = REQUESTS.sources(REQUESTS.into(str(status)))
    where = [f"{cols['session']} = %s", f"{cols['request_id']} = %s",
             f"{cols['status']} IN ({', '.join(['%s'] * len(sources))})"]
    params = [sql.prep(PendingRequest, "status", str(status), connection),
              sql.prep(PendingRequest, "answer", answer, connection),
              sql.prep(PendingRequest, "resolved_at", now, connection),
              sql.prep(PendingRequest, "session", session_id, connection), request_id,
              *sources]
    if kind is not None:
        where.append(f"{cols['kind']} = %s")
        params.append(kind)
    if deliverable:
        marks = ", ".join(["%s"] * len(live_states))
        where.append(f"{cols['deadline']} > %s")
        where.append(
            f"EXISTS (SELECT 1 FROM {sessions} s LEFT JOIN {agents} a "
            f"ON a.{acols[Agent._meta.pk.name]} = s.{scols['agent']} "
            f"WHERE s.{scols[A2UISessionLog._meta.pk.name]} = {table}.{cols['session']} "
            f"AND s.{scols['state']} IN ({marks}) "
            f"AND (s.{scols['agent']} IS NULL OR a.{acols['is_active']} = %s))")
        params += [sql.prep(PendingRequest, "deadline", now, connection),
                   *(str(state) for state in live_states),
                   sql.prep(Agent, "is_active", True, connection)]
    statement = (f"UPDATE {table} SET {cols['status']} = %s, {cols['answer']} = %s, "
           f"{cols['resolved_at']} = %s WHERE {' AND '.join(where)}")
    returning = sql.returning(connection)
    if returning:
        statement += f" RETURNING {sql.select_all(PendingRequest)[1]}"
    with connection.cursor() as cursor:
        cursor.execute(statement, params)
        if returning:
            row = cursor.fetchone()
            return None if row is None else sql.instance(PendingRequest, row, connection)
        changed = cursor.rowcount
    return request(session_id, request_id) if changed else None


def request(session_id, request_id):
    """The session's request ``request_id`` or None."""
    connection = connections["default"]
    table, columns = sql.select_all(PendingRequest)
    _, cols = sql.names(PendingRequest)
    statement = (f"SELECT {columns} FROM {table} "
           f"WHERE {cols['session']} = %s AND {cols['request_id']} = %s")
    with connection.cursor() as cursor:
        cursor.execute(statement, [sql.prep(PendingRequest, "session", session_id, connection),
                             request_id])
        row = cursor.fetchone()
    return None if row is None else sql.instance(PendingRequest, row, connection)


def claim_outcome(session_id, request_id, channel, now):
    """``pending.claim``'s conditional UPDATE: rows changed (0 or 1)."""
    connection = connections["default"]
    table, cols = sql.names(PendingRequest)
    statement = (f"UPDATE {table} SET {cols['delivered_at']} = %s WHERE {cols['session']} = %s "
           f"AND {cols['request_id']} = %s AND {cols['reply_channel']} = %s "
           f"AND {cols['delivered_at']} IS NULL AND {cols['status']} <> %s")
    with connection.cursor() as cursor:
        cursor.execute(statement, [sql.prep(PendingRequest, "delivered_at", now, connection),
                             sql.prep(PendingRequest, "session", session_id, connection),
                             request_id, channel, PendingRequest.Status.PENDING.value])
        return cursor.rowcount
