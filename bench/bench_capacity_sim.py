"""The capacity model (bench/capacity_model.py) checked by a simulation with several processes.
Not a test.

    python bench/bench_capacity_sim.py [--procs 2] [--rate 1] [--cpu-share 0.25]
                                       [--loads 0.5,1,1.5] [--seconds 15] [--shards 1]

``--procs`` ``manage.py a2ui_serve`` processes share PostgreSQL and a ``redis-server`` of the
bench's own, as production's Daphne processes do; people's JSON-RPC sockets are spread over
every process and so are the agent's sockets (a push reaches a person on another process
through Redis). ``--shards N`` (N > 1) gives them N Redis servers of the bench's own, the first
also ``REDIS_URL`` (``A2UI['REDIS_SHARDS']``): the calibration measures each server's part of
the commands, the model takes the busiest one's, and each server's commands per second are
checked against the model like their sum. Three steps:

1. **Calibrate** on ``--calibrate-sessions`` sessions: RSS per session; CPU and Redis commands
   per open session per second with no push (timers, sequence watches); then, pushing, the
   servers' CPU per push (all processes' CPU time, less the idle cost, / pushes) and Redis
   commands, bytes and CPU per push. Twice: at ``--calibrate-rate`` pushes/s, then at the rate
   that predicts (CPU per push falls as the rate rises: measure where you will run).
2. **Predict** with ``capacity_model.capacity`` and those figures: the sessions one process
   holds at ``--rate`` pushes per session per second within ``--cpu-share`` of a core, and the
   Redis traffic they make. ``--cpu-share`` is the budget of this machine (its cores are shared
   with the load generator, Redis and PostgreSQL), not production's 0.7.
3. **Simulate**: that many sessions per process are opened, then pushed at ``--rate`` x each of
   ``--loads`` (1 = the model's capacity), open-loop on a fixed schedule, ``--seconds`` each.
   Printed per load: the CPU share each process used against the model's, Redis commands/s
   against the model's, latency (p50/p99) and lost pushes; and each process's RSS against
   the model's memory. The model holds when, up to load 1, no process uses more CPU than
   predicted + ``--tolerance`` (less is the safe side: the model is calibrated at a lower rate
   than load 1's and CPU per push falls as the rate rises), Redis commands and memory are
   within ``--tolerance`` of the prediction, p99 stays under ``--p99-ms`` and nothing is lost.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_capacity import OwnRedis, cpu_seconds, raise_nofile, rss_kb  # noqa: E402
from bench_push import (  # noqa: E402
    HOST,
    PAD,
    Proc,
    free_port,
    make_fixtures,
    open_many,
    open_sessions,
    pct,
    prepare_database,
    server_env,
)
from capacity_model import capacity, compare  # noqa: E402


def redis_usage(urls):
    """(commands processed, input bytes, Redis CPU seconds, [commands per server]) of the
    bench's Redis servers (``--shards``), each reading's 2 INFO commands left out."""
    import redis

    total, per_server = [0, 0, 0.0], []
    for url in urls:
        client = redis.Redis.from_url(url)
        stats, cpu = client.info("stats"), client.info("cpu")
        commands = sum(v["calls"] for v in client.info("commandstats").values())
        client.close()
        per_server.append(commands)
        total[0] += commands
        total[1] += stats["total_net_input_bytes"]
        total[2] += cpu["used_cpu_sys"] + cpu["used_cpu_user"]
    return (*total, per_server)


class Rig:
    """People's sockets spread over the servers, the agent's sockets likewise; latency of each
    ``ui.progress`` from its send to its arrival."""

    def __init__(self, users, sids, agents):
        self.users, self.sids, self.agents = users, sids, agents
        self.latencies = []
        self.readers = [asyncio.ensure_future(self._read(ws)) for ws in users]
        self.readers += [asyncio.ensure_future(self._drain(ws)) for ws in agents]

    @classmethod
    async def open(cls, servers, toks, agent_key, agents_per_server=2):
        agents = await open_many(
            [f"ws://{HOST}:{s.port}/ws/v4/a2ui/agent" for s in servers] * agents_per_server,
            headers={"Authorization": f"Bearer {agent_key}"})
        rig = cls([], [], agents)
        await rig.extend(servers, toks)
        return rig

    async def extend(self, servers, toks):
        """More people's sessions, spread over the servers in turn."""
        urls = [f"ws://{HOST}:{servers[(len(self.users) + i) % len(servers)].port}/ws/v4/a2ui"
                f"?token={t}" for i, t in enumerate(toks)]
        users, sids = await open_sessions(urls)
        self.users += users
        self.sids += sids
        self.readers += [asyncio.ensure_future(self._read(ws)) for ws in users]

    async def _drain(self, ws):
        async for _ in ws:
            pass

    async def _read(self, ws):
        async for raw in ws:
            msg = json.loads(raw)
            if msg.get("method") == "ui.progress":
                self.latencies.append(time.perf_counter() - msg["params"]["value"])

    def push(self, k):
        # the agent socket and the session both rotate: half the pushes (2 processes) cross
        return self.agents[k % len(self.agents)].send(json.dumps({
            "jsonrpc": "2.0", "method": "ui.progress", "params": {
                "session_id": self.sids[(k * 7919) % len(self.sids)], "task_id": "sim",
                "progress_type": "determinate", "value": time.perf_counter(), "total": 1,
                "message": PAD}}))

    async def steady(self, rate, seconds, tick=0.01):
        """``rate`` pushes/s for ``seconds`` on a fixed schedule (sent late, never skipped);
        returns (pushes sent, seconds the sending took, latencies, lost)."""
        loop = asyncio.get_running_loop()
        self.latencies = []
        total = int(rate * seconds)
        gc.collect()
        gc.disable()  # the load generator's own collector would stall every socket it reads
        start = loop.time()
        sent = 0
        try:
            while sent < total:
                due = min(total, int((loop.time() - start) * rate) + 1)
                while sent < due:
                    await self.push(sent)
                    sent += 1
                await asyncio.sleep(tick)
            took = loop.time() - start
            deadline = loop.time() + 10
            while len(self.latencies) < total and loop.time() < deadline:
                await asyncio.sleep(0.05)
        finally:
            gc.enable()
        return total, took, list(self.latencies), total - len(self.latencies)

    async def close(self):
        for t in self.readers:
            t.cancel()
        await asyncio.gather(*(ws.close() for ws in self.users + self.agents),
                             return_exceptions=True)


