"""The load generator of bench/bench_gate.py: one process, separate from the servers it loads.

    python bench/gate_load.py CONFIG.json

CONFIG (written by bench_gate.py) names the targets, each already serving: ``push`` targets (a
tree's agent and person URLs, agent key, stream tokens) and an ``echo`` target; the session
counts (ascending), ``reps``, ``warm``/``measure`` seconds and ``in_flight``. For each session
count S it first opens, on every target, the sockets it still lacks (so S = 1 runs with one
person socket, not a thousand), then measures the targets in turn, ``reps`` times, the order
reversed every other time (A B E, E B A, A B E: drift of the machine falls on all of them).

A measurement is a closed loop: ``ceil(in_flight / S)`` messages in flight per session (or echo
connection), a new one sent when one arrives, ``warm`` seconds unmeasured and ``measure``
seconds counted, then no more sends until the messages in flight have arrived. One JSON line per
measurement on stdout: target, sessions, rep, msg/s, count, lost, and the servers' CPU time per
message (``pids``, from /proc).

push: ``agents`` agent sockets send seed-000 ``ui.progress`` (or ``ui.render`` of a markdown
component, ``method``) notifications round-robin to the sessions of the person sockets; a push
counts when the person's socket receives it. A push target's ``client`` says what the person
sockets speak: ``jsonrpc`` (``/ws/v4/a2ui``, the default) or ``agui`` (``/ws/agui``, seed 003:
the session is opened by the connect, ``ui.progress`` arrives as TOOL_CALL_STATUS and
``ui.render`` as RENDER_REQUEST). echo: a message counts when its echo comes back.
"""

from __future__ import annotations

import asyncio
import gc
import json
import math
import os
import resource
import sys
import time

PAD = "x" * 180  # a frame of about 300 bytes, as in bench/bench_push.py
CONNECT_CONCURRENCY = 25
PUSHED = ("ui.progress", "ui.render")
AGUI_PUSHED = ("TOOL_CALL_STATUS", "RENDER_REQUEST")


async def open_many(urls, headers=None, then=None):
    """Open ``urls``, ``CONNECT_CONCURRENCY`` at a time; ``then(ws)``, if given, runs on each
    socket right after it opens (its handshake: a socket that sends none within the server's
    handshake deadline, 30 s, is closed, and a thousand sockets opening on a busy machine take
    longer than that); returns the sockets, or ``(sockets, then's results)``."""
    from websockets.asyncio.client import connect
    from websockets.exceptions import InvalidHandshake

    sem = asyncio.Semaphore(CONNECT_CONCURRENCY)

    async def one(url):
        async with sem:
            for attempt in range(5):
                try:
                    ws = await connect(url, additional_headers=headers or {},
                                       max_size=2**21, compression=None, open_timeout=60,
                                       ping_interval=None)
                    break
                except (OSError, InvalidHandshake):
                    # Daphne drops a handshake not done in 5 s (a2ui_serve's default), which
                    # a busy machine can exceed while a thousand sockets open
                    if attempt == 4:
                        raise
                    await asyncio.sleep(0.5 * (attempt + 1))
            return ws, (await then(ws) if then is not None else None)

    opened = await asyncio.gather(*(one(u) for u in urls))
    sockets = [ws for ws, _ in opened]
    return sockets if then is None else (sockets, [r for _, r in opened])


def cpu_seconds(pids):
    """User + system CPU time of the server processes so far (Linux /proc)."""
    total = 0
    for pid in pids:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)
    return total / os.sysconf("SC_CLK_TCK")


class Loop:
    """A timed closed loop over ``n`` slots (sessions or echo connections)."""

    def __init__(self, send, pids):
        self.send = send  # send(i) -> awaitable
        self.pids = pids  # the servers' processes, whose CPU time per message is reported
        self.n = 0
        self.sending = False
        self.in_flight = 0
        self.counted = 0
        self.counting = False
        self.tasks = set()

    def fire(self, i):
        self.in_flight += 1
        task = asyncio.ensure_future(self.send(i))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def received(self, i):
        self.in_flight -= 1
        if self.counting:
            self.counted += 1
        if self.sending and i < self.n:
            self.fire(i)

    async def run(self, n, window, warm, measure, drain=15.0):
        self.n, self.counted, self.counting, self.sending = n, 0, False, True
        self.in_flight = 0
        for i in range(n):
            for _ in range(window):
                self.fire(i)
        await asyncio.sleep(warm)
        gc.collect()
        gc.disable()  # the load generator's own collections would stall every socket it reads
        cpu = cpu_seconds(self.pids)
        start = time.perf_counter()
        self.counting = True
        await asyncio.sleep(measure)
        self.counting = False
        elapsed = time.perf_counter() - start
        count = self.counted
        cpu = cpu_seconds(self.pids) - cpu
        gc.enable()
        self.sending = False
        deadline = time.perf_counter() + drain
        while self.in_flight > 0 and time.perf_counter() < deadline:
            await asyncio.sleep(0.01)
        return {"sessions": n, "window": window, "rate": count / elapsed, "count": count,
                "seconds": round(elapsed, 3), "lost": self.in_flight,
                "cpu_us": cpu * 1e6 / count if count else float("nan")}


