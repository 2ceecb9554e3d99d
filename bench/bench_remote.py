"""Remote agents (a2ui.remote): an upstream AG-UI event to the person's socket, against an agent
pushing the same content over the agent socket, in one run; and many remote runs at once.

    python bench/bench_remote.py [--quick] [--events 250] [--gap 0.02] [--reps 3]
                                 [--concurrent 100] [--database-url ...] [--redis-url ...]

One ``manage.py a2ui_serve`` process of this tree (PostgreSQL, Redis) is measured; the upstream
agent (bench/remote_agent_asgi.py) runs under uvicorn in a process of its own, and so does the
load (this script). Each delta carries its send time; a person's JSON-RPC socket reads the chat
message as it is shown and takes, for each delta it newly shows, the time since it was sent.

* ``remote``: a person's ``user.message`` runs the remote agent; its ``events`` deltas, ``gap``
  seconds apart, are shown as the runtime coalesces them (``REMOTE_AGENT_TEXT_FLUSH_MS``), then
  stored at the end.
* ``socket``: an agent on ``/ws/v4/a2ui/agent`` pushes the same deltas, as an agent streams a
  message there today: ``agui.event`` TEXT_MESSAGE with the message so far, one push per delta.

Reported per mode (medians of ``--reps``, the modes interleaved): the delta's latency to the
person (p50, p99), the server's CPU per upstream event (``/proc`` utime + stime of the server
process over the phase), frames the person got; and the ratios remote / socket. Then
``--concurrent`` remote runs at once on the one process (one person socket each). Not a test:
docs/performance.md has the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_gate as gate  # noqa: E402
from gate_servers import Server, flush_redis, free_port, prepare_database  # noqa: E402

HOST = gate.HOST
ROOT = gate.ROOT
STAMP = re.compile(r"\[(\d+\.\d+)\]")
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def fixtures(env, n):
    """Agents and tokens, made with the server's settings: a remote agent (the upstream app) and
    an agent that pushes itself, ``n`` person tokens for each (a user each)."""
    code = f"""
import json, os, sys
sys.path.insert(0, {str(ROOT)!r}); os.chdir({str(ROOT)!r})
import django; django.setup()
from django.contrib.auth import get_user_model
from a2ui import tokens
from a2ui.models import Agent, A2UISessionLog
from a2ui.remote import store
Agent.objects.filter(name__in=["bench-remote", "bench-socket"]).delete()
remote, _ = tokens.create_agent("bench-remote")
own, key = tokens.create_agent("bench-socket")
for a in (remote, own):
    a.max_concurrent_sessions = 1_000_000
    a.save(update_fields=["max_concurrent_sessions"])
store.register(remote, "agui", os.environ["BENCH_AGENT_URL"], {{}}, {{}})
out = {{"key": key, "remote": [], "socket": []}}
User = get_user_model()
for i in range({n}):
    u, _ = User.objects.get_or_create(username=f"bench-remote-{{i}}")
    A2UISessionLog.objects.filter(user=u).delete()
    out["remote"].append(tokens.issue_stream_token(u, remote).token)
    out["socket"].append(tokens.issue_stream_token(u, own).token)
print(json.dumps(out))
"""
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, check=True,
                          capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


async def open_person(port, token):
    from websockets.asyncio.client import connect

    ws = await connect(f"ws://{HOST}:{port}/ws/v4/a2ui?token={token}", max_size=2 ** 24)
    await ws.send(json.dumps({"jsonrpc": "2.0", "id": "init", "method": "a2ui.init", "params": {
        "client_info": {"name": "bench", "version": "1"}, "capabilities": {}}}))
    while True:
        reply = json.loads(await ws.recv())
        if reply.get("id") == "init":
            return ws, reply["result"]["session_id"]


async def read_message(ws, events, latencies, frames, timeout=120):
    """Read the agent's chat message until it holds ``events`` stamps; a latency per stamp."""
    seen = 0
    deadline = time.monotonic() + timeout
    while seen < events and time.monotonic() < deadline:
        raw = await asyncio.wait_for(ws.recv(), deadline - time.monotonic())
        now = time.time()
        msg = json.loads(raw)
        if msg.get("method") != "ui.activity" or msg["params"]["kind"] != "message":
            continue
        data = msg["params"]["data"]
        if data.get("role") != "agent":
            continue
        frames.append(len(raw))
        stamps = STAMP.findall(data["content"])
        for stamp in stamps[seen:]:
            latencies.append(now - float(stamp))
        seen = max(seen, len(stamps))
    return seen


async def remote_run(port, token, events, gap, size, latencies, frames):
    ws, _ = await open_person(port, token)
    try:
        await ws.send(json.dumps({"jsonrpc": "2.0", "id": "m", "method": "user.message",
                                  "params": {"content": f"bench events={events} gap={gap} "
                                                        f"size={size}"}}))
        return await read_message(ws, events, latencies, frames)
    finally:
        await ws.close()


async def socket_run(port, key, token, events, gap, size, latencies, frames):
    from websockets.asyncio.client import connect

    ws, sid = await open_person(port, token)
    agent = await connect(f"ws://{HOST}:{port}/ws/v4/a2ui/agent",
                          additional_headers={"Authorization": f"Bearer {key}"})
    try:
        reader = asyncio.ensure_future(read_message(ws, events, latencies, frames))
        content, message_id = "", uuid.uuid4().hex
        for i in range(events):
            content += f"[{time.time():.6f}]".ljust(size)
            await agent.send(json.dumps({"jsonrpc": "2.0", "id": i, "method": "agui.event",
                                         "params": {"session_id": sid, "event": {
                                             "type": "TEXT_MESSAGE", "message_id": message_id,
                                             "sender": "bench", "content": content}}}))
            await asyncio.sleep(gap)
        return await reader
    finally:
        await agent.close()
        await ws.close()


