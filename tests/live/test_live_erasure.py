"""Tier 2: a person's erasure while her agent pushes to her live session leaves nothing of hers.

One Daphne process holds the person's socket and the agent's; the agent pushes every 50 ms
(components, chat messages, notices, each naming a secret) while this process (as
``manage.py a2ui_person erase`` would) erases her. The server acknowledges pushes up to the
moment the session closes and keeps their replay events in its buffer for
``REPLAY_FLUSH_SECONDS``, so its flusher writes them after the erasure began: the erasure's
fence (``a2ui.sessions.fence``) must drop them. Afterwards, and again after every buffer had
time to flush: no row of any a2ui table holds the secret, and a second count finds nothing.
"""

import asyncio
import itertools
import json
import time

import pytest
from channels.db import database_sync_to_async
from django.apps import apps
from django.core import serializers
from websockets.exceptions import ConnectionClosed

from a2ui.compliance import chain as auditchain
from a2ui.compliance import person
from a2ui.models import A2UISessionLog, SessionEvent
from tests.live.client import init_session, open_agent, open_user

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
        kind = i % 3
        if kind == 0:
            return "ui.render", {"session_id": self.sid, "component_id": f"c{i % 5}",
                                 "component_type": "card",
                                 "data": {"title": f"{SECRET} card {i}"}}
        if kind == 1:
            return "agui.event", {"session_id": self.sid, "event": {
                "type": "TEXT_MESSAGE", "sender": "bot", "content": f"{SECRET} says {i}"}}
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


@pytest.mark.timeout(120)
async def test_erasure_while_an_agent_pushes_leaves_nothing(daphne_server, user, stream_token,
                                                             agent_key):
    server = daphne_server()
    agent = await open_agent(server, agent_key, answer_pings=False)
    her = await open_user(server, stream_token)
    sid = await init_session(her)
    await agent.recv_until(lambda m: m.get("method") == "session.opened")
    pusher = Pusher(agent, sid)
    await asyncio.sleep(1.0)  # pushes stored and kept for replay
    delivered_before = pusher.delivered
    assert delivered_before >= 5, (pusher.sent, pusher.delivered, pusher.refused)
    held = await database_sync_to_async(SessionEvent.objects.filter(session_id=sid).count)()
    assert held > 0  # replay events were written before the erasure

    started = time.monotonic()
    report = await database_sync_to_async(person.erase)(user)
    took = time.monotonic() - started
    await asyncio.sleep(0.5)  # the agent keeps pushing to the closed session
    await pusher.finish()
    assert report.left == {}, report.lines()
    assert report.counts["live sessions"] == 1
    assert report.counts["replay events"] > 0 and report.counts["components"] > 0, report.counts

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
    assert pusher.refused > 0  # the pushes that came after the erasure were refused
    await agent.close()