async def measured_run(rig, servers, redis_urls, rate, seconds):
    """Push at ``rate`` (0: none) for ``seconds``; what the servers and Redis spent meanwhile."""
    pids = [s.proc.pid for s in servers]
    cpu0, redis0, t0 = [cpu_seconds(p) for p in pids], redis_usage(redis_urls), time.monotonic()
    if rate:
        sent, took, latencies, lost = await rig.steady(rate, seconds)
    else:
        await asyncio.sleep(seconds)
        sent, took, latencies, lost = 0, seconds, [], 0
    cpu1, redis1, t1 = [cpu_seconds(p) for p in pids], redis_usage(redis_urls), time.monotonic()
    wall = t1 - t0
    infos = 4 * len(redis_urls)  # the INFO commands of the two readings, per server
    per_server = [(b - a - 4) / wall for a, b in zip(redis0[3], redis1[3], strict=True)]
    return {
        "wall": wall, "pushes": sent, "offered_rate": rate, "sent_rate": sent / took,
        "cpu_share": [(b - a) / wall for a, b in zip(cpu0, cpu1, strict=True)],
        "cpu_s": sum(b - a for a, b in zip(cpu0, cpu1, strict=True)),
        "redis_cmds": redis1[0] - redis0[0] - infos,
        "redis_bytes": redis1[1] - redis0[1], "redis_cpu_s": redis1[2] - redis0[2],
        "redis_cmds_per_s": (redis1[0] - redis0[0] - infos) / wall,
        "redis_cmds_per_server_s": per_server,
        "p50_ms": pct(latencies, 50) * 1000, "p99_ms": pct(latencies, 99) * 1000,
        "lost": lost, "rss_kb": [rss_kb(p) for p in pids],
    }


