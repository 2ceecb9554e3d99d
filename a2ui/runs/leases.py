"""Which AG-UI 1.0 runs still have a live stream, whichever process serves it
(docs/protocol-agui.md, "A lost stream").

A running run (an ``AgentRun`` row, ``a2ui.runs.records``) is streamed by one process, which
holds the run's *lease*: with Redis, the key ``a2ui:run:<session hex>:<run digest>``, set for
``AGUI_RUN_LEASE_SECONDS`` when the run starts (``aset``, by ``runs.astart``) and set again
every third of that by the process while the run's stream lives (``ahold``: one pipelined round
trip per process and period, however many runs it streams), deleted when the stream ends
(``arelease``). A running row whose lease lapsed lost its stream: its process died (kill -9,
out of memory, a host lost) without ending it; ``runs`` then ends it (the thread's next run, or
the housekeeping sweep) and tells the agent.

What may go wrong, and what it does:

* Redis loses the key (a restart, a flush): the holder sets it again within a third of a lease
  (SET, not EXPIRE). Every setting of leases also sets ``a2ui:run:since`` (the time it was
  first set, no TTL) if it is missing: a Redis younger than a lease may have lost leases its
  holders have not set again yet, so ``alive`` then answers None (unknown) for a missing lease
  rather than False. A run held by the asking process is never taken for lost. Should a live
  run still be taken for lost, its stream hears the end (``run.ended``) and sends RUN_ERROR:
  detectable, never silent.
* Redis cannot be reached: ``alive`` answers None (unknown) and ``runs`` falls back on the row's
  heartbeat (three ``AGUI_KEEPALIVE_SECONDS`` without one).
* The process dies between the row and its first lease: ``runs`` gives a run one lease from its
  start before it looks for its lease at all.

Without Redis (one process, the embedded default) the leases are a dict of this process.
"""

import asyncio
import hashlib
import logging
import time
import weakref

from a2ui.conf import a2ui_settings
from a2ui.infra import outages, shared

log = logging.getLogger(__name__)

SINCE = "a2ui:run:since"  # when this Redis's leases began (see the module's docstring)
_held = {}  # key -> True: the runs whose stream lives in this process
_local = {}  # key -> expiry (monotonic): the leases, without Redis
_refreshers = weakref.WeakKeyDictionary()  # event loop -> task


def seconds():
    return a2ui_settings.AGUI_RUN_LEASE_SECONDS


def key(session_id, run_id):
    session_hex = getattr(session_id, "hex", None) or str(session_id).replace("-", "")
    digest = hashlib.sha256(str(run_id).encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return f"a2ui:run:{session_hex}:{digest}"


def _redis():
    backend = shared.backend()
    return backend if hasattr(backend, "execute") else None


async def aset(session_id, run_id):
    """The run's lease, for one lease from now (its stream is starting)."""
    await _set([key(session_id, run_id)])


async def _set(keys):
    redis = _redis()
    if redis is None:
        now = time.monotonic()
        for k in keys:
            _local[k] = now + seconds()
        if len(_local) > 10000:
            for old in [k for k, t in _local.items() if t <= now]:
                del _local[old]
        return
    try:
        await redis.execute(("SET", SINCE, str(int(time.time())), "NX"),
                            *[("SET", k, "1", "EX", seconds()) for k in keys])
    except Exception:  # the lease lapses: the run's row heartbeat answers for it meanwhile
        outages.tally()
        log.warning("a2ui: could not set %d run lease(s)", len(keys), exc_info=True)


async def ahold(session_id, run_id):
    """This process streams the run: its lease is kept until :func:`arelease`."""
    k = key(session_id, run_id)
    _held[k] = True
    await _set([k])
    if _redis() is not None:
        loop = asyncio.get_running_loop()
        task = _refreshers.get(loop)
        if task is None or task.done():
            _refreshers[loop] = loop.create_task(_refresh())


async def arelease(session_id, run_id):
    """The run's stream ended here: its lease goes (best effort: it lapses anyway)."""
    k = key(session_id, run_id)
    _held.pop(k, None)
    _local.pop(k, None)
    redis = _redis()
    if redis is not None:
        try:
            await redis.execute(("DEL", k))
        except Exception:
            outages.tally()
            log.warning("a2ui: could not drop the lease of a run", exc_info=True)


async def alive(pairs):
    """For each ``(session_id, run_id)``: True while a stream holds the run's lease, False once
    it lapsed, None when Redis cannot say."""
    keys = [key(s, r) for s, r in pairs]
    redis = _redis()
    if redis is None:
        now = time.monotonic()
        return [k in _held or _local.get(k, 0) > now for k in keys]
    if not keys:
        return []
    try:
        since, *replies = await redis.execute(("GET", SINCE), *[("EXISTS", k) for k in keys])
    except Exception:
        outages.tally()
        log.warning("a2ui: could not read %d run lease(s)", len(keys), exc_info=True)
        return [True if k in _held else None for k in keys]
    settled = _age(since) >= seconds()  # else a lease may be lost and not set again yet
    return [True if k in _held or reply else (False if settled else None)
            for k, reply in zip(keys, replies, strict=True)]


def _age(since):
    """Seconds since the leases of this Redis began (0 when unknown)."""
    try:
        return time.time() - int(since)
    except (TypeError, ValueError):
        return 0


async def _refresh():
    while True:
        await asyncio.sleep(max(0.5, seconds() / 3))
        keys = list(_held)
        if keys and _redis() is not None:
            await _set(keys)


def clear():
    """Forget this process's leases (tests)."""
    _held.clear()
    _local.clear()