class EchoTarget:
    def __init__(self, cfg):
        self.url = cfg["url"]
        self.conns, self.readers = [], []
        self.loop = Loop(lambda i: self.conns[i].send(json.dumps({"i": i, "pad": PAD})),
                         cfg["pids"])

    async def _read(self, ws):
        async for raw in ws:
            self.loop.received(json.loads(raw)["i"])

    async def grow(self, n):
        new = await open_many([self.url] * (n - len(self.conns)))
        self.conns += new
        self.readers += [asyncio.ensure_future(self._read(ws)) for ws in new]

    async def close(self):
        for t in self.readers:
            t.cancel()
        await asyncio.gather(*(ws.close() for ws in self.conns), return_exceptions=True)


def push_frame(method, sid, k):
    if method == "ui.render":
        params = {"session_id": sid, "component_id": f"bench-{k % 4}",
                  "component_type": "markdown", "data": {"content": f"# {k} {PAD}"}}
    else:
        params = {"session_id": sid, "task_id": "bench", "progress_type": "determinate",
                  "value": k, "total": 1 << 30, "message": PAD}
    return json.dumps({"jsonrpc": "2.0", "method": method, "params": params})


async def agui_session(ws):
    """/ws/agui opens a session on connect and names it in CONNECTION_STATUS."""
    while True:
        event = json.loads(await asyncio.wait_for(ws.recv(), 60)).get("event", {})
        if event.get("type") == "CONNECTION_STATUS":
            if event.get("status") != "CONNECTED":
                raise RuntimeError(f"/ws/agui refused the bench: {event}")
            return event["session_id"]


async def init_session(ws):
    await ws.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "a2ui.init",
                              "params": {"client_info": {"name": "bench", "version": "1"}}}))
    while True:
        reply = json.loads(await asyncio.wait_for(ws.recv(), 60))
        if reply.get("id") == 1:
            return reply["result"]["session_id"]


class PushTarget:
    def __init__(self, cfg, n_agents, method):
        self.cfg, self.n_agents, self.method = cfg, n_agents, method
        self.agui = cfg.get("client", "jsonrpc") == "agui"
        self.agents, self.users, self.sids, self.readers = [], [], [], []
        self.counter = 0
        self.loop = Loop(self._send, cfg["pids"])

    def _send(self, i):
        self.counter += 1
        return self.agents[i % len(self.agents)].send(
            push_frame(self.method, self.sids[i], self.counter))

    async def _read_user(self, i, ws):
        if self.agui:
            async for raw in ws:
                if json.loads(raw).get("event", {}).get("type") in AGUI_PUSHED:
                    self.loop.received(i)
            return
        async for raw in ws:
            if json.loads(raw).get("method") in PUSHED:
                self.loop.received(i)

    async def _drain(self, ws):
        async for _ in ws:  # session.opened events and the like
            pass

    async def grow(self, n):
        if not self.agents:
            self.agents = await open_many(
                [self.cfg["agent_url"]] * self.n_agents,
                headers={"Authorization": f"Bearer {self.cfg['agent_key']}"})
            self.readers += [asyncio.ensure_future(self._drain(ws)) for ws in self.agents]
        new, new_sids = await open_many(
            [f"{self.cfg['user_url']}?token={t}" for t in self.cfg["tokens"][len(self.users):n]],
            then=agui_session if self.agui else init_session)
        self.readers += [asyncio.ensure_future(self._read_user(len(self.users) + k, ws))
                         for k, ws in enumerate(new)]
        self.users += new
        self.sids += new_sids

    async def close(self):
        for t in self.readers:
            t.cancel()
        await asyncio.gather(*(ws.close() for ws in self.users + self.agents),
                             return_exceptions=True)


async def main(cfg):
    targets = {name: (EchoTarget(t) if t["kind"] == "echo"
                      else PushTarget(t, cfg["agents"], cfg["method"]))
               for name, t in cfg["targets"].items()}
    names = list(targets)
    for n in cfg["sessions"]:
        for name in names:
            t0 = time.perf_counter()
            await targets[name].grow(n)
            print(json.dumps({"event": "opened", "target": name, "sessions": n,
                              "seconds": round(time.perf_counter() - t0, 2)}), flush=True)
        await asyncio.sleep(1.0)  # let the openings settle (agents hear of every session)
        for rep in range(cfg["reps"]):
            for name in (names if rep % 2 == 0 else names[::-1]):
                result = await targets[name].loop.run(
                    n, math.ceil(cfg["in_flight"] / n), cfg["warm"], cfg["measure"])
                print(json.dumps({"event": "result", "target": name, "rep": rep, **result}),
                      flush=True)
    for target in targets.values():
        await target.close()


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        config = json.load(f)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE,
                       (min(hard, max(soft, 8 * max(config["sessions"]) + 1024)), hard))
    asyncio.run(main(config))