def calibrated(idle, busy, sessions):
    """Per session-second (no push) and per push costs from an idle and a pushing run over the
    same ``sessions``: the pushing run's cost less the idle cost of its duration."""
    per_session_s = {k: idle[k] / idle["wall"] / sessions
                     for k in ("cpu_s", "redis_cmds", "redis_bytes", "redis_cpu_s")}
    per_push = {k: max(0.0, busy[k] - per_session_s[k] * sessions * busy["wall"]) / busy["pushes"]
                for k in per_session_s}
    return {"cpu_us_per_session_s": per_session_s["cpu_s"] * 1e6,
            "redis_cmds_per_session_s": per_session_s["redis_cmds"],
            "redis_cpu_us_per_session_s": per_session_s["redis_cpu_s"] * 1e6,
            "cpu_us_per_push": per_push["cpu_s"] * 1e6,
            "redis_cmds_per_push": per_push["redis_cmds"],
            "redis_bytes_per_push": per_push["redis_bytes"],
            "redis_cpu_us_per_push": per_push["redis_cpu_s"] * 1e6,
            # each server's part of the commands (the main one's: its sessions and the rest)
            "server_shares": [c / (sum(busy["redis_cmds_per_server_s"]) or 1)
                              for c in busy["redis_cmds_per_server_s"]],
            "p99_ms": busy["p99_ms"]}


