"""Tier 2: Redis restarts and loses keys under live Daphne processes; nothing delivered is lost.

Each test runs a redis-server of its own (``own_redis_servers``), two Daphne processes on it,
the agent on A and the person's tabs of one session on both. Redis is killed and started again
(every key gone, every connection dropped), or FLUSHDB empties it, while the agent pushes
before, during and after. Every render the agent was told was delivered must be on every tab's
screen (the set of components the tab received) within 2 s of Redis answering again and of the
last push, with no reload.

The tab opened on A after the loss is what made the old code lose renders: the socket count
started again from zero, A's one new tab made it equal A's sockets, and direct delivery skipped
the two tabs on B.
"""

import asyncio
import time

import pytest

from tests.live.client import init_session, open_agent, open_user
from tests.live.screen import Screen
from tests.live.test_live_jsonrpc import is_method, new_token

pytestmark = pytest.mark.django_db(transaction=True)

CONVERGE_SECONDS = 2.0


class Agent:
    def __init__(self, client, sid):
        self.client, self.sid = client, sid
        self.delivered = []
        self.refused = []
        self.n = 0

    async def render(self, component_id):
        """One ui.render; remembered as delivered only if the agent was told so."""
        self.n += 1
        rpc_id = f"r{self.n}"
        await self.client.send({"jsonrpc": "2.0", "id": rpc_id, "method": "ui.render", "params": {
            "session_id": self.sid, "component_id": component_id, "component_type": "card",
            "data": {"title": component_id}}})
        reply = await self.client.recv_until(lambda m: m.get("id") == rpc_id and "method" not in m)
        if reply.get("result", {}).get("delivered") is True:
            self.delivered.append(component_id)
        else:
            self.refused.append((component_id, reply.get("error", {}).get("code")))
        return reply


async def setup(start, user, agent, stream_token, agent_key):
    a, b = start(), start()
    bot = await open_agent(a, agent_key)
    b1 = await open_user(b, stream_token)
    sid = await init_session(b1)
    await bot.recv_until(is_method("session.opened"))
    b2 = await open_user(b, await new_token(user, agent))
    assert await init_session(b2, session_id=sid) == sid
    await bot.recv_until(is_method("session.resumed"))
    return a, b, Agent(bot, sid), [Screen(b1), Screen(b2)]


async def open_tab(server, user, agent, sid, bot):
    tab = await open_user(server, await new_token(user, agent))
    assert await init_session(tab, session_id=sid) == sid
    await bot.client.recv_until(is_method("session.resumed"))
    return Screen(tab)


async def converged(screens, bot, since):
    """Wait until every screen shows every delivered render; how long after ``since`` it took."""
    want = set(bot.delivered)
    deadline = since + CONVERGE_SECONDS
    while time.monotonic() < deadline:
        if all(want <= screen.ids for screen in screens):
            return time.monotonic() - since
        await asyncio.sleep(0.02)
    missing = [sorted(want - screen.ids) for screen in screens]
    raise AssertionError(f"not converged {CONVERGE_SECONDS} s after {since:.2f}: "
                         f"missing per tab {missing}")


async def test_a_redis_restart_loses_nothing_delivered(own_redis_servers, user, agent,
                                                       stream_token, agent_key):
    redis_server, start = own_redis_servers
    a, b, bot, screens = await setup(start, user, agent, stream_token, agent_key)
    for i in range(5):
        await bot.render(f"before-{i}")
    await converged(screens, bot, time.monotonic())

    redis_server.stop()
    for i in range(3):
        await bot.render(f"during-{i}")
    await asyncio.to_thread(redis_server.start)
    answering = time.monotonic()
    screens.append(await open_tab(a, user, agent, bot.sid, bot))  # a new tab, next to the agent
    for i in range(20):
        await bot.render(f"after-{i}")
    # Refused only while Redis was down: the first commands after it answers again succeed.
    assert [c for c, _ in bot.refused if not c.startswith("during")] == [], bot.refused
    await converged(screens, bot, max(answering, time.monotonic()))
    for screen in screens:
        await screen.close()


