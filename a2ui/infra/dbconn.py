"""Database connections that outlive a request: a dead one is found and replaced before use.

A connection kept between requests (in psycopg's pool, on a per-message thread of
``a2ui.infra.dbthreads``, or persistent with ``CONN_MAX_AGE``) does not know the server
closed it (``pg_terminate_backend``, a PostgreSQL restart or failover) until a query on it
fails: after the loss each of them failed one request, the first to use it, for as long as it
went unused (an MCP ``resources/list`` answered -32603 a minute later; issue 23).

A PostgreSQL server that ends a connection tells the client first (an ``ErrorResponse``, then
the end of the stream), so the idle connection's socket turns readable; a healthy idle
connection has nothing to read. :func:`server_gone` asks the kernel (``poll`` with no wait, no
round trip) and only when something did arrive runs the empty statement of psycopg_pool's own
``check_connection``; a per-message thread asks it before each call (:func:`replace_if_gone`).
Connections taken from psycopg's pool are checked by the pool itself when ``CONN_HEALTH_CHECKS``
is on (Django then gives the pool ``check_connection``: one empty statement per checkout; the
system check a2ui.W020 warns when it is off); whatever the project's settings, the credential
lookups run once more on a new connection when theirs turns out ended (:func:`read_retried`).
A connection cut without a word (a network partition) is found by none of these; TCP
keepalives bound that (docs/operations.md, "Database connections").
"""

import functools
import select

#: psycopg's ``TransactionStatus.IDLE``: connected, no transaction, no query in flight.
_IDLE = 0


def server_gone(conn):
    """True when the server has closed the psycopg connection ``conn`` (no round trip on a
    healthy idle connection); False for a live one and for one that is busy or in a
    transaction (not idle: nothing to decide here)."""
    if conn.closed:
        return True
    pgconn = conn.pgconn
    if pgconn.transaction_status != _IDLE:
        return False
    try:
        poller = select.poll()
        poller.register(pgconn.socket, select.POLLIN)
        if not poller.poll(0):
            return False
    except (OSError, ValueError):  # no socket any more
        return True
    # Something came while idle: the server's goodbye, or (rarely) a notice or parameter
    # change. One empty statement tells them apart.
    from psycopg_pool import ConnectionPool

    try:
        ConnectionPool.check_connection(conn)
    except Exception:
        return True
    return False


def replace_if_gone(connection):
    """Close Django's ``connection`` if the server closed it (the next query opens a new one or
    takes another from the pool). For a connection kept between calls."""
    raw = connection.connection
    if raw is None or connection.vendor != "postgresql" or connection.in_atomic_block:
        return
    if server_gone(raw):
        connection.close()


def read_retried(func):
    """Decorator for a function that only reads (the credential lookups): when it fails because
    the server had ended its connection (the connection is closed after the error), it runs
    once more on a new one. Whatever the project's DATABASES (no pool check, ``CONN_MAX_AGE``
    without health checks), a credential is not refused with a 500 for a connection the
    server ended. Not inside a transaction, which was lost with the connection."""

    @functools.wraps(func)
    def call(*args, **kwargs):
        from django.db import InterfaceError, OperationalError, connections

        try:
            return func(*args, **kwargs)
        except (OperationalError, InterfaceError):
            connection = connections["default"]
            raw = connection.connection
            if connection.in_atomic_block or not getattr(raw, "closed", False):
                raise
            connection.close()
        return func(*args, **kwargs)

    return call