def quantile(values, q):
    return sorted(values)[min(len(values) - 1, int(q * len(values)))] if values else float("nan")


async def measure(mode, server, fx, args, index, concurrent=1):
    latencies, frames = [], []
    before = cpu_seconds(server.proc.pid)
    start = time.monotonic()
    if mode == "remote":
        jobs = [remote_run(server.port, fx["remote"][index + i], args.events, args.gap,
                           args.size, latencies, frames) for i in range(concurrent)]
    else:
        jobs = [socket_run(server.port, fx["key"], fx["socket"][index + i], args.events,
                           args.gap, args.size, latencies, frames) for i in range(concurrent)]
    seen = await asyncio.gather(*jobs)
    await asyncio.sleep(0.5)  # the run's end (store, audit) belongs to the phase
    cpu = cpu_seconds(server.proc.pid) - before
    n = args.events * concurrent
    return {"mode": mode, "events": n, "shown": sum(seen), "wall": time.monotonic() - start,
            "cpu_per_event_us": cpu / n * 1e6, "p50_ms": quantile(latencies, 0.5) * 1e3,
            "p99_ms": quantile(latencies, 0.99) * 1e3, "frames": len(frames),
            "bytes": sum(frames)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=250)
    parser.add_argument("--gap", type=float, default=0.02)
    parser.add_argument("--size", type=int, default=16)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--concurrent", type=int, default=100)
    parser.add_argument("--quick", action="store_true", help="fewer events and runs")
    parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/"
                                                  "a2ui_bench_remote")
    parser.add_argument("--redis-url", default=gate.DEFAULT_REDIS)
    args = parser.parse_args()
    if args.quick:
        args.events, args.reps, args.concurrent = 100, 1, 20
    agent_port = free_port()
    env = gate.server_env(args.database_url, args.redis_url)
    env.update(A2UI_REMOTE_AGENT_HOSTS=f"{HOST}:{agent_port}", A2UI_REMOTE_AGENT_MAX_RUNS="10000",
               A2UI_REMOTE_AGENT_MAX_RUNS_PER_PERSON="10000", A2UI_RATE_LIMIT_PER_MINUTE="100000",
               BENCH_AGENT_URL=f"http://{HOST}:{agent_port}/")
    prepare_database(ROOT, args.database_url, env)
    flush_redis(args.redis_url)
    upstream = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "remote_agent_asgi:app", "--host", HOST, "--port",
         str(agent_port), "--log-level", "warning"], cwd=ROOT / "bench",
        stdin=subprocess.DEVNULL)
    server = Server("a2ui", ROOT, gate.A2UI_APP, env)
    try:
        server.wait_ready()
        fx = fixtures(env, 2 * args.reps + 2 + args.concurrent)
        results = {"remote": [], "socket": []}
        asyncio.run(measure("remote", server, fx, argparse.Namespace(
            events=10, gap=0.01, size=args.size), 0))  # warm up: imports, connections
        index = 1
        for rep in range(args.reps):
            for mode in (("remote", "socket") if rep % 2 == 0 else ("socket", "remote")):
                results[mode].append(asyncio.run(measure(mode, server, fx, args, index)))
                index += 1
        report(results, args)
        many = asyncio.run(measure("remote", server, fx, args, index, args.concurrent))
        print(f"\n{args.concurrent} remote runs at once on one process ({args.events} events "
              f"each, {args.gap * 1e3:.0f} ms apart): {many['shown']}/{many['events']} events "
              f"shown in {many['wall']:.1f} s; server CPU {many['cpu_per_event_us']:.0f} us "
              f"per event; latency p50 {many['p50_ms']:.0f} ms, p99 {many['p99_ms']:.0f} ms; "
              f"{many['frames']} frames")
    finally:
        server.stop()
        upstream.terminate()
        upstream.wait(10)


def report(results, args):
    print(f"One message of {args.events} deltas ({args.size} characters, {args.gap * 1e3:.0f} "
          f"ms apart), to one person socket; medians of {args.reps}:")
    print(f"{'mode':8} {'CPU/event':>10} {'p50':>8} {'p99':>8} {'frames':>7} {'bytes':>9}")
    med = {}
    for mode, runs in results.items():
        med[mode] = {k: statistics.median(r[k] for r in runs) for k in (
            "cpu_per_event_us", "p50_ms", "p99_ms", "frames", "bytes")}
        m = med[mode]
        print(f"{mode:8} {m['cpu_per_event_us']:8.0f}us {m['p50_ms']:6.1f}ms "
              f"{m['p99_ms']:6.1f}ms {m['frames']:7.0f} {m['bytes']:9.0f}")
    r, s = med["remote"], med["socket"]
    print(f"remote / socket: CPU per event {r['cpu_per_event_us'] / s['cpu_per_event_us']:.2f}, "
          f"latency p50 {r['p50_ms'] / s['p50_ms']:.2f}, bytes to the person "
          f"{r['bytes'] / s['bytes']:.2f}")


if __name__ == "__main__":
    main()
