"""Soak: N people and N agent sockets on one Daphne, R pushes per session per second. Not a test.

    python bench/bench_soak.py [--sessions 300] [--rate 1] [--seconds 180] [--rounds 3]
    python bench/bench_soak.py --quick          # 50 sessions, 20 s, 2 rounds (``make bench``)

One Daphne process serves our app with PostgreSQL (``--database-url``, created and migrated
if absent) and Redis (``--redis-db``, flushed), as in production; this process is the load
client. Each round:

1. reads the Daphne process's RSS (``/proc/<pid>/status``), idle;
2. opens N agent sockets (one bench agent) and N person sockets (``a2ui.init``: N sessions);
3. for ``--seconds``, each agent pushes R messages per second to its session, phases spread
   evenly over the second, in a fixed realistic mix (per 10 pushes: 2 ``ui.render`` of a card
   or a 20-row table, 2 ``ui.update`` of the card, 4 ``ui.progress``, 1 ``ui.notify``, 1
   ``ui.request_input`` that the person answers with ``user.respond``), every push a JSON-RPC
   request so that failures come back as errors; the RSS is sampled every second;
4. measures the latency agent send -> person receive of every push (send time in an extra
   ``bench_t`` param, which the server passes through), counts errors by code and pushes that
   never arrived, and the answers the agents received;
5. closes every socket, waits ``--settle`` seconds with the process idle, reads the RSS again.

A warm-up round (10 sessions, 3 s) runs first so that the baseline RSS includes what any
first connection loads (modules, pools). The report is one row per round and the pass/fail
against the targets: p99 < 50 ms at <= 300 sessions x 1 msg/s (< 100 ms above), no error,
nothing lost, and the RSS after the last round within 10% of the baseline.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import gc
import itertools
import json
import os
import resource
import sys
import time
from pathlib import Path

from websockets.exceptions import ConnectionClosed

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_push import (  # noqa: E402
    CONNECT_CONCURRENCY,
    HOST,
    Profiler,
    daphne,
    make_fixtures,
    open_many,
    pct,
    prepare_database,
    server_env,
)

ROWS = [{"id": i, "item": f"line {i}", "qty": i % 7, "price": f"{i * 1.5:.2f}"} for i in range(20)]
HEADERS = [{"key": "item", "label": "Item"}, {"key": "qty", "label": "Qty"},
           {"key": "price", "label": "Price"}]
PUSHED = {"ui.render", "ui.update", "ui.progress", "ui.notify", "ui.request_input"}


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


_request_ids = itertools.count()


def message(k, sid, now):
    """The k-th push of a session (k = 0, 1, ...): method and params."""
    slot = k % 10
    t = {"session_id": sid, "bench_t": now}
    if slot in (0, 5) or k < 2:
        if slot == 5:
            return "ui.render", {**t, "component_id": "orders", "component_type": "table",
                                 "data": {"headers": HEADERS, "rows": ROWS}}
        return "ui.render", {**t, "component_id": "status", "component_type": "card",
                             "data": {"title": "Order status", "description": f"update {k}",
                                      "sections": [{"label": "Step", "value": k},
                                                   {"label": "State", "value": "running"}]}}
    if slot in (2, 7):
        return "ui.update", {**t, "component_id": "status", "operation": "merge",
                             "data": {"description": f"step {k} of many"}}
    if slot == 4:
        return "ui.notify", {**t, "level": "info", "title": "Heads up",
                             "message": f"message {k}", "duration_ms": 2000}
    if slot == 9:
        # unique across rounds: a round's new tabs take over the last round's sessions
        return "ui.request_input", {**t, "request_id": f"q{k}-{next(_request_ids)}",
                                    "input_type": "text",
                                    "prompt": "Your reference?", "timeout_seconds": 120}
    return "ui.progress", {**t, "task_id": "job", "progress_type": "determinate",
                           "value": k, "total": 1000, "message": "working"}


class Round:
    """One round's sockets and counters."""

    def __init__(self, agents, users, sids):
        self.agents, self.users, self.sids = agents, users, sids
        self.latencies = []
        self.errors = collections.Counter()
        self.sent = self.received = self.answers = 0
        self.tasks = []
        self.next_id = 0
        self.closing = False

    @classmethod
    async def open(cls, port, agent_key, tokens):
        n = len(tokens)
        agents = await open_many([f"ws://{HOST}:{port}/ws/v4/a2ui/agent"] * n,
                                 headers={"Authorization": f"Bearer {agent_key}"})
        # Read the agents' session.opened events at once: a socket that is not read stops
        # answering Daphne's pings and is dropped after ping_timeout.
        rnd = cls(agents, [], [])
        rnd.tasks = [asyncio.ensure_future(rnd._read_agent(ws)) for ws in agents]
        users = await open_many([f"ws://{HOST}:{port}/ws/v4/a2ui?token={t}" for t in tokens])
        sem = asyncio.Semaphore(CONNECT_CONCURRENCY)

        async def init(ws):
            async with sem:
                await ws.send(json.dumps({
                    "jsonrpc": "2.0", "id": 1, "method": "a2ui.init",
                    "params": {"client_info": {"name": "bench-soak", "version": "1"}}}))
                reply = json.loads(await asyncio.wait_for(ws.recv(), 60))
                return reply["result"]["session_id"]

        rnd.users = users
        rnd.sids = await asyncio.gather(*(init(ws) for ws in users))
        rnd.tasks += [asyncio.ensure_future(rnd._read_user(ws)) for ws in users]
        return rnd

    async def _read_user(self, ws):
        try:
            await self._read_user_frames(ws)
        except ConnectionClosed as exc:
            self._closed("person", exc)

    def _closed(self, side, exc):
        if not self.closing:
            self.errors[f"{side} socket closed ({exc.rcvd.code if exc.rcvd else 'no frame'})"] += 1

    async def _read_user_frames(self, ws):
        async for raw in ws:
            now = time.perf_counter()
            msg = json.loads(raw)
            method = msg.get("method")
            if method in PUSHED and "bench_t" in msg.get("params", {}):
                self.received += 1
                self.latencies.append(now - msg["params"]["bench_t"])
                if method == "ui.request_input":
                    self.next_id += 1
                    await ws.send(json.dumps({
                        "jsonrpc": "2.0", "id": self.next_id, "method": "user.respond",
                        "params": {"request_id": msg["params"]["request_id"], "value": "R-1"}}))
            elif "error" in msg:
                self.errors[f"person {msg['error'].get('code')}"] += 1

    async def _read_agent(self, ws):
        try:
            await self._read_agent_frames(ws)
        except ConnectionClosed as exc:
            self._closed("agent", exc)

    async def _read_agent_frames(self, ws):
        async for raw in ws:
            msg = json.loads(raw)
            if "error" in msg:
                self.errors[f"agent {msg['error'].get('code')}"] += 1
            elif isinstance(msg.get("result"), str):  # the person's answer to request_input
                self.answers += 1

    async def push(self, i, k):
        method, params = message(k, self.sids[i], time.perf_counter())
        self.next_id += 1
        try:
            await self.agents[i].send(json.dumps(
                {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}))
        except ConnectionClosed:
            self.errors["not sent: agent socket closed"] += 1
            return
        self.sent += 1

    async def close(self):
        self.closing = True
        await asyncio.gather(*(ws.close() for ws in self.users + self.agents),
                             return_exceptions=True)
        for t in self.tasks:
            t.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)


