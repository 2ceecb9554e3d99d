"""The per-message statements in SQL, for the calls every push or answer makes.

The ORM compiles a query anew on every call: on the soak's machine that was 600-900 us of CPU
for a one-row UPDATE or EXISTS whose round trip takes 200 us, on the pool threads that share
the interpreter (and its lock) with the event loop (docs/performance.md). These are the same
statements, written once: table and column names come from the models' ``_meta`` and values
are adapted, and read back, by the models' own fields, so the SQL runs on PostgreSQL and SQLite
alike and the tests of the services (``components``, ``pending``) test it on both.
"""

import contextlib
import functools
import uuid

from django.db import connections, transaction

from a2ui.models import (
    A2UISessionLog,
    Agent,
    AgentRun,
    AuditChainHead,
    PendingRequest,
    PushKey,
    RenderedComponent,
)


@functools.cache
def _names(model):
    """Quoted table name and ``field name -> quoted column``, of a model."""
    quote = connections["default"].ops.quote_name
    columns = {f.name: quote(f.column) for f in model._meta.concrete_fields}
    return quote(model._meta.db_table), columns


def _prep(model, name, value, connection):
    """``value`` for ``model.name`` as the database takes it (UUID, JSON, datetime, ...)."""
    return model._meta.get_field(name).get_db_prep_save(value, connection)


@functools.cache
def _converters_of(model, vendor, alias):
    connection = connections[alias]
    out = []
    for field in model._meta.concrete_fields:
        col = field.get_col(model._meta.db_table)
        out.append((col, connection.ops.get_db_converters(col) + col.get_db_converters(connection)))
    return out


def _converters(model, connection):
    """Per concrete field, the converters the ORM applies to what the database returns."""
    return _converters_of(model, connection.vendor, connection.alias)


def _instance(model, row, connection):
    """A model instance from a ``SELECT *``-ordered row, converted as the ORM would."""
    values = []
    for value, (col, convs) in zip(row, _converters(model, connection), strict=True):
        for conv in convs:
            value = conv(value, col, connection)
        values.append(value)
    return model.from_db(connection.alias, [f.attname for f in model._meta.concrete_fields],
                         values)


def _from_db(model, name, value, connection):
    """``value`` of ``model.name`` as the database returned it, converted as the ORM would."""
    col = model._meta.get_field(name).get_col(model._meta.db_table)
    for conv in connection.ops.get_db_converters(col) + col.get_db_converters(connection):
        value = conv(value, col, connection)
    return value


def _select_all(model):
    table, cols = _names(model)
    return table, ", ".join(cols[f.name] for f in model._meta.concrete_fields)


# Components -----------------------------------------------------------------------------------


def update_component(session_id, component_id, fields, expect=None):
    """UPDATE the session's component ``component_id`` with ``fields`` where its columns
    still hold ``expect`` (``{field: value}``, a compare-and-set); rows changed (0 or 1)."""
    connection = connections["default"]
    table, cols = _names(RenderedComponent)
    expect = expect or {}
    sql = (f"UPDATE {table} SET {', '.join(f'{cols[n]} = %s' for n in fields)} "
           f"WHERE {cols['session']} = %s AND {cols['component_id']} = %s"
           + "".join(f" AND {cols[n]} = %s" for n in expect))
    params = [_prep(RenderedComponent, n, v, connection) for n, v in fields.items()]
    params += [_prep(RenderedComponent, "session", session_id, connection), component_id]
    params += [_prep(RenderedComponent, n, v, connection) for n, v in expect.items()]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount


def insert_component(session_id, component_id, fields, created_at):
    """INSERT the session's component ``component_id`` after its last one (``position`` one
    past the session's highest), or, where the session already has it (rendered concurrently),
    UPDATE it with ``fields`` and leave its place: one statement (no savepoint: the conflict
    is the statement's own, and a session that does not exist fails its deferred foreign key,
    in a transaction at the commit)."""
    connection = connections["default"]
    table, cols = _names(RenderedComponent)
    names = list(fields)
    sql = (f"INSERT INTO {table} ({cols['session']}, {cols['component_id']}, "
           f"{cols['position']}, {cols['created_at']}, "
           f"{', '.join(cols[n] for n in names)}) "
           f"SELECT %s, %s, COALESCE(MAX({cols['position']}), 0) + 1, %s, "
           f"{', '.join(['%s'] * len(names))} FROM {table} WHERE {cols['session']} = %s "
           f"ON CONFLICT ({cols['session']}, {cols['component_id']}) DO UPDATE SET "
           + ", ".join(f"{cols[n]} = excluded.{cols[n]}" for n in names))
    session = _prep(RenderedComponent, "session", session_id, connection)
    params = [session, component_id, _prep(RenderedComponent, "created_at", created_at,
                                           connection)]
    params += [_prep(RenderedComponent, n, v, connection) for n, v in fields.items()]
    params.append(session)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


