"""Failures caused by Redis or PostgreSQL being unreachable: one log line each, and a summary.

While Redis or the database is down, every push fails the same way; a traceback for each buried
the log (110 tracebacks for 110 failed pushes, issue 23). :func:`report` tells such a failure
from a fault of the server: an outage's (a connection to Redis or PostgreSQL refused, lost or
timed out: :func:`cause`) is logged as ONE WARNING line under ``a2ui.outages`` (what failed,
the session, the cause, the error's class and message), with its traceback only for the first
failure of an outage (none of that cause in the last :data:`QUIET_SECONDS`), and every
:data:`SUMMARY_SECONDS` while failures go on, one summary line ("110 requests failed in the last
10 s: Redis unreachable 110 (ui.render 100, ui.progress 10)"). Anything else is not reported
(``False``): the caller logs it as the fault it is, traceback and all.

Every place that catches a failed push, socket message, MCP call or HTTP request goes through
it: the sockets' last-resort handlers and handshakes, direct delivery, MCP's handlers, the REST
exception handler, ``/mcp``'s authentication and ``a2ui.middleware.ServiceUnavailableMiddleware``;
what fails beside them and is retried (heartbeats, group refreshes) through :func:`warning`, and
channels-redis's receive task through :class:`LibraryTracebacks` on its logger.
"""

import logging
import math
import re
import sys
import threading
import time
from collections import Counter

log = logging.getLogger("a2ui.outages")

#: Called with each outage's kind (``REDIS``, ``DATABASE``): the metrics count them
#: (``a2ui.infra.prom`` sets it; outages import no metrics).
counter = None


def _counted(kind):
    if counter is not None:
        counter(kind)

REDIS = "Redis unreachable"
DATABASE = "database unreachable"

#: How often a summary line is written while failures go on.
SUMMARY_SECONDS = 10.0
#: A failure after this long without one of its cause starts a new outage (traceback once).
QUIET_SECONDS = 60.0

# What is written of a client's text: a session id, a method name (else "a message").
_SESSION = re.compile(r"[0-9a-fA-F-]{32,36}")
_WHAT = re.compile(r"[\w .:/<>-]{1,120}")
_lock = threading.Lock()
_counts = Counter()  # (cause, what) -> failures since the last summary
_last = {}  # cause -> monotonic time of its last failure
_timer = None


def cause(exc):
    """:data:`REDIS` or :data:`DATABASE` when ``exc`` (or what it was raised from, unless it
    was raised ``from None``) is a lost, refused or timed-out connection to it; None for
    anything else."""
    for _ in range(5):
        if exc is None:
            return None
        lost = _connection_lost(exc)
        if lost is not None:
            return DATABASE if lost else None
        if _redis_error(exc):
            return REDIS
        # ``raise ... from None`` says the context is not the cause (a domain answer such as
        # -32012, outcome unknown, made of a lost connection): not an outage.
        exc = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)
    return None


#: SQLSTATE classes of a connection that failed or was ended, or a server that cannot take one:
#: connection exceptions, insufficient resources (too many connections), and the operator's
#: 57P01-57P05 (shutdown, crash, cannot connect now...; not 57014, a cancelled statement).
_LOST_STATES = ("08", "53", "57P")


def _connection_lost(exc):
    """For a database error: True when it says the database cannot be reached (no answer,
    connection refused or ended, the pool's wait for a connection timed out), False for any
    other (a deadlock, a cancelled statement, SQLite's lock); None for anything else."""
    from django.db import DatabaseError, InterfaceError, OperationalError

    try:
        import psycopg
    except ImportError:  # pragma: no cover - SQLite only
        psycopg = None
    if psycopg is not None and isinstance(exc, psycopg.Error):
        if isinstance(exc, psycopg.InterfaceError):
            return True
        if isinstance(exc, psycopg.OperationalError):
            state = exc.sqlstate  # None: the client's own (connection failed, PoolTimeout)
            return state is None or state.startswith(_LOST_STATES)
        return False
    if isinstance(exc, OperationalError | InterfaceError):  # Django's, around the driver's
        inner = exc.__cause__
        if inner is None:
            return True
        lost = _connection_lost(inner)
        return bool(lost)
    if isinstance(exc, DatabaseError):
        return False
    return None



