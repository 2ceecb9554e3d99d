"""Prometheus metrics of the process (``prometheus-client``), scraped at ``/a2ui/metrics``.

Off by default costs nothing: with ``A2UI['PROMETHEUS']`` False, :data:`ON` is False and every
hook is one attribute test. On, a hook adds to a plain process-local tally (a dict entry under
an uncontended lock): nothing blocks, nothing reaches the database or Redis, and the hot path
never touches ``prometheus_client`` (whose ``labels()`` and, in multiprocess mode, mmap writes
cost a measurable share of a push). The tallies are flushed into the ``prometheus_client``
metrics at every scrape of this process and, in multiprocess mode, once a second by a daemon
thread (:data:`FLUSH_SECONDS`), so a scrape of another process lags by at most about a second.

One process needs no set-up. Several processes (Daphne workers behind one scrape) share a
directory: ``A2UI['PROMETHEUS_MULTIPROC_DIR']`` (or the environment's
``PROMETHEUS_MULTIPROC_DIR``), empty at the start of the deployment; each process writes its
own files there and the scrape of any process sums them (gauges of live counts: ``livesum``,
the files of a process that exited are left out). Values true of the shared store (pending
requests) are read from it at the scrape instead (:func:`asample`). The names are in
docs/operations.md.
"""

import os
import threading
import time

from a2ui.infra import jobs
from a2ui.infra import outages as outage_reports
from a2ui.infra.tallies import MAX_LABELS, Counts, Levels, Observations, label  # noqa: F401
from a2ui.infra.tallies import tally_lock as _tally_lock

ON = False
_lock = threading.Lock()
_ready = False
registry = None

#: Seconds between two flushes of the tallies by the flusher thread (multiprocess mode).
FLUSH_SECONDS = 1.0
#: Seconds a scrape reuses the pending-requests count read from the database.
PENDING_CACHE_SECONDS = 5.0

#: Latency buckets, seconds: a push is a few milliseconds.
PUSH_BUCKETS = (.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5)
#: Answer latency buckets, seconds: a person answers in seconds to minutes.
ANSWER_BUCKETS = (.1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600)

#: The tallies (None until :func:`setup` turns the metrics on).
sockets = sessions = pushes = push_latency = repairs = resyncs = outages = None
refusals = cap_refusals = answer_latency = None
_tallies = ()
# The metrics set at the scrape.
pool_queue = pending = None
_attached = {}  # (session hex, protocol) -> this process's clients of it (a2ui_sessions)
_pending_read = [0.0]  # monotonic time of the last pending-requests count


