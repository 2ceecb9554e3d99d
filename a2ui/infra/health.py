"""Liveness and readiness of this process, for a load balancer's or Kubernetes' probes.

* **Liveness** (:func:`liveness`): the event loop answers. No dependency is looked at, so an
  outage of the database or Redis never makes an orchestrator restart healthy processes; the
  one figure is the loop's lag (how long a callback waited for its turn).
* **Readiness** (:func:`readiness`): the process can serve: the database answers ``SELECT 1``,
  Redis (``A2UI['REDIS_URL']``, when set, and every shard of ``A2UI['REDIS_SHARDS']``) answers
  on the connection the per-message commands use, and the live processes place sessions over
  the same Redis servers as this one (``redisstate.agree``: the one key a probe writes), the
  channel layer's Redis servers answer ``PING``, and the process is not shutting down
  (:func:`start_draining`, called when SIGTERM stops ``a2ui_serve``).

Probes come every second or so from several places. A readiness result is kept for
``A2UI['HEALTH_CACHE_SECONDS']`` per process, probes arriving meanwhile share one run of the
checks, and each check is bounded by ``A2UI['HEALTH_CHECK_TIMEOUT_SECONDS']``: a hung server
makes readiness fail in that time, not hang. The database query runs on a
thread of its own (not the per-message threads a busy process queues on); a query still
stuck after its timeout is waited for by the next runs, never started twice.

A report names each check with ``ok`` or ``fail``, its latency and, when it failed, the class of
the error, never its message (which may hold a host name or a URL): :class:`Report`.
"""

import asyncio
import concurrent.futures
import logging
import queue
import threading
import time
from dataclasses import dataclass, field

from a2ui.conf import a2ui_settings

log = logging.getLogger("a2ui.health")

OK = "ok"
FAIL = "fail"


@dataclass
class Report:
    """What a probe answers: ``ok``, and per check ``{"status", "latency_ms"[, "error"]}``."""

    ok: bool
    checks: dict = field(default_factory=dict)

    def as_dict(self):
        return {"status": OK if self.ok else FAIL, "checks": self.checks}


def _ms(seconds):
    return round(seconds * 1000, 1)


def _failed(exc):
    """The short name of a failure: its class (``TimeoutError``, ``ConnectionRefusedError``,
    ``OperationalError``); messages may name hosts, URLs or users and are not shown."""
    return type(exc).__name__


# Draining ---------------------------------------------------------------------------------------

_draining = threading.Event()


def start_draining():
    """The process is shutting down (SIGTERM): readiness answers ``fail`` from now on."""
    if not _draining.is_set():
        _draining.set()
        log.info("a2ui: shutting down: readiness now answers 503 (draining)")


def draining():
    return _draining.is_set()


# Liveness ---------------------------------------------------------------------------------------


async def liveness():
    """The event loop answers: the lag of one turn of it, in a :class:`Report` that is ok."""
    started = time.perf_counter()
    await asyncio.sleep(0)
    return Report(True, {"event_loop": {"status": OK,
                                        "latency_ms": _ms(time.perf_counter() - started)}})


# The checks -------------------------------------------------------------------------------------

class _Worker:
    """One daemon thread running submitted calls in turn: a query stuck in a database that
    stopped answering neither blocks the process's exit (a ThreadPoolExecutor's threads are
    joined at exit) nor takes a thread of the per-message pool."""

    def __init__(self, name):
        self.jobs = queue.SimpleQueue()
        threading.Thread(target=self.run, name=name, daemon=True).start()

    def run(self):
        while True:
            func, future = self.jobs.get()
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(func())
                except BaseException as exc:
                    future.set_exception(exc)

    def submit(self, func):
        future = concurrent.futures.Future()
        self.jobs.put((func, future))
        return future


_db_thread = []  # [_Worker] once used
_db_pending = [None]  # the query in flight, if any (concurrent.futures.Future)


def _query_database():
    """``SELECT 1`` on the default database, on the health thread's connection; as a request
    would, give the connection back (or close it) after, unless it may be kept."""
    from django.db import connections

    from a2ui.infra import dbconn

    connection = connections["default"]
    dbconn.replace_if_gone(connection)
    connection.close_if_unusable_or_obsolete()
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    finally:
        connection.close_if_unusable_or_obsolete()