async def test_a_flushdb_loses_nothing_delivered(own_redis_servers, user, agent, stream_token,
                                                 agent_key):
    redis_server, start = own_redis_servers
    a, b, bot, screens = await setup(start, user, agent, stream_token, agent_key)
    for i in range(5):
        await bot.render(f"before-{i}")
    await converged(screens, bot, time.monotonic())

    async def flush_midway():
        await asyncio.sleep(0.05)
        await asyncio.to_thread(redis_server.flushdb)

    flushing = asyncio.ensure_future(flush_midway())
    for i in range(10):
        await bot.render(f"during-{i}")
    await flushing
    flushed = time.monotonic()
    screens.append(await open_tab(a, user, agent, bot.sid, bot))
    for i in range(20):
        await bot.render(f"after-{i}")
    assert bot.refused == []
    await converged(screens, bot, max(flushed, time.monotonic()))
    for screen in screens:
        await screen.close()


async def test_pushes_right_after_a_restart_with_none_after_them_still_converge(
        own_redis_servers, user, agent, stream_token, agent_key):
    """Renders published while B's subscription is still reconnecting, and no push after them
    to show a gap: the sockets find out by themselves."""
    redis_server, start = own_redis_servers
    a, b, bot, screens = await setup(start, user, agent, stream_token, agent_key)
    screens.append(await open_tab(a, user, agent, bot.sid, bot))
    for i in range(5):
        await bot.render(f"before-{i}")
    redis_server.stop()
    await asyncio.to_thread(redis_server.start)
    answering = time.monotonic()
    for i in range(5):
        await bot.render(f"after-{i}")
    assert bot.refused == []  # the first commands after the restart succeed
    await converged(screens, bot, max(answering, time.monotonic()))
    for screen in screens:
        await screen.close()


class StreamScreen:
    """What one v0.9 SSE stream shows of surface ``s1``'s ``/name`` (kept reading): a reset's
    snapshot sets it, a live update changes it."""

    def __init__(self, stream):
        self.stream = stream
        self.name = None
        self.resets = 0
        self.task = asyncio.ensure_future(self._read())

    async def _read(self):
        try:
            while True:
                event = await self.stream.next(timeout=3600)
                if event.get("event") == "a2ui-reset":
                    self.resets += 1
                update = (event.get("data") or {}).get("updateDataModel") if isinstance(
                    event.get("data"), dict) else None
                if update and update.get("path") == "/":
                    self.name = (update.get("value") or {}).get("name")
                elif update and update.get("path") == "/name":
                    self.name = update.get("value")
        except (EOFError, ConnectionError, asyncio.IncompleteReadError):
            pass

    async def close(self):
        self.task.cancel()
        self.stream.close()


async def test_sse_streams_on_both_processes_converge_after_a_restart(
        own_redis_servers, user, agent, stream_token, agent_key):
    """The v0.9 SSE stream runs on the same connection base as the sockets: after Redis loses
    everything it resyncs (new epoch) and shows the last value the agent was told was delivered,
    on the agent's process and on the other one."""
    from tests.live.test_live_surfaces import CAPS, SSEStream, booking, name_update, sse_url

    redis_server, start = own_redis_servers
    a, b = start(), start()
    bot = await open_agent(a, agent_key)
    tab = await open_user(b, stream_token)
    sid = await init_session(tab, capabilities=CAPS)
    await bot.recv_until(is_method("session.opened"))
    reply = await bot.call("a2ui.v09", {"session_id": sid, "messages": booking()}, "b0")
    assert reply["result"]["delivered"] == 3, reply
    screens = [StreamScreen(await SSEStream.open(sse_url(server, sid, stream_token)))
               for server in (a, b)]
    delivered = []

    async def push(value):
        reply = await bot.call("a2ui.v09", {"session_id": sid, "messages": [name_update(value)]},
                               f"p-{value}")
        if "result" in reply:
            delivered.append(value)
        return reply

    async def shown(since):
        deadline = since + CONVERGE_SECONDS
        while time.monotonic() < deadline:
            if all(s.name == delivered[-1] for s in screens):
                return
            await asyncio.sleep(0.02)
        raise AssertionError(f"not converged: streams show {[s.name for s in screens]}, "
                             f"last delivered {delivered[-1]!r}")

    for i in range(3):
        await push(f"before-{i}")
    await shown(time.monotonic())
    redis_server.stop()
    await push("during")
    await asyncio.to_thread(redis_server.start)
    answering = time.monotonic()
    for i in range(5):
        assert "result" in await push(f"after-{i}")  # the first command after the restart works
    await shown(max(answering, time.monotonic()))
    assert all(s.resets >= 2 for s in screens), [s.resets for s in screens]  # connect, epoch
    for screen in screens:
        await screen.close()
    await tab.close()
    await bot.close()


