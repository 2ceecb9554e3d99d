"""The one-statement heartbeat of AG-UI 1.0 runs on PostgreSQL (``a2ui.infra.sql``)."""

import uuid

from django.db import connections

from a2ui.infra import sql
from a2ui.models import AgentRun


def heartbeat_runs(keys, now):
    """``runs.heartbeat_many`` on PostgreSQL in one statement whose text is the same for any
    number of runs: the keys as two arrays, the UPDATE of the running ones in a CTE and the
    SELECT of every one's status and outcome beside it (one snapshot: it reads the rows as the
    UPDATE matched them, and the UPDATE changes no status). ``{(session UUID, run_id): (status,
    outcome)}`` for the keys that have a row."""
    connection = connections["default"]
    table, cols = sql.names(AgentRun)
    sid, rid, status = cols["session"], cols["run_id"], cols["status"]
    statement = (f"WITH k(sid, rid) AS (SELECT * FROM unnest(%s::uuid[], %s::text[])), "
           f"u AS (UPDATE {table} SET {cols['heartbeat_at']} = %s FROM k "
           f"WHERE {table}.{sid} = k.sid AND {table}.{rid} = k.rid AND {table}.{status} = %s) "
           f"SELECT r.{sid}, r.{rid}, r.{status}, r.{cols['outcome']} FROM {table} r "
           f"JOIN k ON r.{sid} = k.sid AND r.{rid} = k.rid")
    # uuid[] takes UUIDs as they are (the field's own preparation costs 1.2 ms per 500).
    params = [[s if isinstance(s, uuid.UUID) else uuid.UUID(str(s)) for s, _ in keys],
              [r for _, r in keys], sql.prep(AgentRun, "heartbeat_at", now, connection),
              AgentRun.Status.RUNNING.value]
    with connection.cursor() as cursor:
        cursor.execute(statement, params)
        rows = cursor.fetchall()
    return {(s, r): (st, sql.from_db(AgentRun, "outcome", outcome, connection))
            for s, r, st, outcome in rows}