async def check_database():
    if not _db_thread:
        _db_thread.append(_Worker("a2ui-health-db"))
    pending = _db_pending[0]
    if pending is None or pending.done():  # one query at a time, however long one hangs
        pending = _db_pending[0] = _db_thread[0].submit(_query_database)
    await asyncio.shield(asyncio.wrap_future(pending))


async def check_redis():
    from a2ui.infra import shared

    await shared.backend().agree()  # PING, and the processes agree on the Redis shards


def channel_layer_hosts():
    """The Redis servers of the default channel layer (channels-redis' ``hosts``), or None
    for a layer without any (the in-memory layer: nothing to reach)."""
    from channels.layers import DEFAULT_CHANNEL_LAYER
    from django.conf import settings

    config = (getattr(settings, "CHANNEL_LAYERS", {}) or {}).get(DEFAULT_CHANNEL_LAYER) or {}
    if "hosts" not in (config.get("CONFIG") or {}) and "redis" not in config.get("BACKEND", ""):
        return None
    from channels_redis.utils import decode_hosts

    return decode_hosts((config.get("CONFIG") or {}).get("hosts"))


async def check_channel_layer():
    """``PING`` each of the layer's Redis servers on a connection made as the layer makes its
    own (the same address, password, TLS, sentinel and timeouts), closed after."""
    hosts = channel_layer_hosts()
    if not hosts:
        return
    import redis.asyncio as aioredis
    from channels_redis.utils import create_pool

    for host in hosts:
        client = aioredis.Redis(connection_pool=create_pool(host))
        try:
            await client.ping()
        finally:
            await client.aclose(close_connection_pool=True)


def readiness_checks():
    """``{name: coroutine function}`` of the checks that apply to this configuration."""
    checks = {"database": check_database}
    if a2ui_settings.REDIS_URL:
        checks["redis"] = check_redis
    checks["channel_layer"] = check_channel_layer
    return checks


async def _timed(check, timeout):
    started = time.perf_counter()
    try:
        await asyncio.wait_for(check(), timeout)
    except Exception as exc:  # any failure is the check's answer, never the probe's 500
        result = {"status": FAIL, "error": _failed(exc)}
    else:
        result = {"status": OK}
    return {**result, "latency_ms": _ms(time.perf_counter() - started)}


# Readiness --------------------------------------------------------------------------------------

_cache = {"report": None, "at": 0.0}
_running = [None, None]  # [event loop, task] of the run in progress


async def _run_checks():
    timeout = a2ui_settings.HEALTH_CHECK_TIMEOUT_SECONDS
    checks = readiness_checks()
    results = await asyncio.gather(*(_timed(check, timeout) for check in checks.values()))
    named = dict(zip(checks, results, strict=True))
    report = Report(all(r["status"] == OK for r in results),
                    {"serving": {"status": OK}, **named})
    previous = _cache["report"]
    if previous is None or previous.ok != report.ok:
        if report.ok:
            log.info("a2ui: ready")
        else:
            log.warning("a2ui: not ready: %s", ", ".join(
                f"{name} {r['error']}" for name, r in named.items() if r["status"] != OK))
    _cache.update(report=report, at=time.monotonic())
    return report


async def readiness():
    """The process's readiness as a :class:`Report`: at once ``fail`` (check ``serving``)
    while it drains; else the checks' last result if younger than ``HEALTH_CACHE_SECONDS``,
    or a new run of them (one at a time: concurrent probes wait for the same run)."""
    if draining():
        return Report(False, {"serving": {"status": FAIL, "error": "draining"}})
    report = _cache["report"]
    if report is not None and time.monotonic() - _cache["at"] < a2ui_settings.HEALTH_CACHE_SECONDS:
        return report
    loop = asyncio.get_running_loop()
    owner, task = _running
    if owner is not loop or task is None or task.done():
        task = loop.create_task(_run_checks())
        _running[:] = [loop, task]
    # Shielded: a probe that hangs up does not cancel the run the others wait for.
    return await asyncio.shield(task)


def reset():
    """Forget the cached result and the draining mark (tests)."""
    _draining.clear()
    _cache.update(report=None, at=0.0)
    _running[:] = [None, None]
