"""AG-UI WebSocket (seed 003, ``/ws/agui``) push throughput beside seed-000 push, in one run.

    python bench/bench_agui_push.py [--quick] [--sessions 1,100,1000] [--procs 1,2]

The same agent pushes (seed-000 ``ui.progress``, or ``ui.render`` with ``--method``) reach
person sockets of the two protocols on the same server: ``jsonrpc`` (``/ws/v4/a2ui``, one
encode per event shared by every socket: ``encode_cached``) and ``agui`` (``/ws/agui``, where
each frame carries its own UUID and timestamp, so it is built per socket: TOOL_CALL_STATUS or
RENDER_REQUEST). Servers are ``manage.py a2ui_serve`` processes of this tree with PostgreSQL and
Redis (bench/gate_servers.py); the load is bench/gate_load.py in a process of its own, measuring
the two protocols and the Channels echo in turn, ``--reps`` times, the order reversed every
other time. The report gives msg/s and server CPU per message of each protocol and the ratio
agui / jsonrpc. Not a test: docs/performance.md has the figures.
"""

from __future__ import annotations

import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_gate as gate  # noqa: E402
from gate_servers import Server, flush_redis  # noqa: E402

HOST = gate.HOST


def fixtures(tree, env, n, workdir):
    import json
    import subprocess

    out = Path(workdir) / "fixtures-agui.json"
    subprocess.run([sys.executable, str(gate.ROOT / "bench" / "gate_fixtures.py"),
                    str(tree.path), str(n), str(out), "--agui"], env=env, check=True,
                   cwd=tree.path)
    return json.loads(out.read_text())


def phase(tree, procs, args, workdir):
    flush_redis(args.redis_url)
    env = gate.server_env(tree.database_url, args.redis_url)
    own = [Server(f"a2ui-{i}", tree.path, gate.A2UI_APP, env) for i in range(procs)]
    echo = Server("echo", gate.ROOT, gate.ECHO_APP, env)
    servers = [*own, echo]
    try:
        pids = [s.proc.pid for s in own]
        agent_url = f"ws://{HOST}:{own[0].port}/ws/v4/a2ui/agent"
        base = {"kind": "push", "agent_key": tree.fixtures["agent_key"], "pids": pids,
                "agent_url": agent_url}
        targets = {
            "jsonrpc": {**base, "tokens": tree.fixtures["tokens"],
                        "user_url": f"ws://{HOST}:{own[-1].port}/ws/v4/a2ui"},
            "agui": {**base, "client": "agui", "tokens": tree.fixtures["agui_tokens"],
                     "user_url": f"ws://{HOST}:{own[-1].port}/ws/agui"},
            "echo": {"kind": "echo", "url": f"ws://{HOST}:{echo.port}/ws/echo",
                     "pids": [echo.proc.pid]},
        }
        for s in servers:
            s.wait_ready()
        cfg = {"targets": targets, "sessions": args.sessions, "reps": args.reps,
               "warm": args.warm, "measure": args.measure, "in_flight": args.in_flight,
               "agents": args.agents, "method": args.method}
        return gate.run_load(cfg, workdir, args.block_timeout)
    except Exception:
        for s in servers:
            s.dump_log()
        raise
    finally:
        for s in servers:
            s.stop()


def report(results, args):
    med = gate.med
    lines = ["", "msg/s and server CPU us per message: median (each repetition)",
             "| procs | sessions | jsonrpc msg/s | agui msg/s | agui / jsonrpc | "
             "jsonrpc CPU us | agui CPU us | echo msg/s |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for procs in args.procs:
        for n in args.sessions:
            j, a, e = (results[(t, procs, n)] for t in ("jsonrpc", "agui", "echo"))
            lines.append(f"| {procs} | {n} | {gate.cell(j, 'rate')} | {gate.cell(a, 'rate')} | "
                         f"{med(a, 'rate') / med(j, 'rate'):.2f} | {med(j, 'cpu_us'):.0f} | "
                         f"{med(a, 'cpu_us'):.0f} | {statistics.median(r['rate'] for r in e):,.0f} |")
    return "\n".join(lines)


def main():
    args = gate.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    started = time.monotonic()
    head = gate.git("rev-parse", "--short", "HEAD")
    workdir = tempfile.mkdtemp(prefix="bench-agui-")
    tree = gate.Tree("current", gate.ROOT, args.database_url, head)
    env = gate.server_env(tree.database_url, args.redis_url)
    gate.prepare_database(tree.path, tree.database_url, env)
    tree.fixtures = fixtures(tree, env, max(args.sessions), workdir)
    results = {}
    for procs in args.procs:
        print(f"{procs} Daphne process(es)", flush=True)
        for row in phase(tree, procs, args, workdir):
            results.setdefault((row["target"], procs, row["sessions"]), []).append(row)
    print(f"\nAG-UI push bench of {head}, method {args.method}, {args.reps} reps, "
          f"{time.monotonic() - started:.0f} s")
    print(report(results, args))


if __name__ == "__main__":
    main()
