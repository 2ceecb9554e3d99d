"""The app under Daphne, Uvicorn and Granian side by side: push rate, CPU and memory per socket.

    python bench/bench_servers.py [--reps 3] [--sessions 1,100,1000] [--idle 2000]
        [--servers daphne,uvicorn,uvicorn-uvloop,granian] [--allocator malloc] [--pin]

``a2ui_project.asgi.application`` served by each server of ``--servers`` (:data:`SERVERS`), all
at once against one PostgreSQL database and one Redis database (flushed), with the fixtures of
bench/gate_fixtures.py (one bench agent, stream tokens shared by the servers). Each server is
first checked with the app: an agent socket ``/ws/v4/a2ui/agent`` and a person socket
``/ws/v4/a2ui`` (``a2ui.init``) handshake and a ``ui.progress`` push arrives; a server that
fails is reported and left out. Then one load generator (bench/gate_load.py, a process of its
own) measures them in turn, as bench/bench_gate.py does: agent pushes received by person
sockets at each session count, ``--reps`` times, the order reversed every other time, msg/s and
the server's CPU time per message (the server process and its children: Granian's worker).

With ``--idle N``, then each server alone in a fresh process (bench/bench_capacity.py's way): 50
sockets opened and closed, RSS (``VmRSS`` of the process and its children), N idle initialized
JSON-RPC sockets opened, RSS again: KB per idle socket.

The report gives the medians, each server's ratio to Daphne (msg/s; CPU: Daphne's / the
server's) and whether a server is >= 1.3 times Daphne's rate at every session count (the rule
of docs/performance.md, "The server stack"). Every server runs with the same allocator
(``--allocator``: ``PYTHONMALLOC``, as ``a2ui_serve`` sets it) and, where the server has the
option, Daphne's transport limits (WebSocket messages up to twice ``MAX_PAYLOAD_SIZE``, a
request head within 10 s) and no access log.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_gate import (  # noqa: E402
    A2UI_APP,
    DEFAULT_DB,
    DEFAULT_REDIS,
    med,
    run_load,
    server_env,
    spread,
)
from gate_servers import (  # noqa: E402
    HOST,
    Server,
    flush_redis,
    free_port,
    pin_plan,
    pinned,
    prepare_database,
)

ROOT = Path(__file__).resolve().parents[1]
APP = A2UI_APP.replace(".application", ":application")
CAP = str(2 * 1024 * 1024)  # a2ui.serving.websocket_hard_cap() of the default payload limit
PY = sys.executable
#: ``daphne-uvloop``: a2ui_serve with uvloop's event loop under Twisted's asyncio reactor (the
#: policy set before daphne.server makes its loop): how much of a difference is the loop's.
ON_UVLOOP = ("import asyncio, runpy, sys, uvloop; "
             "asyncio.set_event_loop_policy(uvloop.EventLoopPolicy()); "
             "sys.argv[0] = 'manage.py'; runpy.run_path('manage.py', run_name='__main__')")

#: name -> the server's command line for a port. Daphne is the reference (the first column).
SERVERS = {
    "daphne": lambda port: [PY, "manage.py", "a2ui_serve", "-v", "0", "-b", HOST, "-p",
                            str(port), A2UI_APP],
    "daphne-uvloop": lambda port: [PY, "-c", ON_UVLOOP, "a2ui_serve", "-v", "0", "-b", HOST,
                                   "-p", str(port), A2UI_APP],
    "uvicorn": lambda port: [PY, "-m", "uvicorn", APP, "--host", HOST, "--port", str(port),
                             "--loop", "asyncio", "--http", "h11", "--ws", "websockets",
                             "--ws-max-size", CAP, "--no-access-log", "--log-level", "warning"],
    "uvicorn-uvloop": lambda port: [PY, "-m", "uvicorn", APP, "--host", HOST, "--port",
                                    str(port), "--loop", "uvloop", "--http", "httptools",
                                    "--ws", "websockets", "--ws-max-size", CAP,
                                    "--no-access-log", "--log-level", "warning"],
    "uvicorn-sansio": lambda port: [PY, "-m", "uvicorn", APP, "--host", HOST, "--port",
                                    str(port), "--loop", "uvloop", "--http", "httptools",
                                    "--ws", "websockets-sansio", "--ws-max-size", CAP,
                                    "--no-access-log", "--log-level", "warning"],
    "granian": lambda port: [PY, "-m", "granian", "--interface", "asgi", "--host", HOST,
                             "--port", str(port), "--workers", "1",
                             "--http1-header-read-timeout", "10000", "--log-level", "warning",
                             APP],
}
RULE = 1.3  # an alternative must be this many times Daphne's rate at every session count


class Served(Server):
    """``SERVERS[kind]`` in the repository (gate_servers.Server's life: ready, log, stop)."""

    def __init__(self, kind, env, cpus=None):
        self.name, self.port = kind, free_port()
        self.log = tempfile.NamedTemporaryFile(prefix=f"bench-{kind}-", suffix=".log",
                                               delete=False)
        self.proc = subprocess.Popen(SERVERS[kind](self.port), cwd=ROOT, env=env,
                                     stdout=self.log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, preexec_fn=pinned(cpus))

    def pids(self):
        """The server's process and its descendants (Granian serves from a worker process)."""
        children = {}
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    stat = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
                except OSError:
                    continue
                children.setdefault(int(stat[1]), []).append(int(entry))
        found, todo = [], [self.proc.pid]
        while todo:
            pid = todo.pop()
            found.append(pid)
            todo += children.get(pid, [])
        return found

    def rss_kb(self):
        from bench_capacity import rss_kb

        return sum(rss_kb(pid) for pid in self.pids())


async def check(server, fixtures):
    """The app works under ``server``: both sockets handshake and a pushed ``ui.progress``
    arrives. None, or what failed."""
    from gate_load import init_session, open_many, push_frame

    base = f"ws://{HOST}:{server.port}/ws/v4/a2ui"
    try:
        agent, = await open_many([f"{base}/agent"], headers={
            "Authorization": f"Bearer {fixtures['agent_key']}"})
        (person,), (sid,) = await open_many([f"{base}?token={fixtures['tokens'][0]}"],
                                            then=init_session)
        await agent.send(push_frame("ui.progress", sid, 1))
        while json.loads(await asyncio.wait_for(person.recv(), 20)).get("method") != \
                "ui.progress":
            pass
        await asyncio.gather(agent.close(), person.close())
        return None
    except Exception as exc:  # reported, the server left out
        return f"{type(exc).__name__}: {exc}"[:300]


def start(kinds, env, cpus=None, timeout=90):
    servers = [Served(kind, env, cpus) for kind in kinds]
    try:
        for s in servers:
            s.wait_ready(timeout)
    except Exception:
        for s in servers:
            s.dump_log()
            s.stop()
        raise
    return servers


def push_phase(args, env, fixtures, workdir):
    """Every server at once, checked, then loaded in turn; rows of gate_load."""
    flush_redis(args.redis_url)
    server_cpus, load_cpus = pin_plan(args.pin)
    servers = start(args.servers, env, server_cpus)
    try:
        targets, failures = {}, {}
        for s in servers:
            failed = asyncio.run(check(s, fixtures))
            if failed:
                failures[s.name] = failed
                s.dump_log()
                continue
            targets[s.name] = {
                "kind": "push", "agent_key": fixtures["agent_key"], "tokens": fixtures["tokens"],
                "pids": s.pids(), "agent_url": f"ws://{HOST}:{s.port}/ws/v4/a2ui/agent",
                "user_url": f"ws://{HOST}:{s.port}/ws/v4/a2ui"}
            print(f"  {s.name}: the app works (pids {targets[s.name]['pids']})", flush=True)
        cfg = {"targets": targets, "sessions": args.sessions, "reps": args.reps,
               "warm": args.warm, "measure": args.measure, "in_flight": args.in_flight,
               "agents": args.agents, "method": "ui.progress"}
        rows = run_load(cfg, workdir, args.block_timeout, load_cpus) if targets else []
        return rows, failures
    finally:
        for s in servers:
            s.stop()


async def idle_memory(server, tokens, settle):
    """KB per idle JSON-RPC socket (bench_capacity.py's measure, without the close)."""
    from bench_capacity import WARM, open_idle, per_socket

    warm = await open_idle(server.port, "jsonrpc", tokens[:WARM])
    await asyncio.gather(*(ws.close() for ws in warm))
    await asyncio.sleep(settle + 6)  # the warm-up's collection after the close
    before = server.rss_kb()
    t0 = time.monotonic()
    conns = await open_idle(server.port, "jsonrpc", tokens[WARM:])
    opened = time.monotonic() - t0
    await asyncio.sleep(settle)
    at = server.rss_kb()
    await asyncio.gather(*(ws.close() for ws in conns), return_exceptions=True)
    return {"server": server.name, "sockets": len(conns), "before_kb": before, "at_kb": at,
            "kb_per_socket": per_socket(before, at, len(conns)), "open_seconds": opened}


def memory_phase(args, env, fixtures):
    rows = []
    for kind in args.servers:
        flush_redis(args.redis_url)
        server, = start([kind], env)
        try:
            rows.append(asyncio.run(idle_memory(server, fixtures["tokens"], args.settle)))
            r = rows[-1]
            print(f"  {kind}: {r['sockets']} idle sockets opened in {r['open_seconds']:.1f} s; "
                  f"RSS {r['before_kb'] / 1024:.1f} -> {r['at_kb'] / 1024:.1f} MB, "
                  f"{r['kb_per_socket']:.1f} KB per socket", flush=True)
        except Exception:
            server.dump_log()
            raise
        finally:
            server.stop()
    return rows


def report(rows, memory, failures, args):
    by = {}
    for r in rows:
        by.setdefault((r["target"], r["sessions"]), []).append(r)
    served = [k for k in args.servers if k not in failures]
    lines = ["| sessions | " + " | ".join(f"{k} msg/s" for k in served) + " | "
             + " | ".join(f"{k} CPU us/msg" for k in served) + " |",
             "|---:|" + "---:|" * (2 * len(served))]
    for n in args.sessions:
        rates = [med(by[(k, n)], "rate") for k in served]
        cpus = [med(by[(k, n)], "cpu_us") for k in served]
        base_rate, base_cpu = rates[0], cpus[0]
        lines.append(f"| {n} | " + " | ".join(
            f"{r:,.0f}" + (f" ({r / base_rate:.2f}x)" if i else "")
            for i, r in enumerate(rates)) + " | " + " | ".join(
            f"{c:.0f}" + (f" ({base_cpu / c:.2f}x)" if i else "")
            for i, c in enumerate(cpus)) + " |")
    lines += ["", "spread between repetitions (max - min) / median, msg/s: " + "; ".join(
        f"{k} " + " ".join(f"{spread(by[(k, n)], 'rate'):.0%}" for n in args.sessions)
        for k in served)]
    if served and served[0] == "daphne":
        for k in served[1:]:
            worst = min(med(by[(k, n)], "rate") / med(by[("daphne", n)], "rate")
                        for n in args.sessions)
            lines.append(f"{k}: lowest ratio to Daphne {worst:.2f}x: "
                         + ("meets" if worst >= RULE else "below") + f" the {RULE}x rule")
    for k, why in failures.items():
        lines.append(f"{k}: the app did not work: {why}")
    if memory:
        lines += ["", "| server | idle JSON-RPC sockets | KB per idle socket | RSS before -> "
                  "with them |", "|---|---:|---:|---:|"]
        lines += [f"| {r['server']} | {r['sockets']} | {r['kb_per_socket']:.1f} | "
                  f"{r['before_kb'] / 1024:.1f} -> {r['at_kb'] / 1024:.1f} MB |" for r in memory]
    return "\n".join(lines)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--servers", default="daphne,uvicorn,uvicorn-uvloop,granian",
                   type=lambda s: [x for x in s.split(",") if x],
                   help=f"servers to run, the first the reference (known: {', '.join(SERVERS)})")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--sessions", default="1,100,1000",
                   type=lambda s: sorted(int(x) for x in s.split(",")))
    p.add_argument("--warm", type=float, default=1.0, help="seconds before counting")
    p.add_argument("--measure", type=float, default=3.0, help="seconds counted")
    p.add_argument("--in-flight", type=int, default=100,
                   help="messages in flight overall (per session: this / sessions, rounded up)")
    p.add_argument("--agents", type=int, default=4, help="agent sockets per server")
    p.add_argument("--idle", type=int, default=2000,
                   help="idle sockets of the memory phase (0: skip it)")
    p.add_argument("--settle", type=float, default=3.0, help="seconds before each RSS read")
    p.add_argument("--allocator", choices=["malloc", "pymalloc"], default="malloc",
                   help="every server's PYTHONMALLOC (a2ui_serve's default: malloc)")
    p.add_argument("--pin", action="store_true",
                   help="servers on the last CPU, the load generator on the others")
    p.add_argument("--database-url", default=os.environ.get("DATABASE_URL") or DEFAULT_DB)
    p.add_argument("--redis-url", default=os.environ.get("REDIS_URL") or DEFAULT_REDIS,
                   help="Redis database of the bench, FLUSHED before every phase")
    p.add_argument("--block-timeout", type=float, default=1800.0,
                   help="seconds the load generator may take")
    args = p.parse_args()
    unknown = set(args.servers) - set(SERVERS)
    if unknown:
        raise SystemExit(f"unknown server(s) {sorted(unknown)}; known: {', '.join(SERVERS)}")
    if not args.database_url.startswith("postgres"):
        raise SystemExit("the bench needs PostgreSQL (--database-url / DATABASE_URL)")
    return args


