"""Where an idle client's memory goes: tracemalloc and object counts in a server of
bench/bench_capacity.py. Not a test, not a figure (tracing costs memory of its own).

    python bench/probe_memory.py [--protocol mcp] [--sockets 1000] [--frames 12] [--after 20]

One ``a2ui_serve`` process as bench_capacity.py starts it, with ``PYTHONTRACEMALLOC`` and
the settings bench/probe_settings.py (SIGUSR1: a snapshot). Snapshots: after the warm-up (50
clients opened and closed), with ``--sockets`` idle clients, and ``--after`` seconds after
they closed. Printed: the RSS at each, the top allocation sites (by traceback, innermost
frames first) of with - before and of after - before, per client, and the live objects per
type (gc-tracked) of both differences.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from bench_capacity import (  # noqa: E402
    PROTOCOLS,
    WARM,
    OwnRedis,
    open_idle,
    raise_nofile,
    rss_kb,
)
from bench_push import HOST, Proc, free_port, make_fixtures, prepare_database, server_env  # noqa: E402


async def snapshot(pid, out, n):
    os.kill(pid, signal.SIGUSR1)
    done = Path(out) / f"done-{n}"
    while not done.exists():
        await asyncio.sleep(0.2)
    return rss_kb(pid)


def top(a, b, per, limit, frames):
    stats = b.compare_to(a, "traceback")
    stats.sort(key=lambda s: s.size_diff, reverse=True)
    total = sum(s.size_diff for s in stats)
    print(f"  traced: {total / 1024 / per:+.1f} KB per client ({total / 1048576:+.1f} MB)")
    for s in stats[:limit]:
        if s.size_diff <= 0:
            break
        where = " <- ".join(f"{Path(f.filename).parent.name}/{Path(f.filename).name}:{f.lineno}"
                            for f in list(reversed(s.traceback))[:frames])
        print(f"  {s.size_diff / per:8.0f} B {s.count_diff / per:6.1f} blocks  {where}")


def types(a, b, per, limit):
    diff = sorted(((b.get(k, 0) - a.get(k, 0), k) for k in set(a) | set(b)), reverse=True)
    for d, k in diff[:limit]:
        if d <= 0:
            break
        print(f"  {d / per:7.2f} per client  {k}")


async def run(args, server, toks, out):
    pid = server.proc.pid
    warm, toks = toks[:WARM], toks[WARM:]
    await asyncio.gather(*(c.close() for c in await open_idle(server.port, args.protocol, warm)))
    await asyncio.sleep(8)
    rss = [await snapshot(pid, out, 0)]
    conns = await open_idle(server.port, args.protocol, toks)
    await asyncio.sleep(3)
    rss.append(await snapshot(pid, out, 1))
    await asyncio.gather(*(c.close() for c in conns), return_exceptions=True)
    await asyncio.sleep(args.after)
    rss.append(await snapshot(pid, out, 2))
    return rss


def main():
    import logging

    logging.getLogger("httpx").setLevel(logging.WARNING)
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--protocol", default="mcp", choices=sorted(PROTOCOLS))
    parser.add_argument("--sockets", type=int, default=1000)
    parser.add_argument("--frames", type=int, default=12, help="frames traced per allocation")
    parser.add_argument("--after", type=float, default=20.0)
    parser.add_argument("--limit", type=int, default=40, help="rows printed per table")
    parser.add_argument("--show-frames", type=int, default=4)
    parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/a2ui_bench")
    args = parser.parse_args()

    from bench_capacity import issue_tokens

    raise_nofile(3 * args.sockets + 4096)
    own_redis = OwnRedis()
    env = server_env(args.database_url, f"redis://{HOST}:{own_redis.port}/0")
    out = tempfile.mkdtemp(prefix="probe-memory-")
    env.update(DJANGO_SETTINGS_MODULE="probe_settings", A2UI_PROBE_DIR=out,
               PYTHONTRACEMALLOC=str(args.frames),
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT / "bench"),
                                                        env.get("PYTHONPATH")])))
    prepare_database(args.database_url, env)
    make_fixtures(1)
    toks = issue_tokens(PROTOCOLS[args.protocol][0], args.sockets + WARM)
    port = free_port()
    server = Proc("a2ui", [sys.executable, "manage.py", "a2ui_serve", "-v", "0", "-b", HOST, "-p",
                           str(port), "a2ui_project.asgi.application"], env, port)
    try:
        server.wait_ready(timeout=300)  # tracing every allocation: a slow start
        t0 = time.monotonic()
        rss = asyncio.run(run(args, server, toks, out))
        print(f"{args.protocol}: {args.sockets} clients, {time.monotonic() - t0:.0f} s; RSS "
              f"{rss[0] / 1024:.1f} -> {rss[1] / 1024:.1f} -> {rss[2] / 1024:.1f} MB "
              f"({(rss[1] - rss[0]) / args.sockets:.1f} KB per client with tracing; snapshots "
              f"in {out})")
    finally:
        server.stop()
        own_redis.stop()
    snaps = [tracemalloc.Snapshot.load(f"{out}/snap-{n}.pickle") for n in range(3)]
    counts = [json.loads(Path(f"{out}/types-{n}.json").read_text()) for n in range(3)]
    per = args.sockets
    print("\nwith clients - before:")
    top(snaps[0], snaps[1], per, args.limit, args.show_frames)
    types(counts[0], counts[1], per, args.limit)
    print(f"\n{args.after:.0f} s after close - before:")
    top(snaps[0], snaps[2], per, args.limit, args.show_frames)
    types(counts[0], counts[2], per, args.limit)


if __name__ == "__main__":
    main()