async def simulate(args, servers, redis_urls, agent_key, toks):
    procs = len(servers)
    # 1. calibrate: first use (imports, caches, pools) off the figures, then the memory of
    # --calibrate-sessions sessions, their cost idle, and their cost pushed
    warm = await Rig.open(servers, toks[:20], agent_key)
    await warm.steady(100, 2)
    await warm.close()
    toks = toks[20:]
    await asyncio.sleep(1)
    r0 = [rss_kb(s.proc.pid) for s in servers]
    n_cal = args.calibrate_sessions
    rig = await Rig.open(servers, toks[:n_cal], agent_key)
    await asyncio.sleep(1)
    r1 = [rss_kb(s.proc.pid) for s in servers]
    kb_per_session = sum(b - a for a, b in zip(r0, r1, strict=True)) / n_cal
    idle = await measured_run(rig, servers, redis_urls, 0, args.seconds)
    # CPU per push falls as the rate rises (the event loop batches its reads and writes): the
    # first pass at --calibrate-rate predicts a rate, the second measures at that rate.
    rate = args.calibrate_rate
    for calibration in (1, 2):
        busy = await measured_run(rig, servers, redis_urls, rate, args.seconds)
        cal = calibrated(idle, busy, n_cal)
        cal["kb_per_session"] = kb_per_session
        print(f"calibration {calibration} ({n_cal} sessions on {procs} processes): an open "
              f"session {cal['cpu_us_per_session_s']:.0f} us CPU and "
              f"{cal['redis_cmds_per_session_s']:.2f} Redis commands per second; a push "
              f"({rate:,.0f}/s) {cal['cpu_us_per_push']:.0f} us server CPU (all processes), "
              f"{cal['redis_cmds_per_push']:.2f} Redis commands, "
              f"{cal['redis_bytes_per_push']:.0f} B in, {cal['redis_cpu_us_per_push']:.0f} us "
              f"Redis CPU; {kb_per_session:.0f} KB per session"
              + (f"; commands per server {' '.join(f'{x:.0%}' for x in cal['server_shares'])}"
                 if len(redis_urls) > 1 else ""), flush=True)
        model = capacity(kb_per_session=kb_per_session, base_mb=sum(r0) / procs / 1024,
                         memory_mb=args.memory_mb, cpu_us_per_push=cal["cpu_us_per_push"],
                         pushes_per_session_s=args.rate, cpu_share=args.cpu_share,
                         redis_cmds_per_push=cal["redis_cmds_per_push"],
                         redis_bytes_per_push=cal["redis_bytes_per_push"],
                         cpu_us_per_session_s=cal["cpu_us_per_session_s"],
                         redis_cmds_per_session_s=cal["redis_cmds_per_session_s"],
                         busiest_share=max(cal["server_shares"]))
        per_process = min(model.sessions_per_process, args.max_sessions // procs)
        rate = per_process * procs * args.rate

    # 2. the prediction
    if per_process < model.sessions_per_process:
        print(f"(--max-sessions: {per_process} sessions per process instead of the model's "
              f"{model.sessions_per_process})")
    print(f"model: {model.sessions_per_process} sessions per process at {args.rate} pushes/s "
          f"each within {args.cpu_share} of a core ({model.limited_by}-bound; by memory "
          f"{model.sessions_by_memory} in {args.memory_mb:.0f} MB); simulating {per_process} "
          f"per process x {procs}", flush=True)

    # 3. simulate: the calibration's sessions and more, up to per_process on each process
    n = per_process * procs
    await rig.extend(servers, toks[n_cal:n])
    await asyncio.sleep(2)
    rows = []
    try:
        for load in args.loads:
            rate = n * args.rate * load
            run = await measured_run(rig, servers, redis_urls, rate, args.seconds)
            want = {
                "cpu_share": per_process * (cal["cpu_us_per_session_s"]
                                            + args.rate * load * cal["cpu_us_per_push"]) / 1e6,
                "redis_cmds_per_s": n * (cal["redis_cmds_per_session_s"]
                                         + args.rate * load * cal["redis_cmds_per_push"]),
                "base_kb": sum(r0) / procs,
                "rss_kb": sum(r0) / procs + per_process * kb_per_session}
            if len(redis_urls) > 1:
                want["redis_cmds_per_server_s"] = [share * want["redis_cmds_per_s"]
                                                   for share in cal["server_shares"]]
            rows.append((load, rate, want, run, compare(want, run, args.tolerance)))
            print(f"  load {load}: {rate:,.0f} pushes/s offered, {run['sent_rate']:,.0f} sent; "
                  f"CPU {' '.join(f'{c:.2f}' for c in run['cpu_share'])} of a core (model "
                  f"{want['cpu_share']:.2f}); Redis {run['redis_cmds_per_s']:,.0f} cmd/s (model "
                  f"{want['redis_cmds_per_s']:,.0f}"
                  + (f"; per server {' '.join(f'{x:,.0f}' for x in run['redis_cmds_per_server_s'])}"
                     f", model {' '.join(f'{x:,.0f}' for x in want['redis_cmds_per_server_s'])}"
                     if len(redis_urls) > 1 else "")
                  + f"); p50 {run['p50_ms']:.1f} ms, p99 "
                  f"{run['p99_ms']:.1f} ms; lost {run['lost']}", flush=True)
    finally:
        await rig.close()
    return cal, model, per_process, rows


def report(args, procs, cal, model, per_process, rows):
    print(f"\n{procs} processes x {per_process} sessions, {args.rate} pushes per session per "
          f"second at load 1; calibrated: {cal['cpu_us_per_push']:.0f} us CPU and "
          f"{cal['redis_cmds_per_push']:.2f} Redis commands per push, "
          f"{cal['cpu_us_per_session_s']:.0f} us CPU and {cal['redis_cmds_per_session_s']:.2f} "
          f"commands per open session per second, {cal['kb_per_session']:.0f} KB per session; "
          f"tolerance {args.tolerance:.0%}")
    print("| load | pushes/s | CPU per process, model | measured | Redis cmd/s, model | "
          "measured | RSS per process, model | measured | p50 / p99 ms | lost | holds |")
    print("|---:|---:|---:|---|---:|---:|---:|---|---|---:|---|")
    ok = True
    for load, rate, want, run, verdict in rows:
        holds = verdict and run["p99_ms"] <= args.p99_ms and not run["lost"]
        if load <= 1:
            ok = ok and holds
        print(f"| {load} | {rate:,.0f} | {want['cpu_share']:.2f} | "
              f"{' '.join(f'{c:.2f}' for c in run['cpu_share'])} | "
              f"{want['redis_cmds_per_s']:,.0f} | {run['redis_cmds_per_s']:,.0f} | "
              f"{want['rss_kb'] / 1024:.0f} MB | "
              f"{' '.join(f'{k / 1024:.0f}' for k in run['rss_kb'])} MB | "
              f"{run['p50_ms']:.1f} / {run['p99_ms']:.1f} | {run['lost']} | "
              f"{'yes' if holds else 'no'} |")
    print(f"\nmodel {'HOLDS' if ok else 'DOES NOT HOLD'} up to load 1 (CPU at most "
          f"{args.tolerance:.0%} above the model, Redis and memory within {args.tolerance:.0%}, "
          f"p99 <= {args.p99_ms} ms, nothing lost); Redis CPU "
          f"{cal['redis_cpu_us_per_push']:.0f} us per push: one Redis core serves "
          f"{1e6 / max(cal['redis_cpu_us_per_push'], 1):,.0f} pushes/s; an open session "
          f"{cal['redis_cpu_us_per_session_s']:.1f} us Redis CPU per second (its leases' "
          f"refresh, the sequence watch)")
    return ok


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--procs", type=int, default=2)
    p.add_argument("--shards", type=int, default=1,
                   help="Redis servers of the bench's own; more than 1: A2UI['REDIS_SHARDS']")
    p.add_argument("--rate", type=float, default=1.0, help="pushes per session per second")
    p.add_argument("--cpu-share", type=float, default=0.25,
                   help="the part of a core each server process may spend on pushes")
    p.add_argument("--memory-mb", type=float, default=1024)
    p.add_argument("--loads", default="0.5,1,1.5",
                   type=lambda s: [float(x) for x in s.split(",") if x])
    p.add_argument("--seconds", type=float, default=15.0)
    p.add_argument("--calibrate-sessions", type=int, default=200)
    p.add_argument("--calibrate-rate", type=float, default=150.0)
    p.add_argument("--max-sessions", type=int, default=4000)
    p.add_argument("--tolerance", type=float, default=0.25)
    p.add_argument("--p99-ms", type=float, default=100.0)
    p.add_argument("--database-url",
                   default="postgres://postgres@127.0.0.1:5432/a2ui_bench_sim")
    args = p.parse_args()

    limit = raise_nofile(3 * args.max_sessions + 4096)
    own_redis = [OwnRedis() for _ in range(args.shards)]
    redis_urls = [f"redis://{HOST}:{server.port}/0" for server in own_redis]
    env = server_env(args.database_url, redis_urls[0])
    if args.shards > 1:
        env["A2UI_REDIS_SHARDS"] = " ".join(redis_urls)
    prepare_database(args.database_url, env)
    agent_key, toks = make_fixtures(20 + max(args.calibrate_sessions, args.max_sessions))
    servers = []
    try:
        for i in range(args.procs):
            port = free_port()
            servers.append(Proc(f"a2ui-{i}", [
                sys.executable, "manage.py", "a2ui_serve", "-v", "0", "-b", HOST, "-p",
                str(port), "a2ui_project.asgi.application"], env, port))
        for s in servers:
            s.wait_ready()
        print(f"{args.procs} servers (pids {' '.join(str(s.proc.pid) for s in servers)}), "
              f"{args.shards} Redis server(s) of its own, RLIMIT_NOFILE {limit}, {os.cpu_count()} CPUs, load average "
              f"{os.getloadavg()[0]:.1f}", flush=True)
        cal, model, per_process, rows = asyncio.run(
            simulate(args, servers, redis_urls, agent_key, toks))
    finally:
        for s in servers:
            s.stop()
        for server in own_redis:
            server.stop()
    ok = report(args, args.procs, cal, model, per_process, rows)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
