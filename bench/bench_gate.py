"""Push throughput of this tree against a baseline commit, in the same run (issue 11's gate).

    python bench/bench_gate.py [--baseline REF] [--quick] [--gate] [--reps N]

Scenarios: agent pushes (seed-000 ``ui.progress`` notifications, ``--method``) per second
received by person sockets, at 1, 100 and 1,000 sessions, with one Daphne process and with two
(``--procs 2``: the agent sockets on one process, the person sockets on the other, so every push
is published through Redis); besides, the stock Channels echo (bench/echo_asgi.py) at the same
counts. Servers are ``manage.py a2ui_serve`` processes of the tree under test with PostgreSQL and
Redis (``DATABASE_URL``/``REDIS_URL``, or the options; the Redis database is flushed before
each process count); the load comes from bench/gate_load.py, a process of its own.

The baseline (``--baseline``, default: the commit in bench/BASELINE) is exported with ``git
archive`` into a temporary directory and served from there with the same virtualenv, its own
``manage.py`` and its own database (the database name + ``_base``). For each process count, both
trees' servers and the echo serve at once and one load generator measures them in turn, ``--reps``
times per session count, the order reversed every other time (A B E, E B A, ...), so that drift of
the machine falls on all of them. The report gives, per scenario, the median msg/s of each tree,
their ratio, PASS/FAIL against ``--threshold`` (0.90) and the spread between repetitions (the
noise the gate has to live with), the same for the servers' CPU time per message, and the push
rate over the echo. ``--gate`` makes a FAIL exit 1.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gate_servers import Server, flush_redis, pin_plan, pinned, prepare_database  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
HOST = "127.0.0.1"
DEFAULT_DB = "postgres://postgres@127.0.0.1:5432/a2ui_bench"
DEFAULT_REDIS = "redis://127.0.0.1:6379/7"
A2UI_APP = "a2ui_project.asgi.application"
ECHO_APP = "bench.echo_asgi.application"
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY") or secrets.token_urlsafe(50)  # signs the tokens


def git(*args, **kw):
    return subprocess.run(["git", "-C", str(ROOT), *args], check=True, text=True,
                          capture_output=True, **kw).stdout.strip()


def baseline_ref(arg):
    if arg:
        return arg
    for line in (ROOT / "bench" / "BASELINE").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            return line
    raise SystemExit("bench/BASELINE names no commit")


def export_tree(sha, dest):
    """The baseline's files (``git archive``: no worktree to clean up, nothing in .git)."""
    archive = subprocess.Popen(["git", "-C", str(ROOT), "archive", sha], stdout=subprocess.PIPE)
    subprocess.run(["tar", "-x", "-C", str(dest)], stdin=archive.stdout, check=True)
    if archive.wait() != 0:
        raise SystemExit(f"git archive {sha} failed")


def with_db_suffix(url, suffix):
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=parts.path.rstrip("/") + suffix))


class Tree:
    def __init__(self, name, path, database_url, label, prometheus=False):
        self.name, self.path, self.database_url, self.label = name, Path(path), database_url, label
        self.prometheus = prometheus  # its servers run with A2UI_PROMETHEUS=1 (--prometheus)

    def env(self, redis_url, workdir, procs):
        env = server_env(self.database_url, redis_url)
        if self.prometheus:  # one multiprocess directory per phase, empty at its start
            directory = Path(workdir) / f"prom-{self.name}-{procs}"
            directory.mkdir()
            env.update(A2UI_PROMETHEUS="1", A2UI_PROMETHEUS_MULTIPROC_DIR=str(directory))
        return env


#: One bench account and one address open thousands of sockets and MCP sessions: the caps
#: (docs/operations.md, "Caps") are lifted for the servers under test.
NO_CAPS = {f"A2UI_CAP_{name}": "1000000" for name in (
    "MCP_SESSIONS_PER_PERSON", "MCP_SESSIONS_PER_AGENT_KEY", "SOCKETS_PER_PERSON",
    "AGENT_SOCKETS_PER_AGENT_KEY", "STREAMS_PER_PERSON", "RUNS_PER_PERSON", "PER_ADDRESS")}


def server_env(database_url, redis_url):
    env = dict(os.environ)
    env.update(
        DATABASE_URL=database_url, REDIS_URL=redis_url,
        DJANGO_SECRET_KEY=SECRET_KEY,
        DJANGO_SETTINGS_MODULE="a2ui_project.settings", A2UI_LOG_LEVEL="WARNING",
        DB_POOL_MAX="10", PYTHONUNBUFFERED="1", STREAM_TOKEN_EXPIRE_MINUTES="600", **NO_CAPS,
    )
    env.pop("PYTHONPATH", None)
    return env


