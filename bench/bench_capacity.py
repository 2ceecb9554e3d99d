"""Memory per idle session, per protocol, on one Daphne process. Not a test.

    python bench/bench_capacity.py [--sockets 200] [--protocols jsonrpc,v09]
    python bench/bench_capacity.py --sockets 10000          # the published figure

One ``manage.py a2ui_serve`` process (as bench/gate_servers.py starts it) on PostgreSQL
(``--database-url``, created and migrated if absent) and Redis database ``--redis-db`` (flushed),
the caps lifted for the bench's one account and address (bench/bench_push.py ``NO_CAPS``;
127.0.0.1 is a trusted proxy, outside the per-address edge cap). For each protocol it reads
the server's resident set (``/proc/PID/status`` VmRSS) before, with ``--sockets`` idle
initialized sessions open, and after they are closed, and prints KB per idle socket and the
RSS return ratio (after / before; target <= 1.10). Memory figures are steady on a shared
machine; the time to open the sockets is not.

The descriptor limits (RLIMIT_NOFILE, soft and, as root, hard) are raised for this process and
the server, which inherits them: the server's connection budget is
``a2ui.edge.connection_budget`` of its limit.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_push import (  # noqa: E402
    HOST,
    Proc,
    free_port,
    make_fixtures,
    open_session,
    prepare_database,
    server_env,
)


def rss_kb(pid):
    """Resident set of ``pid`` in KB (VmRSS of /proc/PID/status)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for {pid}")


def per_socket(before_kb, at_kb, n):
    """KB per socket from RSS before and with ``n`` sockets open."""
    return (at_kb - before_kb) / n if n else float("nan")


def raise_nofile(want):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if want > hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, want))
            return want
        except (ValueError, OSError):
            want = hard
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, want), hard))
    return max(soft, want)


async def open_v09(url, timeout=60):
    from websockets.asyncio.client import connect

    ws = await connect(url, max_size=2**21, compression=None, open_timeout=timeout,
                       ping_interval=None)
    await ws.send(json.dumps({"clientCapabilities": {}}))
    await asyncio.wait_for(ws.recv(), timeout)
    return ws, None


PROTOCOLS = {
    "jsonrpc": ("/ws/v4/a2ui", open_session),
    "v09": ("/ws/v09/a2ui", open_v09),
}


async def open_idle(port, path, opener, toks, concurrency=50, batch=200):
    sem = asyncio.Semaphore(concurrency)

    async def one(tok):
        async with sem:
            ws, _ = await opener(f"ws://{HOST}:{port}{path}?token={tok}")
            return ws

    conns = []
    for start in range(0, len(toks), batch):
        conns += await asyncio.gather(*(one(t) for t in toks[start:start + batch]))
    return conns


async def settle(pid, seconds):
    await asyncio.sleep(seconds)
    return rss_kb(pid)


async def measure(server, protocol, toks, settle_seconds):
    path, opener = PROTOCOLS[protocol]
    pid = server.proc.pid
    before = await settle(pid, settle_seconds)
    t0 = time.monotonic()
    conns = await open_idle(server.port, path, opener, toks)
    opened = time.monotonic() - t0
    at = await settle(pid, settle_seconds)
    await asyncio.gather(*(ws.close() for ws in conns), return_exceptions=True)
    after = await settle(pid, settle_seconds * 3)
    return {"protocol": protocol, "sockets": len(conns), "before_kb": before, "at_kb": at,
            "after_kb": after, "kb_per_socket": per_socket(before, at, len(conns)),
            "return_ratio": after / before, "open_seconds": opened}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sockets", type=int, default=200)
    parser.add_argument("--protocols", default="jsonrpc,v09",
                        type=lambda s: [p for p in s.split(",") if p])
    parser.add_argument("--settle", type=float, default=3.0, help="seconds before each RSS read")
    parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/a2ui_bench")
    parser.add_argument("--redis-port", type=int, default=6379)
    parser.add_argument("--redis-db", type=int, default=7,
                        help="Redis database for the bench (flushed); 8-15 are the tests'")
    args = parser.parse_args()
    unknown = set(args.protocols) - set(PROTOCOLS)
    if unknown:
        raise SystemExit(f"unknown protocol(s) {sorted(unknown)}; known: {sorted(PROTOCOLS)}")

    limit = raise_nofile(3 * args.sockets + 4096)
    redis_url = f"redis://{HOST}:{args.redis_port}/{args.redis_db}"
    env = server_env(args.database_url, redis_url)
    prepare_database(args.database_url, env)
    agent_key, toks = make_fixtures(args.sockets * len(args.protocols))
    port = free_port()
    server = Proc("a2ui", [sys.executable, "manage.py", "a2ui_serve", "-v", "0", "-b", HOST,
                           "-p", str(port), "a2ui_project.asgi.application"], env, port)
    rows = []
    try:
        server.wait_ready()
        print(f"server :{port} pid {server.proc.pid}, RLIMIT_NOFILE {limit}, "
              f"{os.cpu_count()} CPUs", flush=True)
        for k, protocol in enumerate(args.protocols):
            mine = toks[k * args.sockets:(k + 1) * args.sockets]
            row = asyncio.run(measure(server, protocol, mine, args.settle))
            rows.append(row)
            print(f"  {protocol}: {row['sockets']} idle sockets opened in "
                  f"{row['open_seconds']:.1f} s; RSS {row['before_kb'] / 1024:.1f} -> "
                  f"{row['at_kb'] / 1024:.1f} -> {row['after_kb'] / 1024:.1f} MB", flush=True)
    finally:
        server.stop()
    print()
    print("| protocol | idle sockets | KB per idle socket | RSS after close / before |")
    print("|---|---:|---:|---:|")
    for r in rows:
        print(f"| {r['protocol']} | {r['sockets']} | {r['kb_per_socket']:.1f} | "
              f"{r['return_ratio']:.2f} |")


if __name__ == "__main__":
    main()
