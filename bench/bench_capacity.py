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
    PAD,
    Proc,
    free_port,
    make_fixtures,
    open_many,
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


def cpu_seconds(pid):
    """User + system CPU time of ``pid`` (/proc/PID/stat), in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def redis_counters(url):
    """(commands processed, input bytes, output bytes) of the Redis server."""
    import redis

    client = redis.Redis.from_url(url)
    stats = client.info("stats")
    commands = sum(v["calls"] for v in client.info("commandstats").values())
    client.close()
    return commands, stats["total_net_input_bytes"], stats["total_net_output_bytes"]


class OwnRedis:
    """A redis-server of the bench's own (no persistence): its INFO counts only the bench."""

    def __init__(self):
        import shutil
        import subprocess
        import tempfile

        self.name, self.port = "redis", free_port()
        self.dir = tempfile.mkdtemp(prefix="bench-capacity-redis-")
        self.proc = subprocess.Popen(
            [shutil.which("redis-server") or "redis-server", "--port", str(self.port), "--bind",
             HOST, "--save", "", "--appendonly", "no", "--dir", self.dir],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        Proc.wait_ready(self)

    def stop(self):
        import shutil

        self.proc.terminate()
        self.proc.wait(10)
        shutil.rmtree(self.dir, ignore_errors=True)


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
    await ws.send(json.dumps({"version": "v0.9", "capabilities": {
        "v0.9": {"supportedCatalogIds": [BASIC_CATALOG_ID]}}}))
    reply = json.loads(await asyncio.wait_for(ws.recv(), timeout))
    if "error" in reply:
        raise RuntimeError(f"v0.9 handshake refused: {reply}")
    return ws, None


BASIC_CATALOG_ID = "https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"

PROTOCOLS = {
    "jsonrpc": ("/ws/v4/a2ui", open_session),
    "v09": ("/ws/v09/a2ui", open_v09),
}


#: Sockets opened and closed per protocol before its "before" reading.
WARM = 50


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
    warm, toks = toks[:WARM], toks[WARM:]  # first use (imports, caches) is not per socket
    await asyncio.gather(*(ws.close() for ws in await open_idle(server.port, path, opener,
                                                                 warm)))
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


async def measure_push(server, toks, agent_key, pushes, redis_url, window=20):
    """CPU (server process) and Redis commands/bytes per pushed ``ui.progress`` (~300 bytes)."""
    agent, = await open_many([f"ws://{HOST}:{server.port}/ws/v4/a2ui/agent"],
                             headers={"Authorization": f"Bearer {agent_key}"})
    users = [await open_session(f"ws://{HOST}:{server.port}/ws/v4/a2ui?token={t}") for t in toks]
    got = asyncio.Queue()

    async def read(ws):
        async for raw in ws:
            if json.loads(raw).get("method") == "ui.progress":
                got.put_nowait(None)

    async def drain(ws):
        async for _ in ws:
            pass

    readers = [asyncio.ensure_future(read(ws)) for ws, _ in users]
    readers.append(asyncio.ensure_future(drain(agent)))

    def push(k):
        return agent.send(json.dumps({"jsonrpc": "2.0", "method": "ui.progress", "params": {
            "session_id": users[k % len(users)][1], "task_id": "bench",
            "progress_type": "determinate", "value": k, "total": pushes, "message": PAD}}))

    async def run(n):
        for k in range(min(window, n)):
            await push(k)
        for k in range(window, n + window):
            await asyncio.wait_for(got.get(), 60)
            if k < n:
                await push(k)

    await run(min(500, pushes))  # warm-up
    cpu0, (cmd0, in0, out0) = cpu_seconds(server.proc.pid), redis_counters(redis_url)
    await run(pushes)
    cpu1, (cmd1, in1, out1) = cpu_seconds(server.proc.pid), redis_counters(redis_url)
    for t in readers:
        t.cancel()
    await asyncio.gather(agent.close(), *(ws.close() for ws, _ in users), return_exceptions=True)
    return {"pushes": pushes, "cpu_us": (cpu1 - cpu0) * 1e6 / pushes,
            "redis_cmds": (cmd1 - cmd0 - 2) / pushes,  # the two INFO of the first read
            "redis_in_bytes": (in1 - in0) / pushes, "redis_out_bytes": (out1 - out0) / pushes}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sockets", type=int, default=200)
    parser.add_argument("--protocols", default="jsonrpc,v09",
                        type=lambda s: [p for p in s.split(",") if p])
    parser.add_argument("--settle", type=float, default=3.0, help="seconds before each RSS read")
    parser.add_argument("--pushes", type=int, default=3000,
                        help="pushes for CPU and Redis per push (0: skip)")
    parser.add_argument("--push-sessions", type=int, default=10)
    parser.add_argument("--direct", choices=["on", "off"], default="off",
                        help="direct delivery; off (default): every push goes through Redis")
    parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/a2ui_bench")
    args = parser.parse_args()
    unknown = set(args.protocols) - set(PROTOCOLS)
    if unknown:
        raise SystemExit(f"unknown protocol(s) {sorted(unknown)}; known: {sorted(PROTOCOLS)}")

    limit = raise_nofile(3 * args.sockets + 4096)
    own_redis = OwnRedis()
    redis_url = f"redis://{HOST}:{own_redis.port}/0"
    env = server_env(args.database_url, redis_url, direct=args.direct)
    prepare_database(args.database_url, env)
    n_idle = (args.sockets + WARM) * len(args.protocols)
    agent_key, toks = make_fixtures(n_idle + args.push_sessions)
    def start_server():
        port = free_port()
        server = Proc("a2ui", [sys.executable, "manage.py", "a2ui_serve", "-v", "0", "-b", HOST,
                               "-p", str(port), "a2ui_project.asgi.application"], env, port)
        server.wait_ready()
        print(f"server :{port} pid {server.proc.pid}, RLIMIT_NOFILE {limit}, "
              f"{os.cpu_count()} CPUs", flush=True)
        return server

    # A fresh process per protocol: memory freed by one protocol's closed sessions would be
    # reused by the next and hide its cost.
    rows, push, server = [], None, None
    try:
        per = args.sockets + WARM
        for k, protocol in enumerate(args.protocols):
            server = start_server()
            mine = toks[k * per:(k + 1) * per]
            row = asyncio.run(measure(server, protocol, mine, args.settle))
            rows.append(row)
            print(f"  {protocol}: {row['sockets']} idle sockets opened in "
                  f"{row['open_seconds']:.1f} s; RSS {row['before_kb'] / 1024:.1f} -> "
                  f"{row['at_kb'] / 1024:.1f} -> {row['after_kb'] / 1024:.1f} MB", flush=True)
            server.stop()
            server = None
        if args.pushes:
            server = start_server()
            push = asyncio.run(measure_push(server, toks[n_idle:], agent_key, args.pushes,
                                            redis_url))
    finally:
        if server is not None:
            server.stop()
        own_redis.stop()
    print()
    print("| protocol | idle sockets | KB per idle socket | RSS after close / before |")
    print("|---|---:|---:|---:|")
    for r in rows:
        print(f"| {r['protocol']} | {r['sockets']} | {r['kb_per_socket']:.1f} | "
              f"{r['return_ratio']:.2f} |")
    if args.pushes:
        print()
        print(f"per push (JSON-RPC ui.progress, ~300 B, {args.push_sessions} sessions, direct "
              f"delivery {args.direct}, {push['pushes']} pushes): server CPU "
              f"{push['cpu_us']:.0f} us (noisy on a shared machine); Redis "
              f"{push['redis_cmds']:.2f} commands, {push['redis_in_bytes']:.0f} B in, "
              f"{push['redis_out_bytes']:.0f} B out")


if __name__ == "__main__":
    main()
