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

The descriptor limits (RLIMIT_NOFILE, soft and, where allowed, hard) are raised for this process
and the server, which inherits them: the server's connection budget is
``a2ui.edge.connection_budget`` of its limit, counted at one descriptor per connection
(bench/capacity_settings.py: 10,000 sockets fit under a hard limit of 20,000).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import signal
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

#: ``--series``: print the RSS and the server's CPU time every second after the close (the CPU
#: from the close to the last reading is printed in any case).
SERIES = False


#: ``--probe FILE``: the server's memory reports (bench/memprobe.py) before and after.
PROBE = None


async def probe(pid, label):
    """Have the server append a memory report to ``PROBE`` (SIGUSR1), and wait for it."""
    if PROBE is None:
        return
    lines = len(PROBE.read_text().splitlines()) if PROBE.exists() else 0
    os.kill(pid, signal.SIGUSR1)
    for _ in range(600):
        await asyncio.sleep(0.1)
        if PROBE.exists() and len(PROBE.read_text().splitlines()) > lines:
            break
    report = json.loads(PROBE.read_text().splitlines()[-1])
    report["label"] = label
    PROBES.append(report)


PROBES = []

#: Objects shown per group of what outlived the sockets.
SAMPLES_SHOWN = 12


def print_probes():
    """What outlived the sockets: malloc's figures and the object types that grew most."""
    if len(PROBES) < 2:
        return
    for report in PROBES:
        m = report["malloc"]
        print(f"  probe {report['label']}: malloc in use {m.get('in_use_mb', 0):.1f} MB, free "
              f"but kept {m.get('free_kept_mb', 0):.1f} MB; {report['gc_objects']} tracked objects")
    first, last = PROBES[0], PROBES[-1]
    if last.get("mappings"):
        kinds = sorted(set(first.get("mappings", {})) | set(last["mappings"]))
        print(f"  resident by mapping, before -> after (threads {first.get('threads')} -> "
              f"{last.get('threads')}): " + ", ".join(
                  f"{k} {first.get('mappings', {}).get(k, 0) / 1024:.1f} -> "
                  f"{last['mappings'].get(k, 0) / 1024:.1f} MB" for k in kinds))
    for report in PROBES:
        if report.get("trim_gave_back_kb") is not None:
            print(f"  probe {report['label']}: one more malloc_trim gave back "
                  f"{report['trim_gave_back_kb'] / 1024:.1f} MB")
    for report in PROBES:
        py = report.get("pymalloc")
        if py:
            print(f"  probe {report['label']}: pymalloc {py['arenas']} arenas of 1 MB, "
                  f"{py['used_mb']:.1f} MB in use, {py['free_in_pools_mb']:.1f} MB free in "
                  f"their pools")
    for big in PROBES[-1].get("big", []):
        print(f"  after: a {big['type']} of {big['len']} held by {big['owners']}, "
              f"e.g. {big['sample']}")
    hollow = PROBES[-1].get("hollow")
    if hollow:
        print(f"  after: containers bigger than their entries need: "
              f"{hollow['total_saved'] / 2**20:.1f} MB a copy of each would give back")
        for h in hollow["containers"][:15]:
            print(f"    {h['saved'] / 1024:8.0f} KB: a {h['type']} of {h['len']} in "
                  f"{h['bytes'] / 1024:.0f} KB held by {h['owners']}, e.g. {h['sample']}")
    pin = PROBES[-1].get("pinning")
    if pin:
        print(f"  pages that held no object before and hold live ones after: "
              f"{pin['new_pages_with_live_objects']} ({pin['sparse_pages']} with 4 or fewer)")
        for g in pin["groups"][:25]:
            print(f"    on {g['pages']:5d} pages ({g['in_sparse_pages']} on sparse ones): "
                  f"{g['objects']:6d} x {g['what']}")
            for sample in g.get("samples", [])[:SAMPLES_SHOWN]:
                print(f"        {sample}")
    traced = PROBES[-1].get("traced_growth")
    if traced:
        print(f"  traced memory grown from before to after: {traced['grown_kb'] / 1024:.1f} MB")
        for t in traced["top"][:30]:
            print(f"    {t['kb']:8.0f} KB {t['blocks']:+7d} blocks: {t['where']}")
    first, last = PROBES[0], PROBES[-1]
    grown = sorted(((n - first["objects"].get(t, 0), t) for t, n in last["objects"].items()),
                   reverse=True)[:15]
    print("  tracked objects grown from before to after: " + ", ".join(
        f"{t} +{n}" for n, t in grown if n > 0))
    regs = [(n - first["registries"].get(k, 0), k, n) for k, n in last["registries"].items()]
    print("  registries grown: " + (", ".join(f"{k} {n}" for d, k, n in sorted(regs, reverse=True)
                                              if d > 0) or "none"))


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