def setup(force=False):
    """Create the metrics when ``A2UI['PROMETHEUS']`` is on (once per process; ``force``: again,
    for tests). Sets :data:`ON`."""
    global ON, _ready, registry, _tallies, sockets, sessions, pushes, push_latency, repairs
    global resyncs, outages, refusals, cap_refusals, answer_latency, pool_queue, pending
    from a2ui.conf import a2ui_settings

    with _lock:
        if _ready and not force:
            return ON
        _ready = True
        ON = False
        _attached.clear()
        _pending_read[0] = 0.0
        if not a2ui_settings.PROMETHEUS:
            return ON
        directory = multiproc_dir()
        if directory:
            os.makedirs(directory, exist_ok=True)
            # prometheus_client reads the environment when a metric is created
            os.environ["PROMETHEUS_MULTIPROC_DIR"] = directory
            import atexit

            atexit.register(mark_dead)  # flushed, then its live gauges leave the sums
            _start_flusher()
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

        registry = CollectorRegistry(auto_describe=True)
        live = {"multiprocess_mode": "livesum", "registry": registry}
        sockets = Levels(Gauge("a2ui_sockets", "Open WebSockets, per protocol.",
                               ["protocol"], **live))
        sessions = Levels(Gauge(
            "a2ui_sessions", "Sessions with a client of the protocol attached, counted by each "
            "process holding one (a session attached on two processes counts on each).",
            ["protocol"], **live))
        pushes = Counts(Counter("a2ui_pushes", "Agent pushes delivered, per protocol of the "
                                "session's attached clients (none: 'detached').", ["protocol"],
                                registry=registry))
        push_latency = Observations(Histogram(
            "a2ui_push_latency_seconds", "An agent push, stored and delivered: seconds, per "
            "protocol.", ["protocol"], buckets=PUSH_BUCKETS, registry=registry), PUSH_BUCKETS)
        repairs = Counts(Counter("a2ui_lost_sequence_repairs", "Resync orders sent to a "
                                 "session whose push may not have been delivered "
                                 "(stream.repair).", registry=registry))
        resyncs = Counts(Counter(
            "a2ui_resyncs", "Clients sent the session's state again, per protocol and cause "
            "(order: a resync order; epoch: the counter started again; gap: a missing "
            "sequence number).", ["protocol", "cause"], registry=registry))
        outages = Counts(Counter("a2ui_outage_errors", "Failures caused by an outage, per "
                                 "kind (redis, database).", ["kind"], registry=registry))
        refusals = Counts(Counter(
            "a2ui_refused_inputs", "Client frames and requests refused with a protocol "
            "error, per protocol and error code.", ["protocol", "reason"], registry=registry))
        cap_refusals = Counts(Counter(
            "a2ui_cap_refusals", "Refusals by a cap (a2ui.infra.caps), per cap kind.",
            ["kind"], registry=registry))
        answer_latency = Observations(Histogram(
            "a2ui_answer_latency_seconds", "From a request to a person (input, confirm) to "
            "its answer: seconds, per protocol of the answering client and kind.",
            ["protocol", "kind"], buckets=ANSWER_BUCKETS, registry=registry), ANSWER_BUCKETS)
        _tallies = (sockets, sessions, pushes, push_latency, repairs, resyncs, outages,
                    refusals, cap_refusals, answer_latency)
        pool_queue = Gauge("a2ui_db_pool_queue_depth", "Calls waiting for a per-message "
                           "database thread (sampled at the scrape).", **live)
        pending = Gauge("a2ui_pending_requests", "Requests awaiting a person's answer (open, "
                        "before their deadline), per kind: read from the database at the "
                        "scrape.", ["kind"], registry=registry,
                        multiprocess_mode="livemostrecent")
        ON = True
        return ON


def multiproc_dir():
    from a2ui.conf import a2ui_settings

    return a2ui_settings.PROMETHEUS_MULTIPROC_DIR or os.environ.get("PROMETHEUS_MULTIPROC_DIR")


# Hooks (each called only under ``if prom.ON``) -----------------------------------------------


def socket_opened(protocol):
    sockets.add((protocol,), 1)


def socket_closed(protocol):
    sockets.add((protocol,), -1)


def client_joined(session_hex, protocol):
    """A client of ``protocol`` attached to the session on this process."""
    key = (session_hex, protocol)
    with _tally_lock:
        n = _attached.get(key, 0)
        _attached[key] = n + 1
    if not n:
        sessions.add((label(protocol),), 1)


def client_left(session_hex, protocol):
    key = (session_hex, protocol)
    with _tally_lock:
        n = _attached.pop(key, 0) - 1
        if n > 0:
            _attached[key] = n
    if n == 0:
        sessions.add((label(protocol),), -1)


_DETACHED = ("detached",)


def pushed(seconds, clients, count=1):
    """``count`` pushes (a batch) took ``seconds``: one latency observation per call;
    ``clients``: ``{protocol: n}`` attached (or None). The pushes' counter and latency
    histogram are added to under one lock."""
    keys = [(label(protocol),) for protocol, n in clients.items() if n] if clients else None
    i = push_latency.bucket(seconds)
    with _tally_lock:
        for key in keys or (_DETACHED,):
            pushes.add_locked(key, count)
            push_latency.observe_locked(key, seconds, 1, i)


