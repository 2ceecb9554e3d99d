"""Agent-to-user push throughput and latency, beside two echo baselines. Not a test.

    python bench/bench_push.py [--sessions 1,100,1000] [--messages 20000] [--steady-seconds 20]

One run starts, on 127.0.0.1 only:

(a) a bare ``websockets`` echo server (this script re-run with ``--serve-ws-echo``);
(b) a bare Channels echo consumer served by Daphne (``bench/echo_asgi.py``);
(c) our server on Daphne + Redis + PostgreSQL (database ``a2ui_bench``, created with
    ``createdb`` if absent and migrated; Redis database ``--redis-db``, flushed).

This process is the load client (asyncio, ``websockets``); the servers are other processes.
For each session count S it measures, with the same closed loop for all three:

* echo: S connections, each keeping ``window`` messages in flight; a message carries its send
  time (``perf_counter``) and the round trip is timed when the echo comes back;
* push: S user sockets with initialized sessions and ``--agents`` agent sockets; the agent
  sends ``ui.progress`` notifications (the send time in ``value``) round-robin to the sessions,
  each session keeping ``window`` messages in flight, and the latency is taken when the user
  socket receives the message (agent send -> server [-> Redis PUBLISH -> server] -> user; the
  bracket is skipped by direct delivery when the session's sockets are all in the agent's
  process: ``--direct off`` or ``--procs 2`` measure the published path).

Then the steady scenario: S sessions each receiving one message per second, evenly spread, for
``--steady-seconds``: p50/p99 latency. Loops are bounded by message counts and deadlines.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import math
import os
import resource
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HOST = "127.0.0.1"
PAD = "x" * 180  # a frame of about 300 bytes, like the channels-facts measurements
CONNECT_CONCURRENCY = 50


# Servers ---------------------------------------------------------------------------------------


def free_port():
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


class Proc:
    def __init__(self, name, argv, env, port):
        self.name, self.port = name, port
        self.log = tempfile.NamedTemporaryFile(prefix=f"bench-{name}-", suffix=".log",
                                               delete=False)
        self.proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=self.log,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    def wait_ready(self, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit(f"{self.name} exited early:\n{Path(self.log.name).read_text()}")
            try:
                with socket.create_connection((HOST, self.port), timeout=0.5):
                    return self
            except OSError:
                time.sleep(0.05)
        said = Path(self.log.name).read_text()  # before stop() removes the log
        self.stop()
        raise SystemExit(f"{self.name} not listening after {timeout} s:\n{said}")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self.log.close()
        if os.environ.get("BENCH_KEEP_LOGS"):
            print(f"{self.name} log: {self.log.name}", flush=True)
        else:
            os.unlink(self.log.name)


def daphne(name, app, env):
    port = free_port()
    argv = [sys.executable, "-m", "daphne", "-v", "0", "-b", HOST, "-p", str(port), app]
    return Proc(name, argv, env, port)


async def serve_ws_echo(port):
    from websockets.asyncio.server import serve

    async def echo(ws):
        async for message in ws:
            await ws.send(message)

    async with serve(echo, HOST, port, max_size=2**20, compression=None) as server:
        await server.serve_forever()


# Database and fixtures ---------------------------------------------------------------------------


#: One bench account and one address open thousands of sockets and MCP sessions: the caps
#: (docs/operations.md, "Caps") are lifted for the servers under test.
NO_CAPS = {f"A2UI_CAP_{name}": "1000000" for name in (
    "MCP_SESSIONS_PER_PERSON", "MCP_SESSIONS_PER_AGENT_KEY", "SOCKETS_PER_PERSON",
    "AGENT_SOCKETS_PER_AGENT_KEY", "STREAMS_PER_PERSON", "RUNS_PER_PERSON", "PER_ADDRESS")}


def server_env(database_url, redis_url, layer="pubsub", direct="on"):
    """The servers' environment (also set in this process, which creates the fixtures).

    Redis database ``redis_url`` is flushed: it must be the bench's own.
    """
    env = dict(os.environ)
    env.update(
        DATABASE_URL=database_url, REDIS_URL=redis_url,
        DJANGO_SECRET_KEY=os.environ.get("DJANGO_SECRET_KEY") or secrets.token_urlsafe(50),
        DJANGO_SETTINGS_MODULE="a2ui_project.settings", A2UI_LOG_LEVEL="WARNING",
        DB_POOL_MAX="10", PYTHONUNBUFFERED="1", A2UI_CHANNEL_LAYER=layer,
        A2UI_DIRECT_DELIVERY="1" if direct == "on" else "0", **NO_CAPS,
    )
    os.environ.update(env)
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    import redis

    redis.Redis.from_url(redis_url).flushdb()
    return env


def django_on(database_url, name):
    """Django set up in this process on ``database_url`` (created and migrated if need be), for
    the benches that call the services directly; ``name`` marks the throwaway secret key."""
    import uuid

    os.environ["DATABASE_URL"] = database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "a2ui_project.settings")
    os.environ.setdefault("DJANGO_SECRET_KEY", f"bench-{name}-" + uuid.uuid4().hex)
    prepare_database(database_url, dict(os.environ))
    import django

    django.setup()


def prepare_database(db_url, env):
    from urllib.parse import urlsplit

    parts = urlsplit(db_url)
    name = parts.path.lstrip("/")
    pg = ["-h", parts.hostname or HOST, "-p", str(parts.port or 5432), "-U",
          parts.username or "postgres"]
    exists = subprocess.run(
        ["psql", *pg, "-d", "postgres", "-tAc", f"SELECT 1 FROM pg_database WHERE datname='{name}'"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()
    if exists != "1":
        subprocess.run(["createdb", *pg, name], check=True)
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env,
                   check=True)


def make_fixtures(n_tokens):
    """A bench user and agent (no session limit), n stream tokens; old bench sessions removed."""
    import django

    django.setup()
    from django.contrib.auth import get_user_model

    from a2ui import tokens
    from a2ui.models import A2UISessionLog, Agent, StreamToken

    user, _ = get_user_model().objects.get_or_create(username="bench-user")
    Agent.objects.filter(name="bench-agent").delete()
    agent, key = tokens.create_agent("bench-agent", display_name="Bench agent")
    agent.max_concurrent_sessions = 1_000_000
    agent.save(update_fields=["max_concurrent_sessions"])
    A2UISessionLog.objects.filter(user=user).delete()
    StreamToken.objects.filter(user=user).delete()
    toks = [tokens.issue_stream_token(user, agent).token for _ in range(n_tokens)]
    return key, toks


# Statistics ------------------------------------------------------------------------------------


def pct(values, p):
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, max(0, math.ceil(p / 100 * len(values)) - 1))]


class Result:
    def __init__(self, label, sessions, count, elapsed, latencies, lost=0):
        self.label, self.sessions, self.count = label, sessions, count
        self.rate = count / elapsed if elapsed > 0 else float("nan")
        self.p50 = pct(latencies, 50) * 1000
        self.p99 = pct(latencies, 99) * 1000
        self.max = max(latencies) * 1000 if latencies else float("nan")
        self.lost = lost


async def connect_retrying(url, timeout=60, attempts=6):
    """A WebSocket whose handshake is retried, with backoff, when the server drops it.

    Daphne closes a connection whose application has not accepted it within its connect
    timeout (5 s): on a busy machine some of a thousand handshakes are dropped that way, before
    any state is made on the server. Other failures are raised.
    """
    from websockets.asyncio.client import connect
    from websockets.exceptions import InvalidMessage

    for attempt in range(attempts):
        try:
            return await connect(url, max_size=2**21, compression=None, open_timeout=timeout,
                                 ping_interval=None)
        except (InvalidMessage, ConnectionResetError, TimeoutError):
            if attempt == attempts - 1:
                raise
            await asyncio.sleep(0.2 * 2**attempt)


async def open_session(url, timeout=60):
    """One user socket and its ``a2ui.init``, sent as soon as the socket is open.

    The server closes a socket that has not sent ``a2ui.init`` within its handshake deadline
    (30 s, close code 4000): opening every socket first and initializing them afterwards loses
    the first ones on a busy machine. Connect and init are one step here.
    """
    ws = await connect_retrying(url, timeout)
    await ws.send(json.dumps({
        "jsonrpc": "2.0", "id": 1, "method": "a2ui.init",
        "params": {"client_info": {"name": "bench", "version": "1"}}}))
    reply = json.loads(await asyncio.wait_for(ws.recv(), timeout))
    if "result" not in reply:
        raise RuntimeError(f"a2ui.init refused: {reply}")
    return ws, reply["result"]["session_id"]


async def open_sessions(urls, concurrency=20, batch=200):
    """User sockets with initialized sessions: in batches of ``batch``, ``concurrency`` at once.

    A batch is open and initialized before the next starts, so no socket waits for its init
    behind thousands of handshakes.
    """
    sem = asyncio.Semaphore(concurrency)

    async def one(url):
        async with sem:
            return await open_session(url)

    pairs = []
    for start in range(0, len(urls), batch):
        pairs += await asyncio.gather(*(one(u) for u in urls[start:start + batch]))
    return [ws for ws, _ in pairs], [sid for _, sid in pairs]


# Load: echo ------------------------------------------------------------------------------------


async def open_many(urls, headers=None):
    from websockets.asyncio.client import connect

    sem = asyncio.Semaphore(CONNECT_CONCURRENCY)

    async def one(url):
        async with sem:
            return await connect(url, additional_headers=headers or {}, max_size=2**21,
                                 compression=None, open_timeout=60, ping_interval=None)

    return await asyncio.gather(*(one(u) for u in urls))


async def echo_run(label, conns, total, window, timeout):
    """Closed loop: each connection keeps ``window`` messages in flight until its quota."""
    quota = max(1, total // len(conns))
    latencies = []
    loop = asyncio.get_running_loop()

    async def drive(ws):
        sent = 0

        async def send():
            nonlocal sent
            sent += 1
            await ws.send(json.dumps({"t": time.perf_counter(), "pad": PAD}))

        for _ in range(min(window, quota)):
            await send()
        for _ in range(quota):
            msg = json.loads(await ws.recv())
            latencies.append(time.perf_counter() - msg["t"])
            if sent < quota:
                await send()

    start = loop.time()
    tasks = [asyncio.ensure_future(drive(ws)) for ws in conns]
    done, pending = await asyncio.wait(tasks, timeout=timeout)
    for t in pending:
        t.cancel()
    elapsed = loop.time() - start
    lost = quota * len(conns) - len(latencies)
    if pending:  # the connections are unusable now (messages in flight): report and stop
        raise SystemExit(f"{label}: {lost} echoes missing after {timeout}s")
    for t in done:
        t.result()
    return Result(label, len(conns), len(latencies), elapsed, latencies, lost)


# Load: push ------------------------------------------------------------------------------------


class PushRig:
    """User sockets with sessions, agent sockets, and per-session receive loops."""

    def __init__(self, users, sids, agents):
        self.users, self.sids, self.agents = users, sids, agents
        self.latencies = []
        self.timeline = []
        self.on_message = None
        self.readers = []

    @classmethod
    async def open(cls, servers, token_list, agent_key, n_agents):
        # Users spread over all servers, then agents on the first (opened last: an agent
        # socket idle through a thousand slow handshakes may be closed before the load).
        urls = [f"ws://{HOST}:{servers[i % len(servers)].port}/ws/v4/a2ui?token={t}"
                for i, t in enumerate(token_list)]
        users, sids = await open_sessions(urls)
        agents = await open_many([f"ws://{HOST}:{servers[0].port}/ws/v4/a2ui/agent"] * n_agents,
                                 headers={"Authorization": f"Bearer {agent_key}"})
        rig = cls(users, sids, agents)
        rig.readers = [asyncio.ensure_future(rig._read_user(i)) for i in range(len(users))]
        rig.readers += [asyncio.ensure_future(rig._drain(ws)) for ws in agents]
        return rig

    async def _drain(self, ws):
        async for _ in ws:  # session.opened events and the like
            pass

    async def _read_user(self, i):
        async for raw in self.users[i]:
            now = time.perf_counter()
            msg = json.loads(raw)
            if msg.get("method") != "ui.progress":
                continue
            self.latencies.append(now - msg["params"]["value"])
            self.timeline.append((msg["params"]["value"], now - msg["params"]["value"]))
            if self.on_message is not None:
                self.on_message(i)

    def push(self, i):
        ws = self.agents[i % len(self.agents)]
        return ws.send(json.dumps({"jsonrpc": "2.0", "method": "ui.progress", "params": {
            "session_id": self.sids[i], "task_id": "bench", "progress_type": "determinate",
            "value": time.perf_counter(), "total": 1, "message": PAD}}))

    async def close(self):
        for t in self.readers:
            t.cancel()
        await asyncio.gather(*(ws.close() for ws in self.users + self.agents),
                             return_exceptions=True)


async def push_run(rig, n_sessions, total, window, timeout):
    quota = max(1, total // n_sessions)
    loop = asyncio.get_running_loop()
    sent = [0] * n_sessions
    got = [0] * n_sessions
    expected = quota * n_sessions
    finished = loop.create_future()
    received = 0
    sends = set()

    def send(i):
        sent[i] += 1
        task = asyncio.ensure_future(rig.push(i))
        sends.add(task)
        task.add_done_callback(sends.discard)

    def on_message(i):
        nonlocal received
        got[i] += 1
        received += 1
        if sent[i] < quota:
            send(i)
        if received >= expected and not finished.done():
            finished.set_result(None)

    rig.latencies = []
    rig.on_message = on_message
    start = loop.time()
    for i in range(n_sessions):
        for _ in range(min(window, quota)):
            send(i)
    try:
        await asyncio.wait_for(asyncio.shield(finished), timeout)
    except TimeoutError:
        pass
    elapsed = loop.time() - start
    rig.on_message = None
    latencies = rig.latencies
    return Result("push", n_sessions, len(latencies), elapsed, latencies,
                  lost=expected - len(latencies))


async def steady_run(rig, n_sessions, seconds, timeout):
    """Each session gets one message per second, phases spread evenly over the second."""
    loop = asyncio.get_running_loop()
    rig.latencies = []
    rig.timeline = []
    rig.on_message = None
    start = loop.time() + 0.5
    schedule = sorted((start + k + i / n_sessions, i) for k in range(seconds)
                      for i in range(n_sessions))
    # The load client's own garbage collector would stall every socket it reads: keep it out
    # of the measurement (the servers keep theirs).
    gc.collect()
    gc.disable()
    for due, i in schedule:
        delay = due - loop.time()
        if delay > 0:
            await asyncio.sleep(delay)
        await rig.push(i)
    expected = len(schedule)
    deadline = loop.time() + timeout
    while len(rig.latencies) < expected and loop.time() < deadline:
        await asyncio.sleep(0.05)
    gc.enable()
    lat = rig.latencies
    slow = sorted(rig.timeline)
    if slow:
        t0 = slow[0][0]
        stalls = {}
        for sent, latency in slow:
            if latency > 0.020:
                bucket = round(sent - t0, 1)
                stalls[bucket] = max(stalls.get(bucket, 0), round(latency * 1000))
        print(f"  messages over 20 ms: {sum(1 for _, v in slow if v > 0.020)}; worst per "
              f"0.1 s of send time (s: ms): {dict(list(stalls.items())[:40])}", flush=True)
    return Result("steady 1 msg/s", n_sessions, len(lat), seconds, lat,
                  lost=expected - len(lat))


# Profiling -------------------------------------------------------------------------------------


def redis_calls(redis_url):
    """{command: calls} from Redis INFO commandstats (all databases of the server)."""
    import redis

    stats = redis.Redis.from_url(redis_url).info("commandstats")
    return {k.removeprefix("cmdstat_"): v["calls"] for k, v in stats.items()}


def calls_per_message(before, after, messages):
    diff = {k: after.get(k, 0) - before.get(k, 0) for k in after}
    return {k: round(v / messages, 2) for k, v in sorted(diff.items(), key=lambda kv: -kv[1])
            if v / messages >= 0.05}


class Profiler:
    """``py-spy record`` (collapsed stacks) of our Daphne processes during the measured pushes."""

    def __init__(self, py_spy, out_dir, servers):
        self.py_spy, self.out_dir, self.servers = py_spy, Path(out_dir), servers
        self.procs = []

    def start(self, tag):
        if not self.py_spy:
            return
        self.out_dir.mkdir(parents=True, exist_ok=True)
        for s in self.servers:
            out = self.out_dir / f"{tag}-{s.name}.txt"
            self.procs.append(subprocess.Popen(
                [self.py_spy, "record", "--pid", str(s.proc.pid), "--rate", "250", "--format",
                 "raw", "--nonblocking", "--idle", "-o", str(out)],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))

    def stop(self):
        for p in self.procs:
            p.send_signal(signal.SIGINT)
        for p in self.procs:
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                p.kill()
        self.procs = []


# Main ------------------------------------------------------------------------------------------


def window_for(n, in_flight):
    return max(1, math.ceil(in_flight / n))


async def run_all(args, ws_echo, ch_echo, ours, agent_key, token_list):
    counts = args.sessions
    biggest = max(counts + ([args.steady_sessions] if args.steady_seconds > 0 else []))
    rows = []
    print(f"opening {biggest} connections to each server ...", flush=True)
    ws_conns = await open_many([f"ws://{HOST}:{ws_echo.port}/"] * biggest)
    ch_conns = await open_many([f"ws://{HOST}:{ch_echo.port}/ws/echo"] * biggest)
    rig = await PushRig.open(ours, token_list[:biggest], agent_key, args.agents)
    profiler = Profiler(args.py_spy, args.profile_dir, ours)
    for n in counts:
        window = window_for(n, args.in_flight)
        total = max(args.messages, n * window)
        res = {}
        for label, conns in (("websockets echo", ws_conns), ("Channels echo", ch_conns)):
            await echo_run(label, conns[:n], min(total, 2000), window, args.timeout)  # warm-up
            res[label] = await echo_run(label, conns[:n], total, window, args.timeout)
        await push_run(rig, n, min(total, 2000), window, args.timeout)  # warm-up
        profiler.start(f"push-{n}")
        before = redis_calls(args.redis_url)
        res["push"] = await push_run(rig, n, total, window, args.timeout)
        redis_per_msg = calls_per_message(before, redis_calls(args.redis_url), res["push"].count)
        profiler.stop()
        rows.append((n, window, res))
        r = res["push"]
        print(f"  {n:>5} sessions (window {window}): ws echo {res['websockets echo'].rate:,.0f}/s, "
              f"Channels echo {res['Channels echo'].rate:,.0f}/s, push {r.rate:,.0f}/s "
              f"p50 {r.p50:.1f} ms p99 {r.p99:.1f} ms lost {r.lost}", flush=True)
        print(f"        Redis commands per pushed message: {redis_per_msg}", flush=True)
    steady = None
    if args.steady_seconds > 0:
        n = args.steady_sessions
        print(f"steady: {n} sessions x 1 msg/s for {args.steady_seconds}s ...", flush=True)
        profiler.start(f"steady-{n}")
        steady = await steady_run(rig, n, args.steady_seconds, args.timeout)
        profiler.stop()
    for ws in ws_conns + ch_conns:
        await ws.close()
    await rig.close()
    return rows, steady


def report(rows, steady, args):
    lines = []
    lines.append("| sessions | in flight/session | websockets echo msg/s (p50/p99 ms) | "
                 "Channels echo msg/s (p50/p99 ms) | push msg/s | push p50 / p99 / max ms | "
                 "push / Channels echo | push / websockets echo | lost |")
    lines.append("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n, window, res in rows:
        w, c, p = res["websockets echo"], res["Channels echo"], res["push"]
        lines.append(
            f"| {n} | {window} | {w.rate:,.0f} ({w.p50:.1f}/{w.p99:.1f}) | "
            f"{c.rate:,.0f} ({c.p50:.1f}/{c.p99:.1f}) | {p.rate:,.0f} | "
            f"{p.p50:.1f} / {p.p99:.1f} / {p.max:.1f} | {p.rate / c.rate:.0%} | "
            f"{p.rate / w.rate:.0%} | {p.lost} |"
        )
    if steady is not None:
        lines.append("")
        lines.append(
            f"steady: {steady.sessions} sessions x 1 msg/s for {args.steady_seconds}s: "
            f"{steady.count} messages, p50 {steady.p50:.1f} ms, p99 {steady.p99:.1f} ms, "
            f"max {steady.max:.1f} ms, lost {steady.lost}"
        )
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sessions", default="1,100,1000",
                        type=lambda s: [int(x) for x in s.split(",")])
    parser.add_argument("--messages", type=int, default=20000,
                        help="messages per measured throughput run")
    parser.add_argument("--in-flight", type=int, default=100,
                        help="messages in flight overall (window per session = this / sessions)")
    parser.add_argument("--agents", type=int, default=4, help="agent sockets")
    parser.add_argument("--procs", type=int, default=1, help="Daphne processes for our server")
    parser.add_argument("--steady-sessions", type=int, default=1000)
    parser.add_argument("--steady-seconds", type=int, default=20)
    parser.add_argument("--timeout", type=float, default=120.0,
                        help="seconds a run may take before it is reported as lost")
    parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/a2ui_bench")
    parser.add_argument("--redis-port", type=int, default=6379,
                        help="port of the Redis server (e.g. one of your own)")
    parser.add_argument("--redis-db", type=int, default=7,
                        help="Redis database for the bench (flushed); 8-15 are the tests'")
    parser.add_argument("--layer", choices=["core", "pubsub"], default="pubsub",
                        help="channels-redis layer of our server (A2UI_CHANNEL_LAYER)")
    parser.add_argument("--direct", choices=["on", "off"], default="on",
                        help="direct delivery (A2UI_DIRECT_DELIVERY); off: every push is "
                             "published through the channel layer")
    parser.add_argument("--py-spy", help="path of py-spy: profile our Daphne process(es)")
    parser.add_argument("--profile-dir", default="bench/profiles",
                        help="where --py-spy writes collapsed stacks")
    parser.add_argument("--serve-ws-echo", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.serve_ws_echo:
        asyncio.run(serve_ws_echo(args.serve_ws_echo))
        return

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(hard, max(soft, 8 * max(args.sessions + [args.steady_sessions]) + 1024))
    resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))

    redis_url = args.redis_url = f"redis://{HOST}:{args.redis_port}/{args.redis_db}"
    env = server_env(args.database_url, redis_url, args.layer, args.direct)
    prepare_database(args.database_url, env)
    biggest = max(args.sessions + [args.steady_sessions])
    agent_key, token_list = make_fixtures(biggest)

    ws_port = free_port()
    servers = [Proc("ws-echo", [sys.executable, __file__, "--serve-ws-echo", str(ws_port)], env,
                    ws_port)]
    servers.append(daphne("channels-echo", "bench.echo_asgi:application", env))
    ours = [daphne(f"a2ui-{i}", "a2ui_project.asgi:application", env) for i in range(args.procs)]
    servers += ours
    try:
        for s in servers:
            s.wait_ready()
        print(f"servers: websockets echo :{servers[0].port}, Channels echo :{servers[1].port}, "
              f"a2ui {[s.port for s in ours]} ({args.procs} Daphne process(es), layer "
              f"{args.layer}, direct delivery {args.direct}); "
              f"{os.cpu_count()} CPUs", flush=True)
        rows, steady = asyncio.run(
            run_all(args, servers[0], servers[1], ours, agent_key, token_list)
        )
    finally:
        for s in servers:
            s.stop()
    print()
    print(report(rows, steady, args))


if __name__ == "__main__":
    main()