async def open_agui(url, timeout=60):
    """The AG-UI WebSocket: the session opens on connect (CONNECTION_STATUS CONNECTED)."""
    from websockets.asyncio.client import connect

    ws = await connect(url, max_size=2**21, compression=None, open_timeout=timeout,
                       ping_interval=None)
    first = json.loads(await asyncio.wait_for(ws.recv(), timeout))
    if first.get("event", {}).get("status") != "CONNECTED":
        raise RuntimeError(f"AG-UI socket refused: {first}")
    return ws, None


class HttpStream:
    """A raw HTTP/1.1 response held open (an SSE stream): what the client holds idle."""

    def __init__(self, reader, writer, ready=None, on_close=None):
        self.reader, self.writer, self.ready = reader, writer, ready
        self.on_close = on_close

    async def close(self):
        """Close the stream, then ``on_close`` (the MCP client's DELETE, on a connection of its
        own: the stream's descriptor is free by then)."""
        if self.ready is not None:
            self.ready.cancel()
        self.writer.close()
        try:
            await self.writer.wait_closed()
        except OSError:
            pass
        if self.on_close is not None:
            await self.on_close()


async def read_head(reader, writer, first_event, timeout=60):
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout)
    if not head.startswith(b"HTTP/1.1 200"):
        rest = await asyncio.wait_for(reader.read(2000), timeout)
        writer.close()
        raise RuntimeError(f"stream refused: {head[:200]!r} {rest[:300]!r}")
    if first_event:
        await asyncio.wait_for(reader.readuntil(b"\n\n"), timeout)


async def open_stream(port, request, first_event, wait=True):
    """Send ``request`` (bytes), read the head (200 expected) and, with ``first_event``, the
    first SSE event; the stream is left open. ``wait=False``: the head is read in ``ready`` (a
    task: the MCP GET stream's head comes with its first event or keep-alive, 15 s on)."""
    reader, writer = await asyncio.open_connection(HOST, port)
    writer.write(request)
    if not wait:
        return HttpStream(reader, writer, asyncio.ensure_future(
            read_head(reader, writer, first_event)))
    await read_head(reader, writer, first_event)
    return HttpStream(reader, writer)


def http_request(method, path, token, body=None, extra=()):
    data = json.dumps(body).encode() if body is not None else b""
    lines = [f"{method} {path} HTTP/1.1", f"Host: {HOST}", f"Authorization: Bearer {token}",
             "Accept: text/event-stream", *extra]
    if body is not None:
        lines += ["Content-Type: application/json", f"Content-Length: {len(data)}"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + data


async def open_agui1(port, token, k):
    """An AG-UI 1.0 run (POST /api/v4/agui/run): its SSE response, open while the run waits
    for the agent (RUN_STARTED read)."""
    run = f"cap-{k}-{os.urandom(4).hex()}"
    body = {"threadId": run, "runId": run,
            "messages": [{"id": run, "role": "user", "content": "hi"}]}
    return await open_stream(port, http_request("POST", "/api/v4/agui/run", token, body),
                             first_event=True)


MCP_VERSION = "2025-11-25"


async def open_mcp(port, token, k, client):
    """A person's MCP client as it idles (the handshake era): ``initialize`` and
    ``notifications/initialized`` (POSTs over ``client``'s pooled connections), then the GET
    stream of the server's notifications, held open."""
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream",
               "Content-Type": "application/json", "Mcp-Protocol-Version": MCP_VERSION}
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": MCP_VERSION, "clientInfo": {"name": "bench", "version": "1"},
        "capabilities": {}}}
    url = f"http://{HOST}:{port}/mcp"
    r = await client.post(url, json=init, headers=headers)
    sid = r.headers.get("mcp-session-id")
    if r.status_code != 200 or not sid:
        raise RuntimeError(f"MCP initialize refused: {r.status_code} {r.text[:300]}")
    headers["Mcp-Session-Id"] = sid
    r = await client.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                          headers=headers)
    if r.status_code != 202:
        raise RuntimeError(f"MCP notifications/initialized: {r.status_code} {r.text[:300]}")
    extra = (f"Mcp-Session-Id: {sid}", f"Mcp-Protocol-Version: {MCP_VERSION}")
    stream = await open_stream(port, http_request("GET", "/mcp", token, extra=extra),
                               first_event=False, wait=False)

    async def delete():
        """What the SDK's client does when it leaves: the session ends (else it is kept
        ``MCP_SESSION_IDLE_SECONDS``, 300 s, after its GET stream closed)."""
        reader, writer = await asyncio.open_connection(HOST, port)
        writer.write(http_request("DELETE", "/mcp", token, extra=(*extra, "Connection: close")))
        answer = await reader.read()
        writer.close()
        if not answer.startswith(b"HTTP/1.1 200"):
            raise RuntimeError(f"MCP DELETE refused: {answer[:200]!r}")

    stream.on_close = delete
    return stream