def main():
    args = parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    from bench_capacity import WARM, raise_nofile

    limit = raise_nofile(3 * max(args.idle, max(args.sessions)) + 4096)
    started = time.monotonic()
    env = server_env(args.database_url, args.redis_url)
    if args.allocator == "malloc":
        env.update(PYTHONMALLOC="malloc", MALLOC_ARENA_MAX="2")
    else:
        env["PYTHONMALLOC"] = "pymalloc"
    load0 = os.getloadavg()[0]
    print(f"servers {', '.join(args.servers)}; {os.cpu_count()} CPUs, load average {load0:.1f}; "
          f"RLIMIT_NOFILE {limit}; allocator {args.allocator}; Redis {args.redis_url} (flushed); "
          f"{args.reps} repetitions, {args.warm} s warm-up + {args.measure} s counted",
          flush=True)
    workdir = tempfile.mkdtemp(prefix="bench-servers-")
    try:
        prepare_database(ROOT, args.database_url, env)
        out = Path(workdir) / "fixtures.json"
        subprocess.run([PY, str(ROOT / "bench" / "gate_fixtures.py"), str(ROOT),
                        str(max(max(args.sessions), args.idle + WARM)), str(out)],
                       env=env, check=True, cwd=ROOT)
        fixtures = json.loads(out.read_text())
        print("push phase: every server at once, loaded in turn", flush=True)
        rows, failures = push_phase(args, env, fixtures, workdir)
        memory = []
        if args.idle:
            print(f"memory phase: each server alone, {args.idle} idle sockets", flush=True)
            memory = memory_phase(args, env, fixtures)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print(f"\nagent pushes (ui.progress, ~300 B) received by person sockets, median of "
          f"{args.reps}; in brackets the ratio to {args.servers[0]} (CPU: its / the server's, "
          f"higher is better); {time.monotonic() - started:.0f} s, load average "
          f"{load0:.1f} at the start, {os.getloadavg()[0]:.1f} at the end; "
          f"{time.strftime('%Y-%m-%d')}")
    print(report(rows, memory, failures, args))


if __name__ == "__main__":
    main()
