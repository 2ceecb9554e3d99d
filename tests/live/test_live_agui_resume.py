"""Tier 2: AG-UI 1.0 runs across a broken stream, a page reload and a cancel (docs/protocol-
agui.md, "Resuming a run", "With your host"), on two Daphne processes with PostgreSQL and
Redis, driven by @ag-ui/client's HttpAgent on Node 20 (tests/live/node/agui_resume.mjs; it
validates every event and their order) and checked by ag-ui-validate:

* a stream cut mid-run: a TCP relay between HttpAgent and process B is cut and then leads to
  process A; HttpAgent, with the resumable fetch the docs give, comes back with Last-Event-ID
  and gets every remaining event exactly once, in order: those of the agent while it was away
  (B's stream kept them in the run's log) and those after (A reads them from it);
* a reload during an interrupt: a new HttpAgent on the thread (on the other process) starts
  a run that shows the interrupt again; its resume answers the agent's request once;
* a cancelled interrupt reaches the agent (on its socket) as -32013 ``cancelled_by: "person"``,
  and the thread's next run is served as usual."""

import asyncio
import json
import uuid
from pathlib import Path

import pytest
from ag_ui_validate.pytest_plugin import validate_agui
from channels.db import database_sync_to_async

from a2ui.models import A2UISessionLog
from tests.live.aguibot import Bot
from tests.live.client import open_agent
from tests.live.tcpcut import CuttableRelay
from tests.live.test_live_mcp import issue

pytestmark = pytest.mark.django_db(transaction=True)
AGUI = "stream_agui"
ROOT = Path(__file__).resolve().parents[2]
FEATURES = ["agentic-chat", "human-in-the-loop", "shared-state", "agentic-generative-ui"]
TIMEOUT = 30


class Node:
    """``tests/live/node/agui_resume.mjs`` running: the events it printed so far, its result."""

    def __init__(self, proc):
        self.proc, self.events, self.done = proc, [], None
        self.changed = asyncio.Event()
        self.task = asyncio.ensure_future(self._read())

    @classmethod
    async def start(cls, *args):
        return cls(await asyncio.create_subprocess_exec(
            "node", "tests/live/node/agui_resume.mjs", *args, cwd=ROOT,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE))

    async def _read(self):
        async for line in self.proc.stdout:
            item = json.loads(line)
            if "event" in item:
                self.events.append(item["event"])
            else:
                self.done = item["done"]
            self.changed.set()

    async def until(self, pred, timeout=TIMEOUT):
        async with asyncio.timeout(timeout):
            while not pred(self):
                self.changed.clear()
                await self.changed.wait()

    async def result(self):
        async with asyncio.timeout(TIMEOUT):
            await self.task
            stderr = (await self.proc.stderr.read()).decode()
            await self.proc.wait()
        assert self.done is not None and self.done["ok"], (self.done, stderr)
        return self.done


def clean(events):
    report = validate_agui(events, features=FEATURES)
    bad = [(d.rule, d.message) for d in report.diagnostics if d.severity in ("error", "warning")]
    assert not bad, bad


def ends(node, n):
    return sum(e["type"] == "TEXT_MESSAGE_END" for e in node.events) >= n