#: protocol: (token type, how one idle client is opened: ws path and opener, or a coroutine
#: function (port, token, index[, client])).
PROTOCOLS = {
    "jsonrpc": ("stream_a2ui", ("/ws/v4/a2ui", open_session)),
    "v09": ("stream_a2ui", ("/ws/v09/a2ui", open_v09)),
    "agui": ("stream_agui", ("/ws/agui", open_agui)),
    "agui1": ("stream_agui", open_agui1),
    "mcp": ("stream_mcp", open_mcp),
}
LABELS = {"jsonrpc": "JSON-RPC `/ws/v4/a2ui`", "v09": "v0.9 `/ws/v09/a2ui`",
          "agui": "AG-UI `/ws/agui`", "agui1": "AG-UI 1.0 run SSE `/api/v4/agui/run`",
          "mcp": "MCP GET stream `/mcp`"}


#: Sockets opened and closed per protocol before its "before" reading.
WARM = 50


#: Clients closed at a time: a close may open a connection (the MCP client's DELETE), and
#: 10,000 at once would pass the descriptor limits of this process and of the server.
CLOSE_CONCURRENCY = 200


async def open_idle(port, protocol, toks, concurrency=50, batch=200):
    spec = PROTOCOLS[protocol][1]
    sem = asyncio.Semaphore(concurrency)
    client = None
    if protocol == "mcp":
        import httpx

        client = httpx.AsyncClient(timeout=60, limits=httpx.Limits(
            max_connections=concurrency, max_keepalive_connections=concurrency))

    async def one(k, tok):
        async with sem:
            if isinstance(spec, tuple):
                path, opener = spec
                ws, _ = await opener(f"ws://{HOST}:{port}{path}?token={tok}")
                return ws
            if client is not None:
                return await spec(port, tok, k, client)
            return await spec(port, tok, k)

    conns = []
    try:
        for start in range(0, len(toks), batch):
            conns += await asyncio.gather(*(one(start + i, t)
                                            for i, t in enumerate(toks[start:start + batch])))
        # every stream answered (the MCP GET stream's head comes 15 s on)
        await asyncio.gather(*(c.ready for c in conns if getattr(c, "ready", None)))
    finally:
        if client is not None:
            await client.aclose()
    return conns


async def settle(pid, seconds):
    await asyncio.sleep(seconds)
    return rss_kb(pid)


async def warm_ended(protocol, timeout=180):
    """The warm-up's clients have ended in the server too. An AG-UI 1.0 run goes on
    ``AGUI_RESUME_SECONDS`` (30 s) after its client leaves, then ends (its row, the agent told,
    the stream's last database and Redis calls): that is first use too, and the measured runs
    end the same way after their close."""
    if protocol != "agui1":
        return
    from asgiref.sync import sync_to_async

    from a2ui.models import AgentRun

    running = sync_to_async(AgentRun.objects.filter(status=AgentRun.Status.RUNNING).exists)
    deadline = time.monotonic() + timeout
    while await running():
        if time.monotonic() > deadline:
            print(f"  the warm-up's runs still run after {timeout} s", flush=True)
            return
        await asyncio.sleep(1)