async def soak_round(port, pid, agent_key, tokens, rate, seconds, settle, drain_timeout):
    rss_before = rss_mb(pid)
    rnd = await Round.open(port, agent_key, tokens)
    n = len(tokens)
    loop = asyncio.get_running_loop()
    peak = [rss_mb(pid)]

    async def sample():
        while True:
            peak.append(rss_mb(pid))
            await asyncio.sleep(1)

    sampler = asyncio.ensure_future(sample())
    start = loop.time() + 0.5
    ticks = int(seconds * rate)
    schedule = sorted((start + (k + i / n) / rate, i, k) for k in range(ticks) for i in range(n))
    gc.collect()
    gc.disable()  # the load client's collector would stall every socket it reads
    for due, i, k in schedule:
        delay = due - loop.time()
        if delay > 0:
            await asyncio.sleep(delay)
        await rnd.push(i, k)
    deadline = loop.time() + drain_timeout
    expected_answers = sum(1 for _, _, k in schedule if k % 10 == 9)
    while (rnd.received + sum(rnd.errors.values()) < rnd.sent
           or rnd.answers + rnd.errors["agent -32004"] < expected_answers) \
            and loop.time() < deadline:
        await asyncio.sleep(0.05)
    gc.enable()
    sampler.cancel()
    rss_during = max(peak)
    await rnd.close()
    await asyncio.sleep(settle)
    return {
        "sessions": n, "sent": rnd.sent, "received": rnd.received,
        "lost": rnd.sent - rnd.received - sum(v for k, v in rnd.errors.items()
                                              if k.startswith("agent -")),
        "answers": f"{rnd.answers}/{expected_answers}", "errors": dict(rnd.errors),
        "p50": pct(rnd.latencies, 50) * 1000, "p90": pct(rnd.latencies, 90) * 1000,
        "p99": pct(rnd.latencies, 99) * 1000,
        "max": max(rnd.latencies) * 1000 if rnd.latencies else float("nan"),
        "rss_before": rss_before, "rss_during": rss_during, "rss_after": rss_mb(pid),
    }


