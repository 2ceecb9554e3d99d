"""The per-message database calls against their ORM baselines, measured in the same run.

    python bench/bench_dbcalls.py [--database-url postgres://...] [--calls 600] [--concurrency 8]

For each call a push or an answer makes (the statements of ``a2ui.infra.sql`` through the per-message pool,
``a2ui.infra.dbthreads.run``) and its baseline (the same statement through the ORM, on
``database_sync_to_async`` with the pool as executor: the code before), the wall time and the
CPU time of this process per call, and the ratio baseline / ours; and the batched heartbeat
of AG-UI 1.0 runs (``runs.heartbeat_many``, one statement of one shape) against the ORM's two
statements of an OR per run. PostgreSQL only (the pool runs there). Not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CARD = {"component_id": "status", "component_type": "card", "metadata": {},
        "data": {"title": "Order status", "description": "update",
                 "sections": [{"label": "Step", "value": 1}]}}
UPDATE = {"component_id": "status", "operation": "merge", "data": {"description": "step"}}


def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


# The ORM baselines: the statements as the services wrote them before hotsql ---------------------


def orm_render(sid, params):
    from django.utils import timezone

    from a2ui.models import RenderedComponent

    return RenderedComponent.objects.filter(
        session_id=sid, component_id=params["component_id"]).update(
        component_type=params["component_type"], data=params["data"],
        metadata=params["metadata"], expires_at=None, updated_at=timezone.now())


def orm_render_new(sid, params):
    """A component the session does not have yet: the UPDATE that misses, then Max + create."""
    from django.db import IntegrityError, transaction
    from django.db.models import Max
    from django.utils import timezone

    from a2ui.models import RenderedComponent

    now = timezone.now()
    fields = {"component_type": params["component_type"], "data": params["data"],
              "metadata": params["metadata"], "expires_at": None, "updated_at": now}
    if RenderedComponent.objects.filter(
            session_id=sid, component_id=params["component_id"]).update(**fields):
        return
    with transaction.atomic():
        top = RenderedComponent.objects.filter(session_id=sid).aggregate(m=Max("position"))
        try:
            with transaction.atomic():
                RenderedComponent.objects.create(
                    session_id=sid, component_id=params["component_id"],
                    position=(top["m"] or 0) + 1, created_at=now, **fields)
        except IntegrityError:
            RenderedComponent.objects.filter(
                session_id=sid, component_id=params["component_id"]).update(**fields)


def orm_update(sid, params):
    from django.db import transaction
    from django.utils import timezone

    from a2ui.core.content.updates import apply_update
    from a2ui.models import RenderedComponent

    with transaction.atomic():
        c = (RenderedComponent.objects.select_for_update()
             .filter(session_id=sid, component_id=params["component_id"]).first())
        c.data = apply_update(c.component_type, c.data, params["operation"], params["data"])
        c.updated_at = timezone.now()
        c.save(update_fields=["data", "updated_at"])


def orm_create(sid, request_id):
    from datetime import timedelta

    from django.db import transaction
    from django.utils import timezone

    from a2ui.models import PendingRequest

    now = timezone.now()
    with transaction.atomic():
        return PendingRequest.objects.create(
            session_id=sid, request_id=request_id, kind="input", params={"request_id": request_id},
            deadline=now + timedelta(seconds=120), created_at=now)


def orm_answer(sid, request_id):
    from django.db.models import Q
    from django.utils import timezone

    from a2ui.models import A2UISessionLog, PendingRequest

    now = timezone.now()
    deliverable = Q(session__state__in=A2UISessionLog.LIVE_STATES) & (
        Q(session__agent__isnull=True) | Q(session__agent__is_active=True))
    qs = PendingRequest.objects.filter(session_id=sid, request_id=request_id, status="pending",
                                       kind="input").filter(deliverable, deadline__gt=now)
    if qs.update(status="answered", answer="R-1", resolved_at=now):
        return PendingRequest.objects.get(session_id=sid, request_id=request_id)


def orm_is_form(sid, component_id):
    from a2ui.models import RenderedComponent

    return RenderedComponent.objects.filter(
        session_id=sid, component_id=component_id, component_type="form").exists()


# Ours -------------------------------------------------------------------------------------------


def orm_heartbeat_many(keys):
    """``runs.heartbeat_many`` as the ORM writes it: an OR of every run's key, twice."""
    import functools
    import operator

    from django.db.models import Q
    from django.utils import timezone

    from a2ui.models import AgentRun

    match = functools.reduce(operator.or_, (Q(session_id=sid, run_id=rid) for sid, rid in keys))
    AgentRun.objects.filter(match, status="running").update(heartbeat_at=timezone.now())
    return {(sid, rid): (status, outcome) for sid, rid, status, outcome in
            AgentRun.objects.filter(match).values_list("session_id", "run_id", "status",
                                                       "outcome")}


def ours_create(sid, request_id):
    from a2ui.requests import pending

    return pending.create(sid, "input", {"request_id": request_id})


def ours_answer(sid, request_id):
    from a2ui.requests import pending

    return pending.respond(sid, request_id, "R-1")  # with the form check, in the same call


#: The runs of one heartbeat batch (``runs.BEAT_BATCH_MAX``).
BEAT_RUNS = 500