async def measure(server, protocol, toks, settle_seconds, after_seconds):
    pid = server.proc.pid
    warm, toks = toks[:WARM], toks[WARM:]  # first use (imports, caches) is not per socket
    await asyncio.gather(*(ws.close() for ws in await open_idle(server.port, protocol, warm)))
    await warm_ended(protocol)
    before = await settle(pid, settle_seconds + 6)  # the warm-up's collection (services.memory)
    await probe(pid, "before")
    t0 = time.monotonic()
    conns = await open_idle(server.port, protocol, toks)
    opened = time.monotonic() - t0
    at = await settle(pid, settle_seconds)
    cpu0 = cpu_seconds(pid)
    t0 = time.monotonic()
    closing = asyncio.Semaphore(CLOSE_CONCURRENCY)

    async def close(conn):
        async with closing:
            await conn.close()

    closed = await asyncio.gather(*(close(c) for c in conns), return_exceptions=True)
    failed = [r for r in closed if isinstance(r, BaseException)]
    if failed:
        print(f"  {len(failed)} of {len(conns)} closes failed, e.g. {failed[0]!r}", flush=True)
    # The process collects 5 s after the last close (a2ui.infra.memory): the RSS is read
    # every second until ``after_seconds`` after the close; the last reading is published.
    series = []
    while time.monotonic() - t0 < after_seconds:
        await asyncio.sleep(1)
        series.append((time.monotonic() - t0, rss_kb(pid)))
        if SERIES:
            print(f"  {series[-1][0]:5.0f} s after close: RSS {series[-1][1] / 1024:7.1f} MB, "
                  f"server CPU {cpu_seconds(pid):7.1f} s", flush=True)
    cpu1 = cpu_seconds(pid)
    await probe(pid, "after")
    after = series[-1][1]
    back = next((t for t, kb in series if kb <= 1.10 * before), None)
    return {"protocol": protocol, "sockets": len(conns), "before_kb": before, "at_kb": at,
            "after_kb": after, "kb_per_socket": per_socket(before, at, len(conns)),
            "return_ratio": after / before, "open_seconds": opened, "back_seconds": back,
            "after_seconds": series[-1][0], "peak_after_kb": max(kb for _, kb in series),
            "close_cpu": cpu1 - cpu0}


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


def issue_tokens(token_type, n):
    """``n`` stream tokens of ``token_type`` for the bench user and agent (one INSERT)."""
    import uuid
    from datetime import timedelta

    from django.contrib.auth import get_user_model
    from django.core import signing
    from django.utils import timezone

    from a2ui import tokens
    from a2ui.conf import a2ui_settings
    from a2ui.models import Agent, StreamToken

    user = get_user_model().objects.get(username="bench-user")
    agent = Agent.objects.get(name="bench-agent")
    now = timezone.now()
    rows = [StreamToken(jti=uuid.uuid4(), user=user, agent=agent, token_type=token_type,
                        issued_at=now, expires_at=now + timedelta(
                            minutes=a2ui_settings.STREAM_TOKEN_EXPIRE_MINUTES))
            for _ in range(n)]
    StreamToken.objects.bulk_create(rows, batch_size=2000)
    salt = tokens._salt(token_type)
    return [signing.dumps({"jti": r.jti.hex, "typ": token_type}, salt=salt, compress=False)
            for r in rows]


