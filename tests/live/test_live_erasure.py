"""Tier 2: a person's erasure while her agent pushes to her live session leaves nothing of hers.

One Daphne process holds the person's socket and the agent's; the agent pushes every 50 ms on
its socket (components, chat messages, v0.9 surfaces, requests, notices, each naming a secret)
and every 50 ms over MCP (components) while ``manage.py a2ui_person erase``, in a process of
its own, erases her. The server acknowledges pushes up to the moment the session closes and
keeps their replay events in its buffer for ``REPLAY_FLUSH_SECONDS``, so its flusher writes
them after the erasure began: the erasure's fence (``a2ui.sessions.fence``) must drop them
(without it, 2 to 4 such rows with her secret were left). Afterwards, and again after every buffer had
time to flush: no row of any a2ui table holds the secret, and a second count finds nothing.
"""

import asyncio
import itertools
import json
import re
import sys
import time

import pytest
from channels.db import database_sync_to_async
from django.apps import apps
from django.core import serializers
from mcp.shared.exceptions import MCPError
from websockets.exceptions import ConnectionClosed

from a2ui.compliance import chain as auditchain
from a2ui.compliance import person
from a2ui.models import A2UISessionLog, SessionEvent
from tests.live.aguibot import CATALOG
from tests.live.client import init_session, open_agent, open_user
from tests.live.conftest import ROOT, live_env
from tests.live.mcpclient import mcp_session

pytestmark = pytest.mark.django_db(transaction=True)
SECRET = "HER-SECRET-4417"
PERIOD = 0.05  # seconds between two pushes
SETTLE = 1.5  # seconds for every flusher of the server to write what it holds (0.25 s each)


def _everything():
    return "\n".join(serializers.serialize("json", model.objects.all())
                     for model in apps.get_app_config("a2ui").get_models())


class Pusher:
    """The agent: a push every ``PERIOD`` seconds, kinds in turn; counts what was answered."""

    def __init__(self, agent, sid):
        self.agent, self.sid = agent, sid
        self.sent = self.delivered = self.refused = 0
        self.stop = asyncio.Event()
        self.reader = asyncio.ensure_future(self._read())
        self.writer = asyncio.ensure_future(self._write())

    def _params(self, i):
        kind = i % 5
        if kind == 0:  # a component
            return "ui.render", {"session_id": self.sid, "component_id": f"c{i % 7}",
                                 "component_type": "card",
                                 "data": {"title": f"{SECRET} card {i}"}}
        if kind == 1:  # a chat message (the activity)
            return "agui.event", {"session_id": self.sid, "event": {
                "type": "TEXT_MESSAGE", "sender": "bot", "content": f"{SECRET} says {i}"}}
        if kind == 2:  # a v0.9 surface
            return "a2ui.v09", {"session_id": self.sid, "messages": [
                {"version": "v0.9", "createSurface": {"surfaceId": f"s{i}",
                                                      "catalogId": CATALOG}},
                {"version": "v0.9", "updateComponents": {"surfaceId": f"s{i}", "components": [
                    {"id": "root", "component": "Text", "text": f"{SECRET} surface {i}"}]}}]}
        if kind == 3:  # a request (answered by nobody)
            return "ui.request_input", {"session_id": self.sid, "request_id": f"q{i}",
                                        "input_type": "text", "prompt": f"{SECRET} asks {i}"}
        return "ui.notify", {"session_id": self.sid, "level": "info", "title": f"{SECRET} {i}"}

    async def _write(self):
        for i in itertools.count():
            if self.stop.is_set():
                return
            method, params = self._params(i)
            try:
                await self.agent.send({"jsonrpc": "2.0", "id": i, "method": method,
                                       "params": params})
            except ConnectionClosed:
                return
            self.sent += 1
            await asyncio.sleep(PERIOD)

    async def _read(self):
        try:
            while True:
                msg = json.loads(await self.agent.ws.recv())
                if "id" in msg and "method" not in msg:
                    if "result" in msg:
                        self.delivered += 1
                    else:
                        self.refused += 1
        except ConnectionClosed:
            pass

    async def finish(self):
        self.stop.set()
        await self.writer
        await asyncio.sleep(0.5)  # the last answers
        self.reader.cancel()


async def mcp_pushes(mcp, sid, stop, counts):
    """The same agent over MCP: a component every ``PERIOD`` seconds until ``stop``."""
    for i in itertools.count():
        if stop.is_set():
            return
        try:
            out = await mcp.call_tool("render", {
                "session_id": sid, "component_type": "card", "component_id": f"m{i % 7}",
                "data": {"title": f"{SECRET} over MCP {i}"}})
            counts["refused" if out.is_error else "delivered"] += 1
        except MCPError:
            counts["refused"] += 1
        await asyncio.sleep(PERIOD)


@pytest.mark.timeout(120)
async def test_erasure_while_an_agent_pushes_leaves_nothing(daphne_server, live_services, user,
                                                             stream_token, agent_key):
    server = daphne_server()
    agent = await open_agent(server, agent_key, answer_pings=False)
    her = await open_user(server, stream_token)
    sid = await init_session(her)
    await agent.recv_until(lambda m: m.get("method") == "session.opened")
    pusher = Pusher(agent, sid)
    over_mcp = {"delivered": 0, "refused": 0}
    mcp_context = mcp_session(server, agent_key)
    mcp = await mcp_context.__aenter__()
    mcp_task = asyncio.ensure_future(mcp_pushes(mcp, sid, pusher.stop, over_mcp))
    await asyncio.sleep(1.0)  # pushes stored and kept for replay
    delivered_before = pusher.delivered
    assert delivered_before >= 5, (pusher.sent, pusher.delivered, pusher.refused)
    held = await database_sync_to_async(SessionEvent.objects.filter(session_id=sid).count)()
    assert held > 0  # replay events were written before the erasure

    started = time.monotonic()
    # as an operator runs it: its own process, on the servers' database and Redis
    erase = await asyncio.create_subprocess_exec(
        sys.executable, str(ROOT / "manage.py"), "a2ui_person", "erase", user.get_username(),
        env=live_env(live_services), stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT)
    out = (await asyncio.wait_for(erase.communicate(), 60))[0].decode()
    took = time.monotonic() - started
    assert erase.returncode == 0 and "Erasure done." in out, out
    counts = dict(re.findall(r"^  ([a-z ]+): (\d+) were ", out, re.M))
    await asyncio.sleep(0.5)  # the agent keeps pushing to the closed session
    await pusher.finish()
    await mcp_task
    await mcp_context.__aexit__(None, None, None)
    assert "verified after: nothing of theirs left" in out, out
    assert counts["live sessions"] == "1", out
    for name in ("replay events", "components", "surfaces", "requests", "activities"):
        assert int(counts[name]) > 0, (name, out)

    await asyncio.sleep(SETTLE)  # what the server's buffers held is written, or dropped, now

    def after():
        session = A2UISessionLog.objects.get(pk=sid)
        return (session.erased_at is not None, SessionEvent.objects.filter(session_id=sid).count(),
                person._left(user, [sid]), SECRET in _everything(), auditchain.verify().ok)

    erased, events, left, secret_held, chain_ok = await database_sync_to_async(after)()
    assert erased
    assert events == 0, f"{events} replay events written after the erasure ({took:.2f} s)"
    assert left == {}
    assert not secret_held
    assert chain_ok
    # the pushes that came after the erasure were refused, on both
    assert pusher.refused > 0
    assert over_mcp["delivered"] > 0 and over_mcp["refused"] > 0, over_mcp
    await agent.close()