#: Whether ``exc`` is a lost database connection (one a fresh connection may not meet).
connection_lost = _connection_lost

def _redis_error(exc):
    # redis-py's (the cache, the channel layer) and the builtin ConnectionError family, which
    # the hot-path connection (a2ui.infra.redisline) raises: no other server is spoken to.
    import redis.exceptions

    return isinstance(exc, redis.exceptions.ConnectionError | redis.exceptions.TimeoutError
                      | ConnectionError)


def describe(exc):
    """``"OperationalError: the first line of its message"`` (at most 200 characters)."""
    text = str(exc).strip().splitlines()
    text = text[0] if text else ""
    if len(text) > 200:
        text = text[:199] + "…"
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def http_what(request):
    """``"GET /api/v4/sessions/<uuid:session_id>/messages"``: a request's method and URL
    pattern (bounded, and nothing of the client's own text)."""
    match = getattr(request, "resolver_match", None)
    route = getattr(match, "route", None)
    return f"{request.method} /{route}" if route else f"{request.method} request"


def report(exc, what, session=None):
    """Log ``exc`` as one line if an outage caused it and return True; else False.

    ``what`` names what failed (a method, ``"GET /api/v4/requests"``...), ``session`` the
    session it was for, if any.
    """
    kind = cause(exc)
    if kind is None:
        return False
    what = what if isinstance(what, str) and _WHAT.fullmatch(what) else "a message"
    now = time.monotonic()
    with _lock:
        first = now - _last.get(kind, -math.inf) > QUIET_SECONDS
        _last[kind] = now
        _counts[(kind, what)] += 1
        _schedule_summary()
    _counted(kind)
    session = str(session) if session is not None else None
    where = f" for session {session}" if session and _SESSION.fullmatch(session) else ""
    log.warning("a2ui: %s failed%s: %s (%s)%s", what, where, kind, describe(exc),
                "; the first failure of this outage, its traceback follows" if first else "",
                exc_info=exc if first else None)
    return True


def tally(exc=None):
    """Count ``exc`` (default: the exception being handled) in the Prometheus outage errors if
    an outage caused it, without a log line: for a failure logged its own way (a cap that
    could not be checked, a background write retried). True if it was an outage."""
    kind = cause(exc if exc is not None else sys.exc_info()[1])
    if kind is not None:
        _counted(kind)
    return kind is not None


def warning(logger, what, message, *args, session=None):
    """In an ``except`` block, for a failure the code goes on after: an outage's one line
    (:func:`report`), else ``message`` at WARNING with the traceback, as before."""
    if not report(sys.exc_info()[1], what, session):
        logger.warning(message, *args, exc_info=True)


class LibraryTracebacks(logging.Filter):
    """On a library's logger (``channels_redis.pubsub``, whose receive task logs a traceback
    for every reconnection attempt while Redis is away): a record of an outage becomes the
    outage's one line (:func:`report`); anything else passes as it is."""

    def __init__(self, what):
        super().__init__()
        self.what = what

    def filter(self, record):
        exc = record.exc_info[1] if record.exc_info else None
        return exc is None or not report(exc, self.what)


def _schedule_summary():
    global _timer
    if _timer is None:
        _timer = threading.Timer(SUMMARY_SECONDS, summarize)
        _timer.daemon = True
        _timer.start()


def summarize():
    """Write the summary of the failures since the last one (the timer calls it); None if
    there were none, else the line."""
    global _timer
    with _lock:
        counts = dict(_counts)
        _counts.clear()
        _timer = None
    total = sum(counts.values())
    if not total:
        return None
    parts = []
    for kind in (REDIS, DATABASE):
        whats = sorted(((n, what) for (k, what), n in counts.items() if k == kind),
                       key=lambda item: (-item[0], item[1]))
        if whats:
            detail = ", ".join(f"{what} {n}" for n, what in whats)
            parts.append(f"{kind} {sum(n for n, _ in whats)} ({detail})")
    line = (f"a2ui: {total} request{'s' if total != 1 else ''} failed in the last "
            f"{SUMMARY_SECONDS:g} s: " + "; ".join(parts))
    log.warning(line)
    return line


def reset():
    """Forget every failure (tests)."""
    global _timer
    with _lock:
        if _timer is not None:
            _timer.cancel()
        _timer = None
        _counts.clear()
        _last.clear()
