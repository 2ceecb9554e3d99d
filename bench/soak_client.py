"""The soak's load client: one process's share of the sessions (``bench_soak.py --clients``).

Each client process holds its people's sockets and the agent sockets that push to them, and
follows the driver's orders over a pipe: ``open`` (agents, then people and ``a2ui.init``),
``heard`` (how many ``session.opened`` its agent sockets heard: each session's go to the one
agent socket holding it),
``push`` (the steady schedule), ``close``. Latency is agent send -> person receive of the same
process (``perf_counter`` is CLOCK_MONOTONIC, one clock for every process of the machine).
"""

from __future__ import annotations

import asyncio
import collections
import gc
import itertools
import json
import resource
import time

from bench_push import CONNECT_CONCURRENCY, HOST, pct
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

ROWS = [{"id": i, "item": f"line {i}", "qty": i % 7, "price": f"{i * 1.5:.2f}"} for i in range(20)]
HEADERS = [{"key": "item", "label": "Item"}, {"key": "qty", "label": "Qty"},
           {"key": "price", "label": "Price"}]
PUSHED = {"ui.render", "ui.update", "ui.progress", "ui.notify", "ui.request_input"}
OPENED = {"session.opened", "session.resumed"}

_request_ids = itertools.count()


def slot_of(k, phase):
    """Where the k-th push of session ``phase`` is in the cycle of 10 (its first two: renders).

    Sessions are out of step (``phase``), as real ones are: in step, every session would send
    its ``ui.request_input`` in the same second, a burst no real mix has.
    """
    return 0 if k < 2 else (k + phase) % 10


def message(k, sid, now, phase=0):
    """The k-th push of a session (k = 0, 1, ...): method and params.

    Per 10 pushes: 2 ``ui.render`` (a card, a 20-row table), 2 ``ui.update`` of the card,
    4 ``ui.progress``, 1 ``ui.notify``, 1 ``ui.request_input`` the person answers.
    """
    slot = slot_of(k, phase)
    t = {"session_id": sid, "bench_t": now}
    if k < 2:  # the session's first screen, right after the open storm: reported apart
        t["bench_first"] = 1
    if slot in (0, 5):
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
        return "ui.request_input", {**t, "request_id": f"q{k}-{next(_request_ids)}",
                                    "input_type": "text",
                                    "prompt": "Your reference?", "timeout_seconds": 120}
    return "ui.progress", {**t, "task_id": "job", "progress_type": "determinate",
                           "value": k, "total": 1000, "message": "working"}


async def open_many(urls, headers=None):
    """The sockets that opened, and how many failed to (a refused or dropped handshake)."""
    sem = asyncio.Semaphore(CONNECT_CONCURRENCY)

    async def one(url):
        async with sem:
            return await connect(url, additional_headers=headers or {}, max_size=2**21,
                                 compression=None, open_timeout=60, ping_interval=None)

    done = await asyncio.gather(*(one(u) for u in urls), return_exceptions=True)
    return [ws for ws in done if not isinstance(ws, BaseException)], \
        sum(isinstance(ws, BaseException) for ws in done)


def cpu_seconds():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


