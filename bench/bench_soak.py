"""Soak: N people and N agent sockets on one Daphne, R pushes per session per second. Not a test.

    python bench/bench_soak.py [--sessions 300] [--rate 1] [--seconds 180] [--rounds 3]
                               [--clients 2] [--agent-sockets N] [--servers 1]
                               [--allocator malloc|pymalloc]
    python bench/bench_soak.py --quick          # 50 sessions, 20 s, 2 rounds (``make bench``)
    python bench/bench_soak.py --servers 2 --prometheus ...   # and the metrics' scrape

``--prometheus`` runs the servers with the Prometheus metrics on (``A2UI_PROMETHEUS=1``, one
fresh multiprocess directory for all of them), scrapes ``/a2ui/metrics`` of the first server
before and after each round's steady phase (the sockets still open) and prints what the scrape
says (sessions attached, pushes and push latency per protocol, answers, refusals, resyncs)
beside the bench's own counts. The scrape's latency is the server's (a push validated, stored
and handed to the sockets), the bench's is agent send -> person receive.

One Daphne process (``--servers``: that many, as production runs several), started by
``manage.py a2ui_serve --allocator`` (``malloc`` by default, as a2ui_serve's), serves our app with
PostgreSQL (``--database-url``, created and migrated if absent) and Redis (``--redis-db``,
flushed), as in production. The load comes from ``--clients`` other processes
(``soak_client.py``), each with its share of the sessions, so that the load generator's own
event loop does not add to the measured latency; client ``c`` connects all its sockets to
server ``c % servers``. This process only drives them and reads the servers' RSS and CPU time
(added up over the servers). Each round:

1. reads the Daphne process's RSS (``/proc/<pid>/status``), idle;
2. the open storm: opens the agent sockets (``--agent-sockets``, default one per session, all
   of one bench agent), then N person sockets of N different people (``a2ui.init``: N new
   sessions), and waits until the agent heard all N ``session.opened`` (each goes to every
   agent socket's process, and on to the one socket that holds the session:
   ``a2ui.sessions.agentroute``). Reported apart: the time it took and the ``a2ui.init``
   latency;
3. the steady phase, for ``--seconds``: each session gets R pushes per second from its agent
   socket, phases spread evenly over the second, in a fixed realistic mix (``soak_client``:
   per 10 pushes 2 ``ui.render``, 2 ``ui.update``, 4 ``ui.progress``, 1 ``ui.notify``,
   1 ``ui.request_input`` the person answers with ``user.respond``; each session's cycle out
   of step with the others', so that each second carries the whole mix), every push a JSON-RPC
   request so that failures come back as errors; the RSS is sampled every second;
4. the latency agent send -> person receive of every push (each session's first two pushes,
   the renders of its first screen right after the open storm, reported apart) (send time in an extra ``bench_t``
   param, which the server passes through), errors by code, pushes that never arrived, the
   answers the agents received, the CPU time of the server and of the clients, and how late
   the clients sent (their p99 lateness: a load generator that cannot keep up shows here);
5. closes every socket, waits ``--settle`` seconds with the process idle, reads the RSS again.

A warm-up round (10 sessions, 3 s) runs first so that the baseline RSS includes what any
first connection loads (modules, pools). Every session belongs to a different person, so no
round's new tab takes over (resumes) a session of the round before. The report is one row per
round and PASS/FAIL against the targets: steady p99 < 50 ms at <= 300 sessions x 1 msg/s
(< 100 ms above), no error, nothing lost, RSS after the last round within 10% of the baseline.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import resource
import shutil
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_push import (  # noqa: E402
    HOST,
    ROOT,
    Proc,
    Profiler,
    free_port,
    pct,
    prepare_database,
    server_env,  # noqa: E402
)
from soak_client import child_main  # noqa: E402


def _each(pids):
    return [pids] if isinstance(pids, int) else list(pids)


def rss_mb(pids):
    """The resident memory of the servers, added up (MB)."""
    total = 0.0
    for pid in _each(pids):
        with open(f"/proc/{pid}/status") as f:
            total += next((int(line.split()[1]) / 1024 for line in f
                           if line.startswith("VmRSS:")), float("nan"))
    return total


def memory_map(pids):
    """:func:`memory_map_of` each server, added up."""
    out = {}
    for pid in _each(pids):
        for k, v in memory_map_of(pid).items():
            if isinstance(v, dict):
                merged = out.setdefault(k, {})
                for size, mb in v.items():
                    merged[size] = round(merged.get(size, 0) + mb, 1)
            else:
                out[k] = round(out.get(k, 0) + v, 1)
    return out


def memory_map_of(pid):
    """Where the process's resident memory is (MB), from /proc/<pid>/smaps: the brk heap,
    anonymous mappings by size (64 MB reservations are glibc's thread arenas, about 1 MB are
    CPython's obmalloc arenas, the rest large objects and stacks), and file-backed (code)."""
    out = {"heap": 0, "thread arenas": 0, "obmalloc arenas": 0, "other anon": 0, "files": 0}
    kind, size = None, 0
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            first = line.split()
            if "-" in first[0] and len(first) >= 5 and ":" not in first[0]:
                start, end = (int(x, 16) for x in first[0].split("-"))
                size = end - start
                name = first[5] if len(first) > 5 else ""
                if name == "[heap]":
                    kind = "heap"
                elif name.startswith("/"):
                    kind = "files"
                elif name:
                    kind = None  # [stack], [vdso], ...
                elif size >= 32 << 20:
                    kind = "thread arenas"
                elif (1 << 20) - 8192 <= size <= (1 << 20) + 8192:
                    kind = "obmalloc arenas"
                else:
                    kind = "other anon"
            elif first[0] == "Rss:" and kind is not None:
                out[kind] += int(first[1]) / 1024
                if kind == "other anon" and os.environ.get("SOAK_MAPS"):
                    sizes = out.setdefault("other by size MB", {})
                    key = round(size / 2**20, 1)
                    sizes[key] = round(sizes.get(key, 0) + int(first[1]) / 1024, 1)
    return {k: round(v, 1) if isinstance(v, float) else v for k, v in out.items()}


def cpu_of(pids):
    """User + system CPU seconds of the servers so far."""
    total = 0.0
    for pid in _each(pids):
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rpartition(")")[2].split()
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def make_fixtures(n_tokens):
    """One bench agent (no session limit) and n people, each with one stream token."""
    import django

    django.setup()
    from django.contrib.auth import get_user_model

    from a2ui import tokens
    from a2ui.models import A2UISessionLog, Agent, StreamToken

    users = get_user_model()
    names = [f"bench-soak-{i}" for i in range(n_tokens)]
    have = set(users.objects.filter(username__in=names).values_list("username", flat=True))
    users.objects.bulk_create([users(username=n) for n in names if n not in have])
    people = sorted(users.objects.filter(username__in=names),
                    key=lambda u: int(u.username.rsplit("-", 1)[1]))
    Agent.objects.filter(name="bench-agent").delete()
    agent, key = tokens.create_agent("bench-agent", display_name="Bench agent")
    agent.max_concurrent_sessions = 1_000_000
    agent.save(update_fields=["max_concurrent_sessions"])
    A2UISessionLog.objects.filter(user__in=people).delete()
    StreamToken.objects.filter(user__in=people).delete()
    return key, [tokens.issue_stream_token(u, agent).token for u in people]


def serve(name, env, allocator):
    """A Daphne process the way production runs one: ``manage.py a2ui_serve``."""
    port = free_port()
    return Proc(name, [sys.executable, str(ROOT / "manage.py"), "a2ui_serve", "-v", "0",
                       "-b", HOST, "-p", str(port), "--allocator", allocator], env, port)


class Clients:
    """The load client processes; ``call`` gives every one an order and gathers the replies."""

    def __init__(self, n, ports, agent_key):
        ctx = multiprocessing.get_context("spawn")
        self.conns, self.procs = [], []
        for c in range(n):
            mine, theirs = ctx.Pipe()
            proc = ctx.Process(target=child_main, args=(theirs, ports[c % len(ports)], agent_key),
                               daemon=True)
            proc.start()
            self.conns.append(mine)
            self.procs.append(proc)

    def call(self, orders):
        for conn, order in zip(self.conns, orders, strict=True):
            conn.send(order)
        replies = []
        for conn in self.conns:
            reply = conn.recv()
            replies.append(reply[1] if len(reply) > 1 else None)
        return replies

    def same(self, *order):
        return self.call([order] * len(self.conns))

    def stop(self):
        for conn in self.conns:
            try:
                conn.send(("exit",))
            except OSError:
                pass
        for proc in self.procs:
            proc.join(10)
            if proc.is_alive():
                proc.kill()


def scrape(url):
    """``{(name, sorted labels tuple): value}`` of a Prometheus scrape of ``url``."""
    from prometheus_client.parser import text_string_to_metric_families

    with urllib.request.urlopen(url, timeout=30) as response:
        text = response.read().decode()
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def per_label(got, name, label="protocol"):
    """``{label value: value}`` of the samples of ``name``."""
    return {dict(labels).get(label, ""): v for (n, labels), v in got.items() if n == name}


def bucket_quantile(buckets, q):
    """Prometheus's ``histogram_quantile`` of cumulative ``{upper bound: count}``: linear
    within the bucket the rank falls in (the +Inf bucket: its lower bound)."""
    bounds = sorted(buckets)
    total = buckets[bounds[-1]] if bounds else 0
    if not total:
        return float("nan")
    rank, lower, below = q * total, 0.0, 0.0
    for bound in bounds:
        count = buckets[bound]
        if count >= rank:
            if bound == float("inf"):
                return lower
            return lower + (bound - lower) * ((rank - below) / (count - below) if count > below
                                              else 0)
        lower, below = bound, count
    return lower


def prom_round(before, after):
    """What the scrape says of one round: the steady phase's pushes and latency per protocol
    (``after - before``), the sessions attached at its end, answers, refusals, resyncs."""
    def delta(name, label="protocol"):
        then = per_label(before, name, label)
        return {k: v - then.get(k, 0) for k, v in per_label(after, name, label).items()
                if v - then.get(k, 0)}

    latency = {}
    for protocol, count in delta("a2ui_push_latency_seconds_count").items():
        buckets = {}
        for (name, labels), v in after.items():
            labels = dict(labels)
            if name == "a2ui_push_latency_seconds_bucket" and labels["protocol"] == protocol:
                key = tuple(sorted(labels.items()))
                buckets[float(labels["le"])] = v - before.get((name, key), 0)
        total = delta("a2ui_push_latency_seconds_sum").get(protocol, 0)
        latency[protocol] = {"count": count, "mean_ms": total / count * 1000,
                             "p50_ms": bucket_quantile(buckets, .5) * 1000,
                             "p99_ms": bucket_quantile(buckets, .99) * 1000}
    return {"sessions": {k: v for k, v in per_label(after, "a2ui_sessions").items() if v},
            "sockets": {k: v for k, v in per_label(after, "a2ui_sockets").items() if v},
            "pushes": delta("a2ui_pushes_total"), "latency": latency,
            "answers": sum(delta("a2ui_answer_latency_seconds_count").values()),
            "refused": delta("a2ui_refused_inputs_total", "reason"),
            "resyncs": delta("a2ui_resyncs_total"),
            "outages": delta("a2ui_outage_errors_total", "kind"),
            "pending": per_label(after, "a2ui_pending_requests", "kind")}


def fmt_prom(row):
    got = row["prom"]
    answers_bench = row["answers"].split("/")[0]
    lines = [
        f"prometheus (one scrape, every server): sessions attached "
        f"{got['sessions']} (bench: {row['sessions']}); sockets {got['sockets']}",
        f"  pushes {got['pushes']} = {sum(got['pushes'].values()):.0f} "
        f"(bench sent {row['sent']}, received {row['received']})",
        *(f"  push latency {p} (server: validated, stored, handed to the sockets): "
          f"mean {v['mean_ms']:.2f} ms, p50 ~{v['p50_ms']:.2f} ms, p99 ~{v['p99_ms']:.2f} ms "
          f"(bench agent -> person: p50 {row['p50']:.1f} ms, p99 {row['p99']:.1f} ms)"
          for p, v in got["latency"].items()),
        f"  answers {got['answers']:.0f} (bench: {answers_bench}); refused {got['refused'] or 0};"
        f" resyncs {got['resyncs'] or 0}; outage errors {got['outages'] or 0}; pending "
        f"requests at the scrape {got['pending']}"]
    return "\n".join(lines)


def split(items, parts):
    size, extra = divmod(len(items), parts)
    out, lo = [], 0
    for p in range(parts):
        hi = lo + size + (p < extra)
        out.append(items[lo:hi])
        lo = hi
    return out


def soak_round(clients, pid, tokens, n_agents, args, seconds, drain_timeout):
    n = len(tokens)
    rss_before = rss_mb(pid)
    slices = split(tokens, len(clients.conns))
    agents = [max(1, round(n_agents * len(s) / n)) for s in slices]
    t0 = time.perf_counter()
    clients.call([("open_agents", s, a) for s, a in zip(slices, agents, strict=True)])
    inits = [t for part in clients.same("open_users") for t in part]
    t_inits = time.perf_counter() - t0
    deadline = time.perf_counter() + args.timeout
    heard = False
    while not heard and time.perf_counter() < deadline:
        heard = sum(clients.same("heard")) >= len(inits)
        if not heard:
            time.sleep(0.05)
    t_open = time.perf_counter() - t0
    before = scrape(args.scrape_url) if args.prometheus else None  # outside the CPU window
    peak, cpu0 = rss_mb(pid), cpu_of(pid)
    print(f"  open storm {t_open:.1f} s; pushing for {seconds} s", flush=True)
    start = time.perf_counter() + 1.0
    firsts = [sum(len(s) for s in slices[:c]) for c in range(len(slices))]
    orders = [("push", start, seconds, args.rate, f, n, drain_timeout) for f in firsts]
    for conn, order in zip(clients.conns, orders, strict=True):
        conn.send(order)
    results = []
    for conn in clients.conns:  # sample the RSS while the clients push
        while not conn.poll(1.0):
            peak = max(peak, rss_mb(pid))
        results.append(conn.recv()[1])
    wall = time.perf_counter() - start
    server_cpu = cpu_of(pid) - cpu0
    peak = max(peak, rss_mb(pid))
    after = None
    if args.prometheus:  # the sockets still open; every process's tallies flushed (~1 s)
        time.sleep(1.5)
        after = scrape(args.scrape_url)
    clients.same("close")
    time.sleep(args.settle)

    latencies = [x for r in results for x in r["latencies"]]
    firsts = [x for r in results for x in r["first_latencies"]]
    by_method = {}
    for r in results:
        for m, values in r["by_method"].items():
            by_method.setdefault(m, []).extend(values)
    errors = {}
    for r in results:
        for k, v in r["errors"].items():
            errors[k] = errors.get(k, 0) + v
    if not heard:
        errors["session.opened not heard by the agent"] = 1
    if args.dump:
        with open(args.dump, "a") as f:
            for r in results:
                f.writelines(f"{n},{t - start:.4f},{lat * 1000:.2f},{m}\n"
                             for t, lat, m in r["samples"])
    sent = sum(r["sent"] for r in results)
    received = sum(r["received"] for r in results)
    row = {
        "sessions": n, "agent_sockets": sum(agents), "sent": sent, "received": received,
        "lost": sent - received - sum(v for k, v in errors.items() if k.startswith("agent -")),
        "answers": f"{sum(r['answers'] for r in results)}/"
                   f"{sum(r['expected_answers'] for r in results)}",
        "errors": errors,
        "p50": pct(latencies, 50) * 1000, "p95": pct(latencies, 95) * 1000,
        "p99": pct(latencies, 99) * 1000,
        "max": max(latencies) * 1000 if latencies else float("nan"),
        "p99_by_method": {m: pct(v, 99) * 1000 for m, v in sorted(by_method.items())},
        "first_p99": pct(firsts, 99) * 1000, "open_s": t_open, "inits_s": t_inits, "init_p50": pct(inits, 50) * 1000,
        "init_p99": pct(inits, 99) * 1000,
        "server_cpu": server_cpu / wall, "client_cpu": sum(r["cpu"] for r in results) / wall,
        "late_p99": max(r["lateness_p99"] for r in results) * 1000,
        "rss_before": rss_before, "rss_during": peak, "rss_after": rss_mb(pid),
        "memory_map": memory_map(pid),
    }
    if after is not None:
        row["prom"] = prom_round(before, after)
    return row


def run(args, servers, agent_key, tokens):
    pid = [server.proc.pid for server in servers]
    clients = Clients(args.clients, [server.port for server in servers], agent_key)
    try:
        print("warm-up: 10 sessions for 3 s ...", flush=True)
        soak_round(clients, pid, tokens[:10], min(10, args.agent_sockets), args, 3, 30)
        baseline = rss_mb(pid)
        print(f"baseline RSS {baseline:.1f} MB: {memory_map(pid)}", flush=True)
        profiler = Profiler(args.py_spy, args.profile_dir, servers)
        rows = []
        for r in range(args.rounds):
            mine = tokens[10 + r * args.sessions:10 + (r + 1) * args.sessions]
            print(f"round {r + 1}: {args.sessions} sessions x {args.rate} msg/s for "
                  f"{args.seconds} s ...", flush=True)
            profiler.start(f"soak-{args.sessions}-r{r + 1}")
            row = soak_round(clients, pid, mine, args.agent_sockets, args, args.seconds,
                             args.timeout)
            profiler.stop()
            rows.append(row)
            print(f"  {fmt_row(r + 1, row)}", flush=True)
            print(f"  memory after close: {row['memory_map']}", flush=True)
            print("  p99 by method: " + ", ".join(
                f"{m} {v:.1f} ms" for m, v in row["p99_by_method"].items()), flush=True)
            if "prom" in row:
                print("  " + fmt_prom(row).replace("\n", "\n  "), flush=True)
        return baseline, rows
    finally:
        clients.stop()


def fmt_row(r, row):
    return (f"| {r} | {row['open_s']:.1f} | {row['init_p50']:.0f} / {row['init_p99']:.0f} | "
            f"{row['first_p99']:.0f} | "
            f"{row['sent']} | {row['p50']:.1f} | {row['p95']:.1f} | {row['p99']:.1f} | "
            f"{row['max']:.1f} | {row['lost']} | {row['answers']} | "
            f"{', '.join(f'{k}: {v}' for k, v in sorted(row['errors'].items())) or 0} | "
            f"{row['server_cpu']:.0%} / {row['client_cpu']:.0%} | {row['late_p99']:.1f} | "
            f"{row['rss_before']:.1f} / {row['rss_during']:.1f} / {row['rss_after']:.1f} |")


HEADER = ["| round | open storm s | init p50 / p99 ms | first renders p99 ms | pushes | "
          "p50 ms | p95 ms | "
          "p99 ms | max ms | lost | answers | errors | CPU server / clients | "
          "client late p99 ms | RSS before / peak / after close MB |",
          "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---|"]


def report(args, baseline, rows):
    target = 50.0 if args.sessions <= 300 else 100.0
    lines = [f"{args.sessions} sessions ({rows[0]['agent_sockets']} agent sockets) x "
             f"{args.rate} msg/s for {args.seconds} s, {args.rounds} rounds, settle "
             f"{args.settle} s, {args.servers} server and {args.clients} client processes, "
             f"{os.cpu_count()} CPUs (server CPU and RSS: all servers added up); "
             f"baseline RSS {baseline:.1f} MB; load average {os.getloadavg()[0]:.1f}", "",
             *HEADER]
    lines += [fmt_row(r + 1, row) for r, row in enumerate(rows)]
    for r, row in enumerate(rows):
        if "prom" in row:
            lines += ["", f"round {r + 1}: {fmt_prom(row)}"]
    worst = max(row["p99"] for row in rows)
    errors = sum(sum(row["errors"].values()) + row["lost"] for row in rows)
    final = rows[-1]["rss_after"]
    checks = [
        (f"steady p99 < {target:.0f} ms in every round", worst < target,
         f"worst {worst:.1f} ms"),
        ("no error, nothing lost", errors == 0, f"{errors}"),
        ("RSS after close within 10% of baseline", final <= baseline * 1.10,
         f"{final:.1f} MB vs {baseline:.1f} MB ({(final / baseline - 1):+.1%})"),
    ]
    lines.append("")
    for name, ok, detail in checks:
        lines.append(f"{'PASS' if ok else 'FAIL'}  {name}: {detail}")
    lines.append(f"(open storm, not a target: worst {max(r['open_s'] for r in rows):.1f} s, "
                 f"init p99 {max(r['init_p99'] for r in rows):.0f} ms, the sessions' first "
                 f"two renders p99 {max(r['first_p99'] for r in rows):.0f} ms)")
    return "\n".join(lines), all(ok for _, ok, _ in checks)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sessions", type=int, default=300)
    parser.add_argument("--rate", type=float, default=1.0, help="pushes per session per second")
    parser.add_argument("--seconds", type=int, default=180)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--clients", type=int, default=2, help="load client processes")
    parser.add_argument("--allocator", choices=("malloc", "pymalloc"), default="malloc",
                        help="the servers' allocator (a2ui_serve --allocator)")
    parser.add_argument("--servers", type=int, default=1,
                        help="Daphne processes; client c uses server c %% servers")
    parser.add_argument("--agent-sockets", type=int,
                        help="agent sockets (of the one bench agent); default one per session")
    parser.add_argument("--settle", type=float, default=10.0,
                        help="idle seconds after the sockets close before reading the RSS")
    parser.add_argument("--quick", action="store_true",
                        help="50 sessions, 20 s, 2 rounds, settle 5 s (make bench)")
    parser.add_argument("--strict", action="store_true",
                        help="exit with status 1 when a target is missed")
    parser.add_argument("--timeout", type=float, default=120.0,
                        help="seconds to wait for the open storm, and for a round's last "
                             "pushes and answers")
    parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/a2ui_bench")
    parser.add_argument("--redis-port", type=int, default=6379)
    parser.add_argument("--redis-db", type=int, default=7,
                        help="Redis database for the bench (flushed); 8-15 are the tests'")
    parser.add_argument("--py-spy", help="path of py-spy: profile the Daphne process per round")
    parser.add_argument("--profile-dir", default="bench/profiles")
    parser.add_argument("--prometheus", action="store_true",
                        help="the servers with the Prometheus metrics on (A2UI_PROMETHEUS=1), "
                             "sharing a fresh multiprocess directory; each round's scrape of "
                             "/a2ui/metrics is printed beside the bench's own counts")
    parser.add_argument("--dump", help="append every push (sessions, send time from the "
                                       "round's start, latency ms, method) to this CSV file")
    args = parser.parse_args()
    if args.quick:
        args.sessions, args.seconds, args.rounds, args.settle = 50, 20, 2, 5.0
    args.agent_sockets = args.agent_sockets or args.sessions
    if args.clients % args.servers:
        parser.error("--clients must be a multiple of --servers (an even share each)")

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE,
                       (min(hard, max(soft, 4 * args.sessions + 1024)), hard))
    env = server_env(args.database_url, f"redis://127.0.0.1:{args.redis_port}/{args.redis_db}")
    prepare_database(args.database_url, env)
    agent_key, tokens = make_fixtures(10 + args.sessions * args.rounds)
    env.pop("PYTHONMALLOC", None)  # a2ui_serve --allocator decides
    prom_dir = None
    if args.prometheus:
        prom_dir = tempfile.mkdtemp(prefix="a2ui-bench-prom-")
        env.update(A2UI_PROMETHEUS="1", A2UI_PROMETHEUS_MULTIPROC_DIR=prom_dir)
    servers = [serve(f"a2ui{i}", env, args.allocator) for i in range(args.servers)]
    try:
        for server in servers:
            server.wait_ready()
        args.scrape_url = f"http://{HOST}:{servers[0].port}/a2ui/metrics"
        print(f"a2ui on {len(servers)} Daphne process(es) (manage.py a2ui_serve --allocator "
              f"{args.allocator}) "
              f"{', '.join(f':{s.port} pid {s.proc.pid}' for s in servers)}, "
              f"{os.cpu_count()} CPUs, {args.clients} client processes", flush=True)
        baseline, rows = run(args, servers, agent_key, tokens)
    finally:
        for server in servers:
            server.stop()
        if prom_dir:
            shutil.rmtree(prom_dir, ignore_errors=True)
    text, ok = report(args, baseline, rows)
    print()
    print(text)
    return 0 if ok or not args.strict else 1


if __name__ == "__main__":
    sys.exit(main())
