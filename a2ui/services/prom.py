"""Prometheus metrics of the process (``prometheus-client``), scraped at ``/a2ui/metrics``.

Off by default costs nothing: with ``A2UI['PROMETHEUS']`` False, :data:`ON` is False and every
hook is one attribute test. On, every hook is an in-process increment or observation (a lock and
an add; in multiprocess mode a write into an mmap'd file): nothing blocks, nothing crosses a
thread, nothing reaches the database or Redis.

One process needs no set-up. Several processes (Daphne workers behind one scrape) share a
directory: ``A2UI['PROMETHEUS_MULTIPROC_DIR']`` (or the environment's
``PROMETHEUS_MULTIPROC_DIR``), empty at the start of the deployment; each process writes its
own files there and the scrape of any process sums them (gauges of live counts: ``livesum``,
the files of a process that exited are left out). The names are in docs/operations.md.
"""

import os
import re
import threading
import time

ON = False
_lock = threading.Lock()
_ready = False
registry = None

# The metrics (None until :func:`setup`).
sockets = pushes = push_latency = repairs = outages = pool_queue = None

#: Latency buckets, seconds: a push is a few milliseconds.
PUSH_BUCKETS = (.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5)

_LABEL = re.compile(r"[a-z0-9_.-]{1,40}")
MAX_LABELS = 32
_seen = {}


def label(value, kind="protocol"):
    """A bounded label value: at most :data:`MAX_LABELS` distinct values per kind, the rest
    ``"other"``; anything not a short lowercase word ``"other"`` too."""
    value = str(value).lower()
    if not _LABEL.fullmatch(value):
        return "other"
    seen = _seen.setdefault(kind, set())
    if value in seen:
        return value
    if len(seen) >= MAX_LABELS:
        return "other"
    seen.add(value)
    return value


def multiproc_dir():
    from a2ui.conf import a2ui_settings

    return a2ui_settings.PROMETHEUS_MULTIPROC_DIR or os.environ.get("PROMETHEUS_MULTIPROC_DIR")


def setup(force=False):
    """Create the metrics when ``A2UI['PROMETHEUS']`` is on (once per process; ``force``: again,
    for tests). Sets :data:`ON`."""
    global ON, _ready, registry, sockets, pushes, push_latency, repairs, outages, pool_queue
    from a2ui.conf import a2ui_settings

    with _lock:
        if _ready and not force:
            return ON
        _ready = True
        if not a2ui_settings.PROMETHEUS:
            ON = False
            return ON
        directory = multiproc_dir()
        if directory:
            os.makedirs(directory, exist_ok=True)
            # prometheus_client reads the environment when a metric is created
            os.environ["PROMETHEUS_MULTIPROC_DIR"] = directory
            import atexit

            atexit.register(mark_dead)  # its live gauges leave the sums when it exits
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

        registry = CollectorRegistry(auto_describe=True)
        live = {"multiprocess_mode": "livesum"}
        sockets = Gauge("a2ui_sockets", "Open WebSockets, per protocol.", ["protocol"],
                        registry=registry, **live)
        pushes = Counter("a2ui_pushes", "Agent pushes delivered, per protocol of the "
                         "session's attached clients (none: 'detached').", ["protocol"],
                         registry=registry)
        push_latency = Histogram("a2ui_push_latency_seconds", "An agent push, stored and "
                                 "delivered: seconds, per protocol.", ["protocol"],
                                 buckets=PUSH_BUCKETS, registry=registry)
        repairs = Counter("a2ui_lost_sequence_repairs", "Resync orders sent to a session "
                          "whose push may not have been delivered (stream.repair).", registry=registry)
        outages = Counter("a2ui_outage_errors", "Failures caused by an outage, per kind "
                          "(redis, database).", ["kind"], registry=registry)
        pool_queue = Gauge("a2ui_db_pool_queue_depth", "Calls waiting for a per-message "
                           "database thread (sampled at the scrape).", registry=registry,
                           multiprocess_mode="livesum")
        ON = True
        return ON


# Hooks ------------------------------------------------------------------------------------------


def socket_opened(protocol):
    sockets.labels(protocol).inc()


def socket_closed(protocol):
    sockets.labels(protocol).dec()


def pushed(seconds, clients, count=1):
    """``count`` pushes (a batch) took ``seconds``; ``clients``: ``{protocol: n}`` attached
    (or None)."""
    protocols = [p for p, n in (clients or {}).items() if n] or ["detached"]
    for protocol in protocols:
        protocol = label(protocol)
        pushes.labels(protocol).inc(count)
        push_latency.labels(protocol).observe(seconds)


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


def outage(kind):
    outages.labels("redis" if "Redis" in kind else "database").inc()


# The scrape -------------------------------------------------------------------------------------


def sample():
    """Values read at the scrape rather than kept up to date on the hot path."""
    from a2ui.services import dbthreads

    pool_queue.set(dbthreads.queue_depth())


def exposition():
    """``(content type, body bytes)`` of the scrape: every process's metrics in multiprocess
    mode, this process's otherwise."""
    from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

    sample()
    if multiproc_dir():
        from prometheus_client import multiprocess

        scrape = CollectorRegistry()
        multiprocess.MultiProcessCollector(scrape, path=multiproc_dir())
        return CONTENT_TYPE_LATEST, generate_latest(scrape)
    return CONTENT_TYPE_LATEST, generate_latest(registry)


def mark_dead(pid=None):
    """At a process's exit in multiprocess mode: its live gauges leave the sums."""
    if ON and multiproc_dir():
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(pid or os.getpid(), multiproc_dir())


def now():
    return time.perf_counter()
