"""A push to an MCP-watched session: direct delivery against the published path, in one run.

    REDIS_URL=redis://127.0.0.1:6379/<db> python bench/bench_mcp_watch.py [--pushes 3000]
        [--reps 5] [--in-flight 100]

One process, the one event loop of a server: a session with two listeners in this process, both
``a2ui.mcp.watch.WatchedSession`` (the MCP watcher's listener; the second stands for the
person's socket, which runs the same loop), and a sender that numbers and delivers
``component.updated`` events with ``a2ui.push.fanout.emit`` as an agent push does
(``--in-flight`` not yet received by both). Two ways, interleaved ``--reps`` times:

* **direct**: the listeners registered for direct delivery, as every listener is now: the
  count read with the sequence number equals the listeners here, no PUBLISH;
* **published**: the listeners not registered (the MCP watcher before it ran on the listeners'
  loop: it counted itself as a socket but took no direct deliveries, so every push to a watched
  session was PUBLISHed to ``a2ui.s.<session>`` and read back by the pubsub reader).

Reports pushes per second (until both listeners have every push), this process's CPU time per
push, publishes and sequence round trips per push, each way's median and the ratio
direct / published. Redis must be the real one (the published path is Redis pub/sub).
"""

import argparse
import asyncio
import os
import statistics
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "a2ui_project.settings")


async def one_run(args, direct_on):
    from a2ui.core.events import Kind
    from a2ui.infra import groups, shared
    from a2ui.mcp.watch import Watcher
    from a2ui.push import direct
    from a2ui.push import fanout as stream

    sid = uuid.uuid4()
    hexid = sid.hex
    received = [0, 0]
    moved = asyncio.Event()

    def counter(i):
        async def on_event(session_id, event):
            received[i] += 1
            moved.set()
        return on_event

    # The session's first socket created its count (``fresh``: direct delivery trusts a count
    # kept from the first socket on); it went, the two listeners stay.
    first = await shared.socket_opened(hexid, True)
    watchers = [Watcher(counter(0)), Watcher(counter(1))]
    for watcher in watchers:
        await watcher.watch(sid)
    await shared.socket_closed(hexid, first)
    if not direct_on:
        for watcher in watchers:
            direct.unregister(hexid, watcher.readers[sid][0])
    counts = {"publish": 0, "seq": 0}
    send_group, next_seq = groups.send_group, shared.next_seq_and_sockets

    async def counted_send(group, event):
        if group.startswith("a2ui.s."):
            counts["publish"] += 1
        await send_group(group, event)

    async def counted_seq(*a, **kw):
        counts["seq"] += 1
        return await next_seq(*a, **kw)

    groups.send_group, shared.next_seq_and_sockets = counted_send, counted_seq
    data = {"component_id": "c1", "operation": "merge", "data": {"title": "x" * 200}}
    started, cpu = time.perf_counter(), time.process_time()
    try:
        for _ in range(args.pushes):
            while _ - min(received) >= args.in_flight:
                moved.clear()
                await moved.wait()
            await stream.emit(sid, Kind.COMPONENT_UPDATED, data)
        while min(received) < args.pushes:
            moved.clear()
            await asyncio.wait_for(moved.wait(), 15)
    finally:
        groups.send_group, shared.next_seq_and_sockets = send_group, next_seq
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    for watcher in watchers:
        await watcher.close()
    return {"rate": args.pushes / elapsed, "cpu_us": cpu / args.pushes * 1e6,
            "publish": counts["publish"] / args.pushes, "seq": counts["seq"] / args.pushes}


async def main(args):
    import django

    django.setup()
    from a2ui.infra import shared
    from a2ui.sessions import lifecycle as sessions

    if not hasattr(shared.backend(), "execute"):
        raise SystemExit("set REDIS_URL: the published path is Redis pub/sub")

    async def no_detach(session_id):  # the bench's sessions have no database row
        return None

    sessions.adetach_session = no_detach
    results = {True: [], False: []}
    await one_run(argparse.Namespace(**{**vars(args), "pushes": 200}), True)  # warm up
    for rep in range(args.reps):
        for way in ((True, False) if rep % 2 == 0 else (False, True)):
            results[way].append(await one_run(args, way))
    print(f"A push to an MCP-watched session ({args.pushes} pushes, {args.in_flight} in flight,"
          f" {args.reps} reps; median (each rep))")
    print("| way | pushes/s | CPU us/push | PUBLISH/push | sequence round trips/push |")
    print("|---|---:|---:|---:|---:|")
    med = {}
    for way, name in ((True, "direct"), (False, "published (before)")):
        rows = results[way]
        med[way] = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
        reps = " ".join(f"{r['rate']:,.0f}" for r in rows)
        print(f"| {name} | {med[way]['rate']:,.0f} ({reps}) | {med[way]['cpu_us']:,.0f} | "
              f"{med[way]['publish']:.2f} | {med[way]['seq']:.2f} |")
    print(f"direct / published: rate {med[True]['rate'] / med[False]['rate']:.2f}, "
          f"CPU per push (published / direct) {med[False]['cpu_us'] / med[True]['cpu_us']:.2f}")


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pushes", type=int, default=3000)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--in-flight", type=int, default=100)
    asyncio.run(main(p.parse_args()))
