"""Which AG-UI 1.0 runs still have a live stream, whichever process serves it
(docs/protocol-agui.md, "A lost stream").

A running run (an ``AgentRun`` row, ``a2ui.runs.records``) is streamed by one process, which
holds the run's *lease* (``a2ui.infra.leases``, scope ``a2ui:run:<session hex>:<run digest>``),
taken for ``AGUI_RUN_LEASE_SECONDS`` when the run starts (``aset``, by ``runs.astart``) and held
by the process while the run's stream lives (``ahold``: refreshed every third of that, one
round trip per process and period however many runs it streams), released when the stream
ends (``arelease``). A running row whose lease lapsed lost its stream: its process died (kill -9,
out of memory, a host lost) without ending it; ``runs`` then ends it (the thread's next run, or
the housekeeping sweep) and tells the agent.

What may go wrong, and what it does:

* Redis loses the key (a restart, a flush): the holder sets it again within a third of a lease.
  A Redis younger than a lease may have lost leases their holders have not set again yet, so
  ``alive`` then answers None (unknown) for a missing lease rather than False
  (``a2ui.infra.leases``). A run held by the asking process is never taken for lost. Should a live
  run still be taken for lost, its stream hears the end (``run.ended``) and sends RUN_ERROR:
  detectable, never silent.
* Redis cannot be reached: ``alive`` answers None (unknown) and ``runs`` falls back on the row's
  heartbeat (three ``AGUI_KEEPALIVE_SECONDS`` without one).
* The process dies between the row and its first lease: ``runs`` gives a run one lease from its
  start before it looks for its lease at all.

"""

import hashlib

from a2ui.conf import a2ui_settings
from a2ui.infra import leases

_held = {}  # scope key -> Lease: the runs whose stream lives in this process


def seconds():
    return a2ui_settings.AGUI_RUN_LEASE_SECONDS


def key(session_id, run_id):
    session_hex = getattr(session_id, "hex", None) or str(session_id).replace("-", "")
    digest = hashlib.sha256(str(run_id).encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return f"a2ui:run:{session_hex}:{digest}"


async def aset(session_id, run_id):
    """The run's lease, for one lease from now (its stream is starting)."""
    k = key(session_id, run_id)
    await leases.acquire([leases.Scope(k)], seconds(), member=k, refreshed=False)


async def ahold(session_id, run_id):
    """This process streams the run: its lease is kept until :func:`arelease`."""
    k = key(session_id, run_id)
    if k not in _held:
        _held[k] = await leases.acquire([leases.Scope(k)], seconds(), member=k)


async def arelease(session_id, run_id):
    """The run's stream ended here: its lease goes (best effort: it lapses anyway)."""
    lease = _held.pop(key(session_id, run_id), None)
    if lease is not None:
        await lease.release()


async def alive(pairs):
    """For each ``(session_id, run_id)``: True while a stream holds the run's lease, False once
    it lapsed, None when Redis cannot say."""
    return await leases.alive([key(s, r) for s, r in pairs], ttl=seconds())


def clear():
    """Forget this process's leases (tests)."""
    _held.clear()
