"""Hand-written SQL for the per-message statements, written once per model.

The ORM compiles a query anew on every call: on the soak's machine that was 600-900 us of CPU
for a one-row UPDATE or EXISTS whose round trip takes 200 us, on the pool threads that share
the interpreter (and its lock) with the event loop (docs/performance.md). These are the same
statements, written once: table and column names come from the models' ``_meta`` and values
are adapted, and read back, by the models' own fields, so the SQL runs on PostgreSQL and SQLite
alike and the tests of the services (``components``, ``pending``) test it on both.

The statements themselves live with the domain that owns the table (``a2ui.surfaces.sql``,
``a2ui.requests.sql``, ``a2ui.push.keys``, ``a2ui.models.audit``, ``a2ui.runs.sql``); this
module is what they are written with, for any model.
"""

import contextlib
import functools

from django.db import connections, transaction


@functools.cache
def names(model):
    """Quoted table name and ``field name -> quoted column``, of a model."""
    quote = connections["default"].ops.quote_name
    columns = {f.name: quote(f.column) for f in model._meta.concrete_fields}
    return quote(model._meta.db_table), columns


def prep(model, name, value, connection):
    """``value`` for ``model.name`` as the database takes it (UUID, JSON, datetime, ...)."""
    return model._meta.get_field(name).get_db_prep_save(value, connection)


@functools.cache
def converters_of(model, vendor, alias):
    connection = connections[alias]
    out = []
    for field in model._meta.concrete_fields:
        col = field.get_col(model._meta.db_table)
        out.append((col, connection.ops.get_db_converters(col) + col.get_db_converters(connection)))
    return out


def converters(model, connection):
    """Per concrete field, the converters the ORM applies to what the database returns."""
    return converters_of(model, connection.vendor, connection.alias)


def instance(model, row, connection):
    """A model instance from a ``SELECT *``-ordered row, converted as the ORM would."""
    values = []
    for value, (col, convs) in zip(row, converters(model, connection), strict=True):
        for conv in convs:
            value = conv(value, col, connection)
        values.append(value)
    return model.from_db(connection.alias, [f.attname for f in model._meta.concrete_fields],
                         values)


def from_db(model, name, value, connection):
    """``value`` of ``model.name`` as the database returned it, converted as the ORM would."""
    col = model._meta.get_field(name).get_col(model._meta.db_table)
    for conv in connection.ops.get_db_converters(col) + col.get_db_converters(connection):
        value = conv(value, col, connection)
    return value


def select_all(model):
    table, cols = names(model)
    return table, ", ".join(cols[f.name] for f in model._meta.concrete_fields)


def insert(instance):
    """INSERT a new, unsaved ``instance`` (its fields' defaults applied as ``save`` would);
    its primary key is set where the database returns it. IntegrityError as ``save``."""
    connection = connections["default"]
    model = type(instance)
    table, cols = names(model)
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



def returning(connection):
    """UPDATE ... RETURNING (PostgreSQL; SQLite from 3.35, as INSERT ... RETURNING)."""
    return connection.features.can_return_columns_from_insert