def component(session_id, component_id, *, for_update=False):
    """The session's component ``component_id`` or None (``SELECT ... FOR UPDATE`` inside a
    transaction where the database has it)."""
    connection = connections["default"]
    table, columns = _select_all(RenderedComponent)
    _, cols = _names(RenderedComponent)
    sql = (f"SELECT {columns} FROM {table} "
           f"WHERE {cols['session']} = %s AND {cols['component_id']} = %s")
    if for_update and connection.features.has_select_for_update:
        # NO KEY: the rows referring to it (checked at commit) must not wait on this lock
        sql += (" FOR NO KEY UPDATE" if connection.features.has_select_for_no_key_update
                else " FOR UPDATE")
    with connection.cursor() as cursor:
        cursor.execute(sql, [_prep(RenderedComponent, "session", session_id, connection),
                             component_id])
        row = cursor.fetchone()
    return None if row is None else _instance(RenderedComponent, row, connection)


def has_component(session_id, component_id, component_types):
    """Whether the session has the component, of one of ``component_types`` (a tuple)."""
    connection = connections["default"]
    table, cols = _names(RenderedComponent)
    kinds = ", ".join(["%s"] * len(component_types))
    sql = (f"SELECT 1 FROM {table} WHERE {cols['session']} = %s AND {cols['component_id']} = %s"
           f" AND {cols['component_type']} IN ({kinds}) LIMIT 1")
    with connection.cursor() as cursor:
        cursor.execute(sql, [_prep(RenderedComponent, "session", session_id, connection),
                             component_id, *component_types])
        return cursor.fetchone() is not None


# Pending requests -----------------------------------------------------------------------------


def insert(instance):
    """INSERT a new, unsaved ``instance`` (its fields' defaults applied as ``save`` would);
    its primary key is set where the database returns it. IntegrityError as ``save``."""
    connection = connections["default"]
    model = type(instance)
    table, cols = _names(model)
    fields = [f for f in model._meta.concrete_fields if not f.primary_key]
    sql = (f"INSERT INTO {table} ({', '.join(cols[f.name] for f in fields)}) "
           f"VALUES ({', '.join(['%s'] * len(fields))})")
    returning = connection.features.can_return_columns_from_insert
    if returning:
        sql += f" RETURNING {cols[model._meta.pk.name]}"
    params = [f.get_db_prep_save(f.pre_save(instance, True), connection) for f in fields]
    # Inside a transaction a failed INSERT must not abort it (PostgreSQL): a savepoint, as
    # ``save`` has; in autocommit the statement is its own transaction.
    guard = transaction.atomic() if connection.in_atomic_block else contextlib.nullcontext()
    with guard, connection.cursor() as cursor:
        cursor.execute(sql, params)
        if returning:
            instance.pk = cursor.fetchone()[0]
    instance._state.adding = False
    instance._state.db = connection.alias
    return instance



def finish_request(session_id, request_id, kind, status, answer, now, *, deliverable,
                   live_states):
    """The conditional UPDATE of ``pending._finish``: a pending request becomes ``status``.

    ``deliverable`` adds what an answer needs: before its deadline, its session live and the
    session's agent (if any) active. The row as it is now if this call changed it, else None.
    """
    connection = connections["default"]
    table, cols = _names(PendingRequest)
    sessions, scols = _names(A2UISessionLog)
    agents, acols = _names(Agent)
    where = [f"{cols['session']} = %s", f"{cols['request_id']} = %s", f"{cols['status']} = %s"]
    params = [_prep(PendingRequest, "status", str(status), connection),
              _prep(PendingRequest, "answer", answer, connection),
              _prep(PendingRequest, "resolved_at", now, connection),
              _prep(PendingRequest, "session", session_id, connection), request_id,
              PendingRequest.Status.PENDING.value]
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
        params += [_prep(PendingRequest, "deadline", now, connection),
                   *(str(state) for state in live_states),
                   _prep(Agent, "is_active", True, connection)]
    sql = (f"UPDATE {table} SET {cols['status']} = %s, {cols['answer']} = %s, "
           f"{cols['resolved_at']} = %s WHERE {' AND '.join(where)}")
    returning = _returning(connection)
    if returning:
        sql += f" RETURNING {_select_all(PendingRequest)[1]}"
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        if returning:
            row = cursor.fetchone()
            return None if row is None else _instance(PendingRequest, row, connection)
        changed = cursor.rowcount
    return request(session_id, request_id) if changed else None


def _returning(connection):
    """UPDATE ... RETURNING (PostgreSQL; SQLite from 3.35, as INSERT ... RETURNING)."""
    return connection.features.can_return_columns_from_insert


def request(session_id, request_id):
    """The session's request ``request_id`` or None."""
    connection = connections["default"]
    table, columns = _select_all(PendingRequest)
    _, cols = _names(PendingRequest)
    sql = (f"SELECT {columns} FROM {table} "
           f"WHERE {cols['session']} = %s AND {cols['request_id']} = %s")
    with connection.cursor() as cursor:
        cursor.execute(sql, [_prep(PendingRequest, "session", session_id, connection),
                             request_id])
        row = cursor.fetchone()
    return None if row is None else _instance(PendingRequest, row, connection)