def pushed_result(seconds, result):
    """:func:`pushed` for what an agent push returned: a ``clients.Sent``, ``(seq, request)``,
    a list of them (a batch), or an answer dict with ``clients``."""
    count = 1
    if isinstance(result, tuple) and result:
        result = result[0]
    if isinstance(result, list):
        count = max(1, len(result))
        result = result[-1] if result else None
    clients = result.get("clients") if isinstance(result, dict) else getattr(
        result, "clients", None)
    pushed(seconds, clients, count)


def resynced(protocol, cause):
    resyncs.add((label(protocol), cause))


def refused(protocol, reason):
    """A client's frame or request refused with a protocol error (``reason``: its code)."""
    protocol = label(protocol)
    refusals.add((protocol, label(reason, "reason." + protocol)))


def cap_refused(kind):
    cap_refusals.add((label(kind, "cap"),))


def answered(row, via):
    """The answer to the request ``row`` (a PendingRequest just resolved) came from a client
    of protocol ``via``."""
    created, resolved = row.created_at, getattr(row, "resolved_at", None)
    if created is None or resolved is None:
        return
    seconds = max(0.0, (resolved - created).total_seconds())
    answer_latency.observe((label(via or "other"), label(row.kind, "kind")), seconds)


def outage(kind):
    outages.add(("redis" if "Redis" in kind else "database",))


def _count_outage(kind):
    if ON:
        outage(kind)


outage_reports.counter = _count_outage


# The scrape -----------------------------------------------------------------------------------


def flush():
    """Move the tallies into the ``prometheus_client`` metrics (the scrape does it first)."""
    with _lock:
        for tally in _tallies:
            tally.flush()


def _flush_if_on():
    if ON:
        flush()


#: Moves the tallies into the metrics every FLUSH_SECONDS while they are on (a failed round:
#: the next one, or the scrape, flushes).
_flusher = jobs.Flusher("metrics tallies flush", lambda: FLUSH_SECONDS, _flush_if_on,
                        always=True)


def _start_flusher():
    _flusher.wake()


async def asample(count_pending, fresh=False):
    """Values read from the shared store before a scrape: the open requests, counted in the
    database by ``count_pending()`` (``{kind: n}``: ``a2ui.requests.pending.open_counts``) at
    most every :data:`PENDING_CACHE_SECONDS` (``fresh``: now). An outage leaves the last
    count."""
    if not ON or (not fresh and time.monotonic() - _pending_read[0] < PENDING_CACHE_SECONDS):
        return
    _pending_read[0] = time.monotonic()
    from channels.db import database_sync_to_async

    try:
        counts = await database_sync_to_async(count_pending)()
    except Exception:
        return
    for kind, n in counts.items():
        pending.labels(label(kind, "kind")).set(n)


def sample():
    """Values read at the scrape rather than kept up to date on the hot path."""
    from a2ui.infra import dbthreads

    pool_queue.set(dbthreads.queue_depth())


def exposition():
    """``(content type, body bytes)`` of the scrape: every process's metrics in multiprocess
    mode, this process's otherwise."""
    from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

    flush()
    sample()
    if multiproc_dir():
        from prometheus_client import multiprocess

        scrape = CollectorRegistry()
        multiprocess.MultiProcessCollector(scrape, path=multiproc_dir())
        return CONTENT_TYPE_LATEST, generate_latest(scrape)
    return CONTENT_TYPE_LATEST, generate_latest(registry)


def mark_dead(pid=None):
    """At a process's exit in multiprocess mode: its counts flushed, its live gauges leave the
    sums."""
    if ON and multiproc_dir():
        from prometheus_client import multiprocess

        if pid is None:
            try:
                flush()
            except Exception:
                pass
        multiprocess.mark_process_dead(pid or os.getpid(), multiproc_dir())


def now():
    return time.perf_counter()