def running_runs(n):
    """``n`` running AG-UI 1.0 runs, each in a session of its own: their (session, run) keys."""
    from django.contrib.auth import get_user_model

    from a2ui.models import A2UISessionLog, AgentRun

    user, _ = get_user_model().objects.get_or_create(username="bench-dbcalls")
    sessions = A2UISessionLog.objects.bulk_create(
        [A2UISessionLog(user=user, state="active") for _ in range(n)])
    tag = uuid.uuid4().hex[:8]
    made = AgentRun.objects.bulk_create(
        [AgentRun(session=s, run_id=f"r{tag}{i}", thread_id=f"t{tag}{i}")
         for i, s in enumerate(sessions)])
    return [(run.session_id, run.run_id) for run in made]


async def measure(name, call, n, concurrency):
    sem = asyncio.Semaphore(concurrency)

    async def one(i):
        async with sem:
            await call(i)

    warm = min(50, n)  # call indices 0..warm-1 warm up, warm..warm+n-1 are measured
    await asyncio.gather(*(one(i) for i in range(warm)))
    t0, c0 = time.perf_counter(), cpu()
    await asyncio.gather(*(one(i) for i in range(warm, warm + n)))
    return (time.perf_counter() - t0) / n * 1e6, (cpu() - c0) / n * 1e6


async def run(args):
    from asgiref.sync import sync_to_async
    from channels.db import database_sync_to_async
    from django.contrib.auth import get_user_model

    from a2ui.infra import dbthreads
    from a2ui.models import A2UISessionLog
    from a2ui.runs import records as runs_service
    from a2ui.surfaces import components

    def orm_hop(func):
        return database_sync_to_async(func, thread_sensitive=False, executor=dbthreads._pool())

    def session():
        user, _ = get_user_model().objects.get_or_create(username="bench-dbcalls")
        return A2UISessionLog.objects.create(user=user, state="active").session_id

    # One session per concurrent caller for the component calls: each agent socket updates its
    # own session's components one at a time (the compare-and-set's case).
    sids = [await sync_to_async(session)() for _ in range(args.concurrency)]
    for sid in sids:
        await dbthreads.run(components.store_render, sid, CARD)
    k = args.concurrency
    runs = []  # (name, baseline call, our call)
    tag = uuid.uuid4().hex[:8]
    runs.append(("thread hop (no statement)",
                 lambda i: orm_hop(lambda: None)(), lambda i: dbthreads.run(lambda: None)))
    runs.append(("ui.render (re-render)",
                 lambda i: orm_hop(orm_render)(sids[i % k], CARD),
                 lambda i: dbthreads.run(components.store_render, sids[i % k], CARD)))
    runs.append(("ui.render (new component)",
                 lambda i: orm_hop(orm_render_new)(sids[i % k],
                                                   {**CARD, "component_id": f"o{tag}{i}"}),
                 lambda i: dbthreads.run(components.store_render, sids[i % k],
                                         {**CARD, "component_id": f"q{tag}{i}"})))
    runs.append(("ui.update (merge)",
                 lambda i: orm_hop(orm_update)(sids[i % k], UPDATE),
                 lambda i: dbthreads.run(components.store_update, sids[i % k], UPDATE)))
    runs.append(("ui.request_input (insert)",
                 lambda i: orm_hop(orm_create)(sids[i % k], f"o{tag}{i}"),
                 lambda i: dbthreads.run(ours_create, sids[i % k], f"q{tag}{i}")))
    runs.append(("user.respond (form check + answer)",
                 lambda i: _both(orm_hop(orm_is_form)(sids[i % k], f"o{tag}{i}"),
                                 orm_hop(orm_answer), sids[i % k], f"o{tag}{i}"),
                 lambda i: dbthreads.run(ours_answer, sids[i % k], f"q{tag}{i}")))
    beat_keys = await sync_to_async(running_runs)(BEAT_RUNS)
    beats = (f"AG-UI 1.0 heartbeats (a batch of {BEAT_RUNS} runs)",
             lambda i: orm_hop(orm_heartbeat_many)(beat_keys),
             lambda i: dbthreads.run(runs_service.heartbeat_many, beat_keys))
    print(f"{args.calls} calls each, {args.concurrency} at a time (the heartbeat batch: "
          f"{max(1, args.calls // 20)}, one at a time), PostgreSQL "
          f"({os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.1f})\n")
    print("| call | ORM + asgiref: wall / CPU us | hotsql + pool: wall / CPU us | CPU ratio |")
    print("|---|---:|---:|---:|")
    # The heartbeat batches go one at a time, as a process's do.
    plan = [(run, args.calls, args.concurrency) for run in runs]
    plan.append((beats, max(1, args.calls // 20), 1))
    for (name, base, ours), calls, concurrency in plan:
        bw, bc = await measure(name, base, calls, concurrency)
        ow, oc = await measure(name, ours, calls, concurrency)
        print(f"| {name} | {bw:,.0f} / {bc:,.0f} | {ow:,.0f} / {oc:,.0f} | {bc / oc:.2f}x |",
              flush=True)


async def _both(first, then, *args):
    await first
    return await then(*args)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--database-url",
                        default="postgres://postgres@127.0.0.1:5432/a2ui_bench")
    parser.add_argument("--calls", type=int, default=600)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_push import django_on

    django_on(args.database_url, "dbcalls")
    asyncio.run(run(args))


if __name__ == "__main__":
    main()