def claim_outcome(session_id, request_id, channel, now):
    """``pending.claim``'s conditional UPDATE: rows changed (0 or 1)."""
    connection = connections["default"]
    table, cols = _names(PendingRequest)
    sql = (f"UPDATE {table} SET {cols['delivered_at']} = %s WHERE {cols['session']} = %s "
           f"AND {cols['request_id']} = %s AND {cols['reply_channel']} = %s "
           f"AND {cols['delivered_at']} IS NULL AND {cols['status']} <> %s")
    with connection.cursor() as cursor:
        cursor.execute(sql, [_prep(PendingRequest, "delivered_at", now, connection),
                             _prep(PendingRequest, "session", session_id, connection),
                             request_id, channel, PendingRequest.Status.PENDING.value])
        return cursor.rowcount


# Idempotency keys ------------------------------------------------------------------------------


def insert_key(session_id, key, fingerprint, outcome, created_at):
    """INSERT the session's push key ``key`` unless it is there: True when this call stored it.

    A key still held by a transaction in flight makes the statement wait for that transaction's
    end (the unique index), so False means a push with this key was committed."""
    connection = connections["default"]
    table, cols = _names(PushKey)
    sql = (f"INSERT INTO {table} ({cols['session']}, {cols['key']}, {cols['fingerprint']}, "
           f"{cols['outcome']}, {cols['created_at']}) VALUES (%s, %s, %s, %s, %s) "
           f"ON CONFLICT ({cols['session']}, {cols['key']}) DO NOTHING")
    params = [_prep(PushKey, "session", session_id, connection), key, fingerprint,
              _prep(PushKey, "outcome", outcome, connection),
              _prep(PushKey, "created_at", created_at, connection)]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount == 1


def push_key(session_id, key):
    """The session's push key ``key`` (a PushKey) or None."""
    connection = connections["default"]
    table, columns = _select_all(PushKey)
    _, cols = _names(PushKey)
    sql = f"SELECT {columns} FROM {table} WHERE {cols['session']} = %s AND {cols['key']} = %s"
    with connection.cursor() as cursor:
        cursor.execute(sql, [_prep(PushKey, "session", session_id, connection), key])
        row = cursor.fetchone()
    return None if row is None else _instance(PushKey, row, connection)


def delete_key(session_id, key):
    connection = connections["default"]
    table, cols = _names(PushKey)
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {table} WHERE {cols['session']} = %s AND {cols['key']} = %s",
                       [_prep(PushKey, "session", session_id, connection), key])


# Audit chain ----------------------------------------------------------------------------------


def bump_audit_head(site):
    """``(seq, hash)`` of the site's audit chain head once this writer took the next number,
    or None when the site has no head yet: one ``UPDATE ... RETURNING`` where the database has
    it (it holds the head's lock until the transaction commits), else the UPDATE and a read."""
    connection = connections["default"]
    table, cols = _names(AuditChainHead)
    sql = (f"UPDATE {table} SET {cols['seq']} = {cols['seq']} + 1 WHERE {cols['site']} = %s")
    with connection.cursor() as cursor:
        if _returning(connection):
            cursor.execute(f"{sql} RETURNING {cols['seq']}, {cols['hash']}", [site])
            return cursor.fetchone()
        cursor.execute(sql, [site])
        if not cursor.rowcount:
            return None
        cursor.execute(f"SELECT {cols['seq']}, {cols['hash']} FROM {table} "
                       f"WHERE {cols['site']} = %s", [site])
        return cursor.fetchone()


# AG-UI 1.0 runs -------------------------------------------------------------------------------


def heartbeat_runs(keys, now):
    """``runs.heartbeat_many`` on PostgreSQL in one statement whose text is the same for any
    number of runs: the keys as two arrays, the UPDATE of the running ones in a CTE and the
    SELECT of every one's status and outcome beside it (one snapshot: it reads the rows as the
    UPDATE matched them, and the UPDATE changes no status). ``{(session UUID, run_id): (status,
    outcome)}`` for the keys that have a row."""
    connection = connections["default"]
    table, cols = _names(AgentRun)
    sid, rid, status = cols["session"], cols["run_id"], cols["status"]
    sql = (f"WITH k(sid, rid) AS (SELECT * FROM unnest(%s::uuid[], %s::text[])), "
           f"u AS (UPDATE {table} SET {cols['heartbeat_at']} = %s FROM k "
           f"WHERE {table}.{sid} = k.sid AND {table}.{rid} = k.rid AND {table}.{status} = %s) "
           f"SELECT r.{sid}, r.{rid}, r.{status}, r.{cols['outcome']} FROM {table} r "
           f"JOIN k ON r.{sid} = k.sid AND r.{rid} = k.rid")
    # uuid[] takes UUIDs as they are (the field's own preparation costs 1.2 ms per 500).
    params = [[s if isinstance(s, uuid.UUID) else uuid.UUID(str(s)) for s, _ in keys],
              [r for _, r in keys], _prep(AgentRun, "heartbeat_at", now, connection),
              AgentRun.Status.RUNNING.value]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    return {(s, r): (st, _from_db(AgentRun, "outcome", outcome, connection))
            for s, r, st, outcome in rows}