def fixtures(tree, env, n, workdir):
    out = Path(workdir) / f"fixtures-{tree.name}.json"
    subprocess.run([sys.executable, str(ROOT / "bench" / "gate_fixtures.py"), str(tree.path),
                    str(n), str(out)], env=env, check=True, cwd=tree.path)
    data = json.loads(out.read_text())
    if not Path(data["a2ui"]).is_relative_to(tree.path):
        raise SystemExit(f"{tree.name}: a2ui imported from {data['a2ui']}, not {tree.path}")
    return data


def run_load(cfg, workdir, timeout, cpus=None):
    """Run bench/gate_load.py (on ``cpus``, when given); print its progress; return its result
    rows."""
    path = Path(workdir) / "load.json"
    path.write_text(json.dumps(cfg))
    deadline = time.monotonic() + timeout
    rows = []
    proc = subprocess.Popen([sys.executable, str(ROOT / "bench" / "gate_load.py"), str(path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=pinned(cpus))
    try:
        for line in proc.stdout:
            event = json.loads(line)
            if event["event"] == "opened":
                print(f"  {event['target']}: {event['sessions']} sessions open "
                      f"({event['seconds']:.1f} s)", flush=True)
            else:
                rows.append(event)
                print(f"  {event['target']:>8} {event['sessions']:>4} sessions, rep "
                      f"{event['rep'] + 1}: {event['rate']:,.0f} msg/s, {event['cpu_us']:.0f} us "
                      f"CPU/msg" + (f", lost {event['lost']}" if event["lost"] else ""),
                      flush=True)
            if time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError(f"load generator still running after {timeout} s")
        if proc.wait() != 0:
            raise RuntimeError(f"load generator failed:\n{proc.stderr.read()[-3000:]}")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return rows


def phase(trees, procs, args, workdir):
    """Both trees with ``procs`` Daphne processes each, and the echo, all serving at once; one
    load generator measures them in turn (only one is loaded at a time)."""
    flush_redis(args.redis_url)
    server_cpus, load_cpus = pin_plan(args.pin)
    servers, targets = [], {}
    try:
        for tree in trees.values():
            env = tree.env(args.redis_url, workdir, procs)
            own = [Server(f"{tree.name}-{i}", tree.path, A2UI_APP, env, server_cpus)
                   for i in range(procs)]
            servers += own
            targets[tree.name] = {
                "kind": "push", "agent_key": tree.fixtures["agent_key"],
                "tokens": tree.fixtures["tokens"], "pids": [s.proc.pid for s in own],
                "agent_url": f"ws://{HOST}:{own[0].port}/ws/v4/a2ui/agent",
                "user_url": f"ws://{HOST}:{own[-1].port}/ws/v4/a2ui",
            }
        echo = Server("echo", ROOT, ECHO_APP, server_env(args.database_url, args.redis_url),
                      server_cpus)
        servers.append(echo)
        targets["echo"] = {"kind": "echo", "url": f"ws://{HOST}:{echo.port}/ws/echo",
                           "pids": [echo.proc.pid]}
        for s in servers:
            s.wait_ready()
        cfg = {"targets": targets, "sessions": args.sessions, "reps": args.reps,
               "warm": args.warm, "measure": args.measure, "in_flight": args.in_flight,
               "agents": args.agents, "method": args.method}
        rows = run_load(cfg, workdir, args.block_timeout, load_cpus)
        for tree in trees.values():
            if tree.prometheus:
                scraped(tree, servers[[s.name for s in servers].index(f"{tree.name}-0")])
        return rows
    except Exception:
        for s in servers:
            s.dump_log()
        raise
    finally:
        for s in servers:
            s.stop()


def scraped(tree, server):
    """The servers' own count of what they pushed (``/a2ui/metrics``): proof the metrics were on."""
    from urllib.request import urlopen

    with urlopen(f"http://{HOST}:{server.port}/a2ui/metrics", timeout=10) as response:
        body = response.read().decode()
    pushes = sum(float(line.rsplit(" ", 1)[1]) for line in body.splitlines()
                 if line.startswith("a2ui_pushes_total{"))
    if not pushes:
        raise SystemExit(f"{tree.name}: the Prometheus scrape counted no push")
    print(f"  {tree.name}: Prometheus scrape counted {pushes:,.0f} pushes", flush=True)


# Report ----------------------------------------------------------------------------------------


def med(rows, key):
    return statistics.median(r[key] for r in rows)


def spread(rows, key):
    """(max - min) / median over the repetitions: how much they disagree."""
    values = [r[key] for r in rows]
    return (max(values) - min(values)) / statistics.median(values) if len(values) > 1 else 0.0


def cell(rows, key):
    return f"{med(rows, key):,.0f} (" + " ".join(f"{r[key]:,.0f}" for r in rows) + ")"


def report(results, args):
    """results[(target, procs, sessions)]: one row per repetition."""
    lines, failed = [], []
    for key, title, better in (("rate", "msg/s", "current / baseline"),
                               ("cpu_us", "server CPU us per message", "baseline / current")):
        gated = key == ("rate" if args.gate_metric == "rate" else "cpu_us")
        lines += ["", f"{title}: median (each repetition); {better} (higher is better)"
                  + (f"; gate >= {args.threshold:.2f}" if gated else ""),
                  f"| procs | sessions | current | baseline | {better} | "
                  "spread current / baseline |" + (" gate |" if gated else ""),
                  "|---:|---:|---:|---:|---:|---:|" + ("---|" if gated else "")]
        for procs in args.procs:
            for n in args.sessions:
                cur, base = results[("current", procs, n)], results[("baseline", procs, n)]
                ratio = med(cur, key) / med(base, key)
                if key == "cpu_us":
                    ratio = 1 / ratio
                verdict = ""
                if gated:
                    verdict = " PASS |" if ratio >= args.threshold else " FAIL |"
                    if ratio < args.threshold:
                        failed.append((procs, n))
                lines.append(f"| {procs} | {n} | {cell(cur, key)} | {cell(base, key)} | "
                             f"{ratio:.2f} | {spread(cur, key):.0%} / {spread(base, key):.0%} |"
                             + verdict)
    lines += ["", "Channels echo (bench/echo_asgi.py, one process) in the same phase, and each "
              "tree's push rate over it (2 procs: the published path)",
              "| procs | sessions | echo msg/s | echo CPU us/msg | current / echo | "
              "baseline / echo |", "|---:|---:|---:|---:|---:|---:|"]
    for procs in args.procs:
        for n in args.sessions:
            echo = results[("echo", procs, n)]
            e = med(echo, "rate")
            lines.append(f"| {procs} | {n} | {cell(echo, 'rate')} | {med(echo, 'cpu_us'):.0f} | "
                         f"{med(results[('current', procs, n)], 'rate') / e:.0%} | "
                         f"{med(results[('baseline', procs, n)], 'rate') / e:.0%} |")
    if 1 in args.procs and 2 in args.procs:
        lines += ["", "The published path against the local one: each tree's server CPU per "
                  "message with 2 processes over 1 (the aim: <= 1.30), and its rate with 2 "
                  "processes over 1 (the aim: >= 1.00)",
                  "| sessions | current CPU 2/1 | baseline CPU 2/1 | current rate 2/1 | "
                  "baseline rate 2/1 |", "|---:|---:|---:|---:|---:|"]
        for n in args.sessions:
            ratios = []
            for key in ("cpu_us", "rate"):
                for tree in ("current", "baseline"):
                    ratios.append(med(results[(tree, 2, n)], key) / med(results[(tree, 1, n)], key))
            lines.append(f"| {n} | " + " | ".join(f"{r:.2f}" for r in ratios) + " |")
    return "\n".join(lines), failed


# Main ------------------------------------------------------------------------------------------


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--baseline", help="git ref to compare with (default: bench/BASELINE)")
    p.add_argument("--quick", action="store_true",
                   help="shorter: 2 repetitions, 0.5 s warm-up and 1.5 s counted")
    p.add_argument("--gate", action="store_true", help="exit 1 when a scenario FAILs")
    p.add_argument("--prometheus", action="store_true",
                   help="the current tree's servers with the Prometheus metrics on "
                        "(A2UI_PROMETHEUS=1, a multiprocess directory per phase); the baseline's "
                        "as configured (off by default)")
    p.add_argument("--pin", action="store_true",
                   help="servers on the last CPU, the load generator on the others "
                        "(os.sched_setaffinity): steadier figures on a small machine")
    p.add_argument("--threshold", type=float, default=0.90)
    p.add_argument("--gate-metric", choices=["rate", "cpu"], default="rate",
                   help="what the gate compares: msg/s (the issue's), or the servers' CPU time "
                        "per message (steadier on a busy machine)")
    p.add_argument("--reps", type=int,
                   help="measurements of each target per session count (default 3, quick 2)")
    p.add_argument("--sessions", default="1,100,1000",
                   type=lambda s: sorted(int(x) for x in s.split(",")))
    p.add_argument("--procs", default="1,2", type=lambda s: [int(x) for x in s.split(",")],
                   help="Daphne process counts to run (1 and/or 2)")
    p.add_argument("--warm", type=float, help="seconds before counting (default 1, quick 0.5)")
    p.add_argument("--measure", type=float, help="seconds counted (default 3, quick 1.5)")
    p.add_argument("--in-flight", type=int, default=100,
                   help="messages in flight overall (per session: this / sessions, rounded up)")
    p.add_argument("--agents", type=int, default=4, help="agent sockets")
    p.add_argument("--method", default="ui.progress", choices=["ui.progress", "ui.render"])
    p.add_argument("--database-url", default=os.environ.get("DATABASE_URL") or DEFAULT_DB,
                   help="PostgreSQL database of the current tree (created and migrated); the "
                        "baseline's is the same name + _base (default $DATABASE_URL)")
    p.add_argument("--redis-url", default=os.environ.get("REDIS_URL") or DEFAULT_REDIS,
                   help="Redis database of the bench, FLUSHED before every block "
                        "(default $REDIS_URL)")
    p.add_argument("--block-timeout", type=float, default=1200.0,
                   help="seconds one process count may take (all its measurements)")
    args = p.parse_args()
    args.reps = args.reps or (2 if args.quick else 3)
    args.warm = args.warm if args.warm is not None else (0.5 if args.quick else 1.0)
    args.measure = args.measure if args.measure is not None else (1.5 if args.quick else 3.0)
    if not args.database_url.startswith("postgres"):
        raise SystemExit("the bench needs PostgreSQL (--database-url / DATABASE_URL)")
    return args


def run_phases(args, trees, workdir):
    results = {}
    for procs in args.procs:
        print(f"{procs} Daphne process(es) per tree", flush=True)
        for row in phase(trees, procs, args, workdir):
            results.setdefault((row["target"], procs, row["sessions"]), []).append(row)
    return results


def main():
    args = parse_args()
    # SIGTERM unwinds like Ctrl-C: the servers and the load generator are stopped on the way out.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    started = time.monotonic()
    ref = baseline_ref(args.baseline)
    sha = git("rev-parse", "--verify", f"{ref}^{{commit}}")
    head = git("rev-parse", "--short", "HEAD")
    dirty = " + uncommitted changes" if git("status", "--porcelain", "--untracked-files=no") else ""
    workdir = tempfile.mkdtemp(prefix="bench-gate-")
    base_path = Path(workdir) / "baseline"
    base_path.mkdir()
    try:
        export_tree(sha, base_path)
        trees = {
            "current": Tree("current", ROOT, args.database_url,
                            f"{head}{dirty}" + (", metrics on" if args.prometheus else ""),
                            prometheus=args.prometheus),
            "baseline": Tree("baseline", base_path,
                             with_db_suffix(args.database_url, "_base"), f"{sha[:7]} ({ref})"),
        }
        print(f"current: {trees['current'].label}; baseline: {trees['baseline'].label}; "
              f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; Redis "
              f"{args.redis_url} (flushed); {args.reps} repetitions, {args.warm} s "
              f"warm-up + {args.measure} s counted; {args.method}"
              + ("; servers on CPU {}, load on {}".format(*pin_plan(True)) if args.pin else ""),
              flush=True)
        for tree in trees.values():  # stream tokens serve every block (new sessions each time)
            env = server_env(tree.database_url, args.redis_url)
            prepare_database(tree.path, tree.database_url, env)
            tree.fixtures = fixtures(tree, env, max(args.sessions), workdir)
        results = run_phases(args, trees, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    table, failed = report(results, args)
    print(f"\npush throughput, {args.method} received by person sockets; current "
          f"{trees['current'].label} vs baseline {trees['baseline'].label}; "
          f"{time.monotonic() - started:.0f} s, load average {os.getloadavg()[0]:.1f}")
    print(table)
    if failed:
        print(f"\nFAIL: {failed} (procs, sessions) below {args.threshold:.2f} x baseline")
        if args.gate:
            sys.exit(1)


if __name__ == "__main__":
    main()