class Client:
    """This process's sockets and counters for one round."""

    def __init__(self, port, agent_key, tokens, n_agents):
        self.port, self.agent_key, self.tokens, self.n_agents = port, agent_key, tokens, n_agents
        self.agents, self.users, self.sids = [], [], []
        self.opened = []  # session.opened/resumed heard, per agent socket
        self.latencies, self.lateness = [], []
        self.by_method = collections.defaultdict(list)
        self.samples = []  # (send time, latency, method), for --dump
        self.first_latencies = []  # each session's first two renders
        self.errors = collections.Counter()
        self.sent = self.received = self.answers = self.expected_answers = 0
        self.tasks = []
        self.next_id = 0
        self.closing = False
        self.pushing = False

    # Opening ---------------------------------------------------------------------------------

    async def open_agents(self):
        self.agents, failed = await open_many(
            [f"ws://{HOST}:{self.port}/ws/v4/a2ui/agent"] * self.n_agents,
            headers={"Authorization": f"Bearer {self.agent_key}"})
        if failed:
            self.errors["agent socket did not open"] += failed
        self.opened = [0] * len(self.agents)
        # Read the agents at once: a socket that is not read while the session.opened events
        # arrive stops answering Daphne's pings and is dropped after ping_timeout.
        self.tasks = [asyncio.ensure_future(self._read_agent(j, ws))
                      for j, ws in enumerate(self.agents)]

    async def open_users(self):
        """People's sockets and ``a2ui.init``: the time each init took, in seconds."""
        self.users, failed = await open_many(
            [f"ws://{HOST}:{self.port}/ws/v4/a2ui?token={t}" for t in self.tokens])
        if failed:
            self.errors["person socket did not open"] += failed
        sem = asyncio.Semaphore(CONNECT_CONCURRENCY)

        async def init(ws):
            async with sem:
                t0 = time.perf_counter()
                await ws.send(json.dumps({
                    "jsonrpc": "2.0", "id": 1, "method": "a2ui.init",
                    "params": {"client_info": {"name": "bench-soak", "version": "1"}}}))
                reply = json.loads(await asyncio.wait_for(ws.recv(), 300))
                if "result" not in reply:
                    raise RuntimeError(f"a2ui.init: {reply.get('error')}")
                return ws, reply["result"]["session_id"], time.perf_counter() - t0

        done = await asyncio.gather(*(init(ws) for ws in self.users), return_exceptions=True)
        failed = [d for d in done if isinstance(d, BaseException)]
        if failed:
            self.errors[f"a2ui.init failed ({type(failed[0]).__name__})"] += len(failed)
        done = [d for d in done if not isinstance(d, BaseException)]
        self.users = [ws for ws, _, _ in done]
        self.sids = [sid for _, sid, _ in done]
        self.tasks += [asyncio.ensure_future(self._read_user(ws)) for ws in self.users]
        return [t for _, _, t in done]

    async def heard(self):
        """Session events heard by the agent sockets here. Each session's events go to the
        one agent socket that holds the session (a2ui.sessions.agentroute, the default mode),
        which may be in another client process: the driver adds up every client's count."""
        return sum(self.opened)

    # Reading ---------------------------------------------------------------------------------

    def _closed(self, side, exc):
        if not self.closing:
            self.errors[f"{side} socket closed ({exc.rcvd.code if exc.rcvd else 'no frame'})"] += 1

    async def _read_user(self, ws):
        try:
            async for raw in ws:
                now = time.perf_counter()
                msg = json.loads(raw)
                method = msg.get("method")
                params = msg.get("params", {})
                if method in PUSHED and "bench_t" in params:
                    self.received += 1
                    latency = now - params["bench_t"]
                    self.samples.append((params["bench_t"], latency, method))
                    if params.get("bench_first"):
                        self.first_latencies.append(latency)
                    else:
                        self.latencies.append(latency)
                        self.by_method[method].append(latency)
                    if method == "ui.request_input":
                        self.next_id += 1
                        await ws.send(json.dumps({
                            "jsonrpc": "2.0", "id": self.next_id, "method": "user.respond",
                            "params": {"request_id": msg["params"]["request_id"],
                                       "value": "R-1"}}))
                elif "error" in msg:
                    self.errors[f"person {msg['error'].get('code')}"] += 1
        except ConnectionClosed as exc:
            self._closed("person", exc)

    async def _read_agent(self, j, ws):
        try:
            async for raw in ws:
                msg = json.loads(raw)
                if msg.get("method") in OPENED:
                    self.opened[j] += 1
                elif "error" in msg:
                    self.errors[f"agent {msg['error'].get('code')}"] += 1
                elif isinstance(msg.get("result"), str):  # the person's answer
                    self.answers += 1
        except ConnectionClosed as exc:
            self._closed("agent", exc)

    # Pushing ---------------------------------------------------------------------------------

    async def push(self, i, k, due):
        agent = self.agents[i % len(self.agents)]
        now = time.perf_counter()
        self.lateness.append(now - due)
        method, params = message(k, self.sids[i], now, self.first + i)
        self.next_id += 1
        try:
            await agent.send(json.dumps(
                {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}))
        except ConnectionClosed:
            self.errors["not sent: agent socket closed"] += 1
            return
        self.sent += 1

    async def run_pushes(self, start, seconds, rate, first, total, drain_timeout):
        """The steady schedule: session ``first + i`` of ``total`` pushes at phase i/total."""
        loop = asyncio.get_running_loop()
        n = len(self.sids)
        ticks = int(seconds * rate)
        schedule = sorted((start + (k + (first + i) / total) / rate, i, k)
                          for k in range(ticks) for i in range(n))
        self.first = first
        self.expected_answers = sum(1 for _, i, k in schedule if slot_of(k, first + i) == 9)
        cpu0 = cpu_seconds()
        gc.collect()
        gc.disable()  # the load client's collector would stall every socket it reads
        offset = loop.time() - time.perf_counter()
        for due, i, k in schedule:
            delay = due + offset - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            await self.push(i, k, due)
        deadline = loop.time() + drain_timeout
        while (self.received + sum(self.errors.values()) < self.sent
               or self.answers + self.errors["agent -32004"] < self.expected_answers) \
                and loop.time() < deadline:
            await asyncio.sleep(0.05)
        gc.enable()
        return cpu_seconds() - cpu0

    async def close(self):
        self.closing = True
        await asyncio.gather(*(ws.close() for ws in self.users + self.agents),
                             return_exceptions=True)
        for t in self.tasks:
            t.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)

    def results(self, cpu):
        return {
            "sent": self.sent, "received": self.received, "answers": self.answers,
            "expected_answers": self.expected_answers, "errors": dict(self.errors),
            "latencies": self.latencies, "lateness_p99": pct(self.lateness, 99),
            "by_method": dict(self.by_method), "samples": self.samples,
            "first_latencies": self.first_latencies,
            "cpu": cpu,
        }


async def _serve(conn, port, agent_key):
    client = None
    loop = asyncio.get_running_loop()
    while True:
        order, *args = await loop.run_in_executor(None, conn.recv)
        if order == "open_agents":
            tokens, n_agents = args
            client = Client(port, agent_key, tokens, n_agents)
            await client.open_agents()
            conn.send(("ok",))
        elif order == "open_users":
            conn.send(("ok", await client.open_users()))
        elif order == "heard":
            conn.send(("ok", await client.heard()))
        elif order == "push":
            cpu = await client.run_pushes(*args)
            conn.send(("ok", client.results(cpu)))
        elif order == "close":
            await client.close()
            client = None
            conn.send(("ok",))
        elif order == "exit":
            return


def child_main(conn, port, agent_key):
    """Entry point of a client process (multiprocessing, spawn)."""
    asyncio.run(_serve(conn, port, agent_key))