async def run(args, server, agent_key, tokens):
    pid = server.proc.pid
    print("warm-up: 10 sessions for 3 s ...", flush=True)
    await soak_round(server.port, pid, agent_key, tokens[:10], 1, 3, args.settle, 30)
    baseline = rss_mb(pid)
    print(f"baseline RSS {baseline:.1f} MB", flush=True)
    profiler = Profiler(args.py_spy, args.profile_dir, [server])
    rows = []
    for r in range(args.rounds):
        mine = tokens[10 + r * args.sessions:10 + (r + 1) * args.sessions]
        print(f"round {r + 1}: {args.sessions} sessions x {args.rate} msg/s for "
              f"{args.seconds} s ...", flush=True)
        profiler.start(f"soak-{args.sessions}-r{r + 1}")
        row = await soak_round(server.port, pid, agent_key, mine, args.rate, args.seconds,
                               args.settle, args.timeout)
        profiler.stop()
        rows.append(row)
        print(f"  {fmt_row(r + 1, row)}", flush=True)
    return baseline, rows


def fmt_row(r, row):
    return (f"| {r} | {row['sent']} | {row['p50']:.1f} | {row['p90']:.1f} | {row['p99']:.1f} | "
            f"{row['max']:.1f} | {row['lost']} | {row['answers']} | "
            f"{', '.join(f'{k}: {v}' for k, v in sorted(row['errors'].items())) or 0} | "
            f"{row['rss_before']:.1f} | {row['rss_during']:.1f} | {row['rss_after']:.1f} |")


def report(args, baseline, rows):
    target = 50.0 if args.sessions <= 300 else 100.0
    lines = [f"{args.sessions} sessions x {args.rate} msg/s for {args.seconds} s, "
             f"{args.rounds} rounds, settle {args.settle} s; baseline RSS {baseline:.1f} MB",
             "",
             "| round | pushes | p50 ms | p90 ms | p99 ms | max ms | lost | answers | errors | "
             "RSS before MB | RSS peak MB | RSS after close MB |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|"]
    lines += [fmt_row(r + 1, row) for r, row in enumerate(rows)]
    worst = max(row["p99"] for row in rows)
    errors = sum(sum(row["errors"].values()) + row["lost"] for row in rows)
    final = rows[-1]["rss_after"]
    checks = [
        (f"p99 < {target:.0f} ms in every round", worst < target, f"worst {worst:.1f} ms"),
        ("no error, nothing lost", errors == 0, f"{errors}"),
        ("RSS after close within 10% of baseline", final <= baseline * 1.10,
         f"{final:.1f} MB vs {baseline:.1f} MB ({(final / baseline - 1):+.1%})"),
    ]
    lines.append("")
    for name, ok, detail in checks:
        lines.append(f"{'PASS' if ok else 'FAIL'}  {name}: {detail}")
    return "\n".join(lines), all(ok for _, ok, _ in checks)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sessions", type=int, default=300)
    parser.add_argument("--rate", type=float, default=1.0, help="pushes per session per second")
    parser.add_argument("--seconds", type=int, default=180)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--settle", type=float, default=10.0,
                        help="idle seconds after the sockets close before reading the RSS")
    parser.add_argument("--quick", action="store_true",
                        help="50 sessions, 20 s, 2 rounds, settle 5 s (make bench)")
    parser.add_argument("--strict", action="store_true",
                        help="exit with status 1 when a target is missed")
    parser.add_argument("--timeout", type=float, default=60.0,
                        help="seconds to wait for the last pushes and answers of a round")
    parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/a2ui_bench")
    parser.add_argument("--redis-port", type=int, default=6379)
    parser.add_argument("--redis-db", type=int, default=7,
                        help="Redis database for the bench (flushed); 8-15 are the tests'")
    parser.add_argument("--py-spy", help="path of py-spy: profile the Daphne process per round")
    parser.add_argument("--profile-dir", default="bench/profiles")
    args = parser.parse_args()
    if args.quick:
        args.sessions, args.seconds, args.rounds, args.settle = 50, 20, 2, 5.0

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE,
                       (min(hard, max(soft, 4 * args.sessions + 1024)), hard))
    env = server_env(args.database_url, f"redis://{HOST}:{args.redis_port}/{args.redis_db}")
    prepare_database(args.database_url, env)
    agent_key, tokens = make_fixtures(10 + args.sessions * args.rounds)
    server = daphne("a2ui", "a2ui_project.asgi:application", env)
    try:
        server.wait_ready()
        print(f"a2ui on Daphne :{server.port} (pid {server.proc.pid}), {os.cpu_count()} CPUs",
              flush=True)
        baseline, rows = asyncio.run(run(args, server, agent_key, tokens))
    finally:
        server.stop()
    text, ok = report(args, baseline, rows)
    print()
    print(text)
    return 0 if ok or not args.strict else 1


if __name__ == "__main__":
    sys.exit(main())
