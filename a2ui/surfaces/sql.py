"""The per-message statements of components (``a2ui.infra.sql``: written once, run on
PostgreSQL and SQLite alike)."""

from django.db import connections

from a2ui.infra import sql
from a2ui.models import RenderedComponent


def update_component(session_id, component_id, fields, expect=None):
    """UPDATE the session's component ``component_id`` with ``fields`` where its columns
    still hold ``expect`` (``{field: value}``, a compare-and-set); rows changed (0 or 1)."""
    connection = connections["default"]
    table, cols = sql.names(RenderedComponent)
    expect = expect or {}
    statement = (f"UPDATE {table} SET {', '.join(f'{cols[n]} = %s' for n in fields)} "
           f"WHERE {cols['session']} = %s AND {cols['component_id']} = %s"
           + "".join(f" AND {cols[n]} = %s" for n in expect))
    params = [sql.prep(RenderedComponent, n, v, connection) for n, v in fields.items()]
    params += [sql.prep(RenderedComponent, "session", session_id, connection), component_id]
    params += [sql.prep(RenderedComponent, n, v, connection) for n, v in expect.items()]
    with connection.cursor() as cursor:
        cursor.execute(statement, params)
        return cursor.rowcount


def insert_component(session_id, component_id, fields, created_at):
    """INSERT the session's component ``component_id`` after its last one (``position`` one
    past the session's highest), or, where the session already has it (rendered concurrently),
    UPDATE it with ``fields`` and leave its place: one statement (no savepoint: the conflict
    is the statement's own, and a session that does not exist fails its deferred foreign key,
    in a transaction at the commit)."""
    connection = connections["default"]
    table, cols = sql.names(RenderedComponent)
    names = list(fields)
    statement = (f"INSERT INTO {table} ({cols['session']}, {cols['component_id']}, "
           f"{cols['position']}, {cols['created_at']}, "
           f"{', '.join(cols[n] for n in names)}) "
           f"SELECT %s, %s, COALESCE(MAX({cols['position']}), 0) + 1, %s, "
           f"{', '.join(['%s'] * len(names))} FROM {table} WHERE {cols['session']} = %s "
           f"ON CONFLICT ({cols['session']}, {cols['component_id']}) DO UPDATE SET "
           + ", ".join(f"{cols[n]} = excluded.{cols[n]}" for n in names))
    session = sql.prep(RenderedComponent, "session", session_id, connection)
    params = [session, component_id, sql.prep(RenderedComponent, "created_at", created_at,
                                           connection)]
    params += [sql.prep(RenderedComponent, n, v, connection) for n, v in fields.items()]
    params.append(session)
    with connection.cursor() as cursor:
        cursor.execute(statement, params)


def component(session_id, component_id, *, for_update=False):
    """The session's component ``component_id`` or None (``SELECT ... FOR UPDATE`` inside a
    transaction where the database has it)."""
    connection = connections["default"]
    table, columns = sql.select_all(RenderedComponent)
    _, cols = sql.names(RenderedComponent)
    statement = (f"SELECT {columns} FROM {table} "
           f"WHERE {cols['session']} = %s AND {cols['component_id']} = %s")
    if for_update and connection.features.has_select_for_update:
        # NO KEY: the rows referring to it (checked at commit) must not wait on this lock
        statement += (" FOR NO KEY UPDATE" if connection.features.has_select_for_no_key_update
                else " FOR UPDATE")
    with connection.cursor() as cursor:
        cursor.execute(statement, [sql.prep(RenderedComponent, "session", session_id, connection),
                             component_id])
        row = cursor.fetchone()
    return None if row is None else sql.instance(RenderedComponent, row, connection)


def has_component(session_id, component_id, component_types):
    """Whether the session has the component, of one of ``component_types`` (a tuple)."""
    connection = connections["default"]
    table, cols = sql.names(RenderedComponent)
    kinds = ", ".join(["%s"] * len(component_types))
    statement = (f"SELECT 1 FROM {table} WHERE {cols['session']} = %s AND {cols['component_id']} = %s"
           f" AND {cols['component_type']} IN ({kinds}) LIMIT 1")
    with connection.cursor() as cursor:
        cursor.execute(statement, [sql.prep(RenderedComponent, "session", session_id, connection),
                             component_id, *component_types])
        return cursor.fetchone() is not None