async def test_a_stream_cut_mid_run_resumes_on_the_other_process_with_every_event_once(
        two_servers, user, agent, agent_key):
    a, b = two_servers
    me = await open_agent(a, agent_key)  # the agent: the test, on A
    token = await issue(user, agent, AGUI)
    relay = CuttableRelay("127.0.0.1", b.port)
    thread = f"cut-{uuid.uuid4().hex[:8]}"
    node = await Node.start("cut", f"http://127.0.0.1:{relay.port}/api/v4/agui/run", token,
                            thread)
    started = await me.recv_until(lambda m: m.get("method") == "agui.run_started",
                                  timeout=TIMEOUT)
    sid, run_id = started["params"]["session_id"], started["params"]["run_id"]

    async def say(i):
        reply = await me.call("ui.notify", {"session_id": sid, "level": "info",
                                            "title": f"m{i}"}, f"n{i}")
        assert "result" in reply, reply

    for i in range(1, 5):  # HttpAgent gets these from B
        await say(i)
    await node.until(lambda n: ends(n, 4))
    relay.cut()  # the connection breaks; the next one leads to A
    relay.target = ("127.0.0.1", a.port)
    for i in range(5, 9):  # while HttpAgent is away: B's stream keeps them in the run's log
        await say(i)
    relay.restore()
    await node.until(lambda n: ends(n, 8))  # back, on A, with what it missed
    for i in range(9, 11):  # live again, read by A from the log B's stream writes
        await say(i)
    reply = await me.call("agui.run_finish", {"session_id": sid, "run_id": run_id,
                                              "result": {"count": 10}}, "finish")
    assert reply["result"]["ended"] is True and reply["result"]["delivered"] is True, reply
    done = await node.result()
    relay.close()

    (run,) = done["runs"]
    events = run["events"]
    assert [e["type"] for e in events] == ["RUN_STARTED", "STATE_SNAPSHOT", *[
        "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END"] * 10, "RUN_FINISHED"]
    assert [e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT"] == [
        f"m{i}" for i in range(1, 11)]  # every event once, in order
    assert run["result"] == {"count": 10}
    first, *again = done["requests"]
    assert first is None and again and set(again) == {"14"}, done["requests"]  # 2 + 4 x 3
    clean(events)
    await me.close()


async def test_a_reload_during_an_interrupt_shows_it_again_and_its_resume_answers_once(
        two_servers, user, agent, agent_key):
    a, b = two_servers
    bot = await Bot.start(a, agent_key)
    token = await issue(user, agent, AGUI)
    thread = f"reload-{uuid.uuid4().hex[:8]}"
    done = await (await Node.start("reload", f"{b.url}/api/v4/agui/run", token, thread,
                                   f"{a.url}/api/v4/agui/run")).result()
    asked, shown, resumed = done["runs"]
    (interrupt,) = asked["pendingInterrupts"]
    assert interrupt["reason"] == "input_required"
    assert asked["events"][-1]["outcome"]["type"] == "interrupt"
    # The reloaded page's first run (on A) shows the same interrupt and ends at it.
    assert [e["type"] for e in shown["events"]] == ["RUN_STARTED", "STATE_SNAPSHOT",
                                                    "RUN_FINISHED"]
    assert shown["events"][-1]["outcome"]["interrupts"][0]["id"] == interrupt["id"]
    assert shown["pendingInterrupts"] == [interrupt]
    # Its resume answers the agent's request, once.
    assert resumed["result"] == {"name": "Ada"} and resumed["pendingInterrupts"] == []
    assert bot.outcomes == [(interrupt["id"], "Ada")]
    for run in done["runs"]:
        clean(run["events"])
    await bot.close()


async def test_a_cancelled_interrupt_reaches_the_agent_as_a_cancellation(
        two_servers, user, agent, agent_key):
    a, b = two_servers
    bot = await Bot.start(a, agent_key)
    token = await issue(user, agent, AGUI)
    thread = f"cancel-{uuid.uuid4().hex[:8]}"
    done = await (await Node.start("cancel", f"{b.url}/api/v4/agui/run", token, thread,
                                   f"{a.url}/api/v4/agui/run")).result()
    asked, cancelled, after = done["runs"]
    (interrupt,) = asked["pendingInterrupts"]
    ((request_id, error),) = bot.outcomes
    assert request_id == interrupt["id"]
    assert error["code"] == -32013 and error["data"]["cancelled_by"] == "person", error
    assert cancelled["result"] == {"cancelled": True, "code": -32013}
    assert cancelled["pendingInterrupts"] == []
    # The session goes on: the next run of the thread is served as usual.
    assert after["events"][-1]["type"] == "RUN_FINISHED"
    assert not any(m["method"] == "session.closed" for m in bot.seen)
    sid = next(m["params"]["session_id"] for m in bot.seen if m["method"] == "agui.run_started")
    state = await database_sync_to_async(
        lambda: A2UISessionLog.objects.get(session_id=sid).state)()
    assert state in A2UISessionLog.LIVE_STATES
    for run in done["runs"]:
        clean(run["events"])
    await bot.close()
