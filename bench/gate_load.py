"""The load generator of bench/bench_gate.py: one process, separate from the servers it loads.

    python bench/gate_load.py CONFIG.json

CONFIG is written by bench_gate.py: ``mode`` ("push" or "echo"), the URLs, the session counts
(ascending), ``warm``/``measure`` seconds and ``in_flight``. For each session count S it opens
the sockets it still lacks (so S = 1 runs with one person socket open, not a thousand), then
runs a closed loop: ``ceil(in_flight / S)`` messages in flight per session (or echo
connection), a new one sent when one arrives, for ``warm`` seconds unmeasured and ``measure``
seconds counted; then it stops sending and waits for the messages in flight. One JSON line per
session count on stdout: ``{"sessions", "rate", "count", "lost"}``.

push: ``agents`` agent sockets on ``agent_url`` send seed-000 ``ui.progress`` (or ``ui.render``
of a markdown component, ``method``) notifications round-robin to the sessions of person sockets
on ``user_url``; a push counts when the person's socket receives it.
echo: connections to ``echo_url``; a message counts when its echo comes back.
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
CONNECT_CONCURRENCY = 50
PUSHED = ("ui.progress", "ui.render")


async def open_many(urls, headers=None):
    from websockets.asyncio.client import connect

    sem = asyncio.Semaphore(CONNECT_CONCURRENCY)

    async def one(url):
        async with sem:
            return await connect(url, additional_headers=headers or {}, max_size=2**21,
                                 compression=None, open_timeout=60, ping_interval=None)

    return await asyncio.gather(*(one(u) for u in urls))


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
        lost = self.in_flight
        self.in_flight = 0  # a lost message must not hold back the next session count
        return {"sessions": n, "window": window, "rate": count / elapsed, "count": count,
                "seconds": round(elapsed, 3), "lost": lost,
                "cpu_us": cpu * 1e6 / count if count else float("nan")}


async def run_echo(cfg):
    conns = []
    loop = Loop(lambda i: conns[i].send(json.dumps({"i": i, "pad": PAD})), cfg["pids"])
    readers = []

    async def read(ws):
        async for raw in ws:
            loop.received(json.loads(raw)["i"])

    for n in cfg["sessions"]:
        t0 = time.perf_counter()
        new = await open_many([cfg["echo_url"]] * (n - len(conns)))
        conns += new
        readers += [asyncio.ensure_future(read(ws)) for ws in new]
        opened = time.perf_counter() - t0
        result = await loop.run(n, math.ceil(cfg["in_flight"] / n), cfg["warm"], cfg["measure"])
        yield {**result, "open_s": round(opened, 2)}
    for t in readers:
        t.cancel()
    await asyncio.gather(*(ws.close() for ws in conns), return_exceptions=True)


def push_frame(method, sid, k):
    if method == "ui.render":
        params = {"session_id": sid, "component_id": f"bench-{k % 4}",
                  "component_type": "markdown", "data": {"content": f"# {k} {PAD}"}}
    else:
        params = {"session_id": sid, "task_id": "bench", "progress_type": "determinate",
                  "value": k, "total": 1 << 30, "message": PAD}
    return json.dumps({"jsonrpc": "2.0", "method": method, "params": params})


async def init_session(ws):
    await ws.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "a2ui.init",
                              "params": {"client_info": {"name": "bench", "version": "1"}}}))
    while True:
        reply = json.loads(await asyncio.wait_for(ws.recv(), 60))
        if reply.get("id") == 1:
            return reply["result"]["session_id"]


async def run_push(cfg):
    method = cfg.get("method", "ui.progress")
    agents = await open_many([cfg["agent_url"]] * cfg["agents"],
                             headers={"Authorization": f"Bearer {cfg['agent_key']}"})
    users, sids = [], []
    counter = [0]

    def send(i):
        counter[0] += 1
        return agents[i % len(agents)].send(push_frame(method, sids[i], counter[0]))

    loop = Loop(send, cfg["pids"])

    async def read_user(i, ws):
        async for raw in ws:
            if json.loads(raw).get("method") in PUSHED:
                loop.received(i)

    async def drain(ws):
        async for _ in ws:  # session.opened events and the like
            pass

    readers = [asyncio.ensure_future(drain(ws)) for ws in agents]
    sem = asyncio.Semaphore(CONNECT_CONCURRENCY)

    async def init(ws):
        async with sem:
            return await init_session(ws)

    for n in cfg["sessions"]:
        t0 = time.perf_counter()
        new = await open_many([f"{cfg['user_url']}?token={t}"
                               for t in cfg["tokens"][len(users):n]])
        new_sids = await asyncio.gather(*(init(ws) for ws in new))
        readers += [asyncio.ensure_future(read_user(len(users) + k, ws))
                    for k, ws in enumerate(new)]
        users += new
        sids += new_sids
        opened = time.perf_counter() - t0
        await asyncio.sleep(0.5)  # let the sessions' opening settle (agents hear of each)
        result = await loop.run(n, math.ceil(cfg["in_flight"] / n), cfg["warm"], cfg["measure"])
        yield {**result, "open_s": round(opened, 2)}
    for t in readers:
        t.cancel()
    await asyncio.gather(*(ws.close() for ws in users + agents), return_exceptions=True)


async def main(cfg):
    gen = run_push(cfg) if cfg["mode"] == "push" else run_echo(cfg)
    async for result in gen:
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        config = json.load(f)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE,
                       (min(hard, max(soft, 4 * max(config["sessions"]) + 1024)), hard))
    asyncio.run(main(config))
