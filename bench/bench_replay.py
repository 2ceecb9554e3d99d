"""What keeping events for replay adds to a stored push, and what a replay costs. Not a test.

    python bench/bench_replay.py [--database-url postgres://...] [--calls 600] [--concurrency 8]

(1) Per stored push: the component's store (``components.store_render`` on the per-message
pool, the push's own database call) against the same store followed by the replay row
(``replaylog.arecord``), wall and CPU time per push in this process, and the ratio.
(2) The fold: ``a2ui.core.replay.replay`` of a session of N events (renders, updates, requests,
surface batches, messages) to its last moment, against ``a2ui.core.state.fold`` of the same
events (the reducer alone), per event.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_dbcalls import CARD, measure  # noqa: E402


def events(n):
    from a2ui.core.surfaces.catalog import BASIC_CATALOG_ID

    out = [("surface.batch", {"first_seq": 1, "messages": [
        {"version": "v0.9", "createSurface": {"surfaceId": "s", "catalogId": BASIC_CATALOG_ID}},
        {"version": "v0.9", "updateComponents": {"surfaceId": "s", "components": [
            {"id": "root", "component": "Text", "text": {"path": "/n"}}]}}]})]
    for i in range(n - 1):
        j = i % 5
        if j == 0:
            out.append(("component.rendered", {"component_id": f"c{i % 50}",
                                               "component_type": "card",
                                               "data": {"title": f"t{i}"}}))
        elif j == 1:
            out.append(("component.updated", {"component_id": f"c{(i - 1) % 50}",
                                              "operation": "merge", "data": {"title": "u"}}))
        elif j == 2:
            out.append(("request.opened", {"kind": "confirm", "params": {
                "request_id": f"r{i}", "title": "Go?"}}))
        elif j == 3:
            out.append(("request.closed", {"request_id": f"r{i - 1}", "status": "answered"}))
        else:
            out.append(("surface.batch", {"first_seq": i, "messages": [
                {"version": "v0.9", "updateDataModel": {"surfaceId": "s", "path": "/n",
                                                        "value": i}}]}))
    return out


async def run(args):
    from asgiref.sync import sync_to_async
    from django.contrib.auth import get_user_model

    from a2ui.compliance import replay as replaylog
    from a2ui.core import replay
    from a2ui.core import state as S
    from a2ui.infra import dbthreads
    from a2ui.models import A2UISessionLog
    from a2ui.surfaces import components

    def session():
        user, _ = get_user_model().objects.get_or_create(username="bench-replay")
        return A2UISessionLog.objects.create(user=user, state="active").session_id

    sids = [await sync_to_async(session)() for _ in range(args.concurrency)]
    k = args.concurrency
    tag = uuid.uuid4().hex[:8]

    async def store(i):
        await dbthreads.run(components.store_render, sids[i % k],
                            {**CARD, "component_id": f"a{tag}{i}"})

    async def store_and_keep(i):
        data = {**CARD, "component_id": f"b{tag}{i}"}
        await dbthreads.run(components.store_render, sids[i % k], data)
        await replaylog.arecord(sids[i % k], i, "component.rendered", data)

    print(f"{args.calls} pushes each, {args.concurrency} at a time, PostgreSQL "
          f"({os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.1f})\n")
    print("| stored push | wall / CPU us |")
    print("|---|---:|")
    bw, bc = await measure("store", store, args.calls, args.concurrency)
    ow, oc = await measure("store+keep", store_and_keep, args.calls, args.concurrency)
    print(f"| ui.render store (baseline) | {bw:,.0f} / {bc:,.0f} |")
    print(f"| ui.render store + replay row | {ow:,.0f} / {oc:,.0f} |")
    print(f"\nwall ratio (with row / baseline): {ow / bw:.2f}x; CPU ratio: {oc / bc:.2f}x\n")

    for n in (100, 1000, 10000):
        evs = events(n)
        t0 = time.perf_counter()
        replay.replay(evs)
        rw = (time.perf_counter() - t0) / n * 1e6
        t0 = time.perf_counter()
        S.fold(S.SessionState(), evs)
        fw = (time.perf_counter() - t0) / n * 1e6
        print(f"replay of {n} events: {rw:.1f} us/event; reducer alone {fw:.1f} us/event "
              f"(ratio {rw / fw:.2f}x)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--database-url",
                        default="postgres://postgres@127.0.0.1:5432/a2ui_bench")
    parser.add_argument("--calls", type=int, default=600)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    from bench_push import django_on

    django_on(args.database_url, "replay")
    asyncio.run(run(args))


if __name__ == "__main__":
    main()