async def test_an_agui_run_stream_converges_after_a_restart(own_redis_servers, user, agent,
                                                            agent_key):
    """An AG-UI 1.0 run's stream runs on the same connection base: after Redis loses its
    counters it resyncs (a new STATE_SNAPSHOT) and its state document ends where the agent's
    last delivered STATE_DELTA left it; the run goes on and ends as the agent says."""
    import jsonpatch

    from tests.live.aguihttp import post_run, run_input
    from tests.live.test_live_mcp import issue

    redis_server, start = own_redis_servers
    a, b = start(), start()
    bot = await open_agent(a, agent_key)
    token = await issue(user, agent, "stream_agui")
    body = run_input(text="count")
    stream = await post_run(b.url, body, token)
    assert stream.status == 200
    doc, snapshots = {}, [0]

    async def read():
        try:
            while True:
                event = await stream.next(timeout=3600)
                if event["type"] == "STATE_SNAPSHOT":
                    snapshots[0] += 1
                    doc.clear()
                    doc.update(event["snapshot"])
                elif event["type"] == "STATE_DELTA":
                    new = jsonpatch.apply_patch(doc, event["delta"])
                    doc.clear()
                    doc.update(new)
                elif event["type"] in ("RUN_FINISHED", "RUN_ERROR"):
                    return event
        except StopAsyncIteration:
            return None

    reader = asyncio.ensure_future(read())
    notice = await bot.recv_until(lambda m: m.get("method") == "agui.run_started")
    sid = notice["params"]["session_id"]
    delivered = [0]

    async def count(n):
        reply = await bot.call("agui.event", {"session_id": sid, "event": {
            "type": "STATE_DELTA", "path": "n", "old_value": delivered[0] or None,
            "new_value": n}}, f"n{n}")
        if "result" in reply:
            delivered[0] = n
        return reply

    async def shown(since):
        deadline = since + CONVERGE_SECONDS
        while time.monotonic() < deadline:
            if doc.get("n") == delivered[0]:
                return
            await asyncio.sleep(0.02)
        raise AssertionError(f"not converged: the run shows {doc}, delivered n={delivered[0]}")

    for n in (1, 2, 3):
        assert "result" in await count(n)
    await shown(time.monotonic())
    before = snapshots[0]
    redis_server.stop()
    await asyncio.to_thread(redis_server.start)
    answering = time.monotonic()
    for n in (4, 5, 6):
        assert "result" in await count(n)  # the first commands after the restart succeed
    await shown(max(answering, time.monotonic()))
    assert snapshots[0] > before  # resynced on the new epoch
    reply = await bot.call("agui.run_finish", {"session_id": sid, "run_id": body["runId"]}, "f")
    assert "result" in reply, reply
    final = await asyncio.wait_for(reader, 10)
    assert final["type"] == "RUN_FINISHED", final
    await stream.close()
    await bot.close()