def main():
    import logging

    logging.getLogger("httpx").setLevel(logging.WARNING)
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sockets", type=int, default=200)
    parser.add_argument("--protocols", default="jsonrpc,v09,agui,agui1,mcp",
                        type=lambda s: [p for p in s.split(",") if p])
    parser.add_argument("--allocator", choices=["malloc", "pymalloc", "jemalloc"],
                        default="malloc", help="the server's (a2ui_serve --allocator)")
    parser.add_argument("--settle", type=float, default=3.0, help="seconds before each RSS read")
    parser.add_argument("--after", type=float, default=20.0,
                        help="seconds after the close of the last reading of RSS")
    parser.add_argument("--probe", metavar="FILE",
                        help="memory reports of the server before and after (bench/memprobe.py)")
    parser.add_argument("--series", action="store_true",
                        help="print RSS and server CPU every second after the close")
    parser.add_argument("--pushes", type=int, default=3000,
                        help="pushes for CPU and Redis per push (0: skip)")
    parser.add_argument("--push-sessions", type=int, default=10)
    parser.add_argument("--direct", choices=["on", "off"], default="off",
                        help="direct delivery; off (default): every push goes through Redis")
    parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/a2ui_bench")
    args = parser.parse_args()
    global SERIES, PROBE
    SERIES = args.series
    if args.probe:
        PROBE = Path(args.probe).resolve()
        PROBE.unlink(missing_ok=True)
    unknown = set(args.protocols) - set(PROTOCOLS)
    if unknown:
        raise SystemExit(f"unknown protocol(s) {sorted(unknown)}; known: {sorted(PROTOCOLS)}")

    limit = raise_nofile(3 * args.sockets + 4096)
    own_redis = OwnRedis()
    redis_url = f"redis://{HOST}:{own_redis.port}/0"
    env = server_env(args.database_url, redis_url, direct=args.direct)
    # MCP_MAX_SESSIONS_PER_PROCESS (5000) would refuse the 5001st MCP session: lifted, as the
    # caps are (bench/capacity_settings.py).
    if PROBE is not None:
        env["A2UI_MEMPROBE"] = str(PROBE)
    env.update(DJANGO_SETTINGS_MODULE="capacity_settings",
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT / "bench"),
                                                        env.get("PYTHONPATH")])))
    prepare_database(args.database_url, env)
    agent_key, push_toks = make_fixtures(args.push_sessions)
    per = args.sockets + WARM

    def start_server():
        port = free_port()
        server = Proc("a2ui", [sys.executable, "manage.py", "a2ui_serve", "-v", "0", "-b", HOST,
                               "-p", str(port), "--allocator", args.allocator,
                               "a2ui_project.asgi.application"], env, port)
        server.wait_ready()
        print(f"server :{port} pid {server.proc.pid}, RLIMIT_NOFILE {limit}, "
              f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}", flush=True)
        return server

    # A fresh process per protocol: memory freed by one protocol's closed sessions would be
    # reused by the next and hide its cost.
    rows, push, server = [], None, None
    try:
        for protocol in args.protocols:
            toks = issue_tokens(PROTOCOLS[protocol][0], per)
            server = start_server()
            PROBES.clear()
            row = asyncio.run(measure(server, protocol, toks, args.settle, args.after))
            rows.append(row)
            back = (f"within 10% {row['back_seconds']:.0f} s after close"
                    if row["back_seconds"] is not None else "not within 10%")
            print(f"  {protocol}: {row['sockets']} idle opened in {row['open_seconds']:.1f} s; "
                  f"RSS {row['before_kb'] / 1024:.1f} -> {row['at_kb'] / 1024:.1f} -> "
                  f"{row['after_kb'] / 1024:.1f} MB {row['after_seconds']:.0f} s after close "
                  f"(peak {row['peak_after_kb'] / 1024:.1f}; {back}); server CPU from the close "
                  f"to the last reading {row['close_cpu']:.1f} s", flush=True)
            print_probes()
            server.stop()
            server = None
        if args.pushes:
            server = start_server()
            push = asyncio.run(measure_push(server, push_toks, agent_key, args.pushes,
                                            redis_url))
    finally:
        if server is not None:
            server.stop()
        own_redis.stop()
    print()
    print(f"| protocol | idle sockets | KB per idle socket | RSS after close / before "
          f"({args.after:.0f} s after) |")
    print("|---|---:|---:|---:|")
    for r in rows:
        print(f"| {LABELS[r['protocol']]} | {r['sockets']} | {r['kb_per_socket']:.1f} "
              f"({r['before_kb'] / 1024:.1f} -> {r['at_kb'] / 1024:.1f} MB) | "
              f"{r['return_ratio']:.2f} ({r['after_kb'] / 1024:.1f} MB) |")
    if args.pushes:
        print()
        print(f"per push (JSON-RPC ui.progress, ~300 B, {args.push_sessions} sessions, direct "
              f"delivery {args.direct}, {push['pushes']} pushes): server CPU "
              f"{push['cpu_us']:.0f} us (noisy on a shared machine); Redis "
              f"{push['redis_cmds']:.2f} commands, {push['redis_in_bytes']:.0f} B in, "
              f"{push['redis_out_bytes']:.0f} B out")


if __name__ == "__main__":
    main()
