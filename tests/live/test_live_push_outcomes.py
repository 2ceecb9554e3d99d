"""Tier 2: the database connections of a live server are killed while an agent pushes; what
the agent is told is what the person sees.

One Daphne process, an agent socket and a person's socket. The agent pushes chat messages
(``agui.event`` TEXT_MESSAGE with no ``message_id``: the server gives each push one, so a
message stored twice is shown twice), half of them with an ``idempotency_key``, while the test terminates every backend
of the server's database (``pg_terminate_backend``) again and again. Then:

* every push answered delivered is shown exactly once;
* every push answered with an error is not shown;
* every keyed push answered -32012 (outcome unknown) is retried with its key until it is
  answered, and is then shown exactly once;
* an unkeyed push answered -32012 is shown exactly when it is stored;
* a keyed push whose answer never came (the agent's socket dropped right after sending it) is
  retried with its key on a new socket and is shown exactly once;
* what the person's screen shows is what the database holds.
"""

import asyncio
import json
import time

import pytest
from channels.db import database_sync_to_async
from websockets.exceptions import ConnectionClosed

from a2ui.models import SessionActivity
from tests.live.client import init_session, open_agent, open_user
from tests.live.pgkill import terminate_server_backends
from tests.live.test_live_jsonrpc import is_method

pytestmark = pytest.mark.django_db(transaction=True)

PUSHES = 80
CONVERGE_SECONDS = 4.0
UNKNOWN = -32012


class Screen:
    """The person's chat transcript as their client keeps it (by message id, from live messages
    and resync snapshots); ``transcript``: the messages' contents."""

    def __init__(self, client):
        self.client = client
        self.messages = {}
        self.task = asyncio.ensure_future(self._read())

    async def _read(self):
        try:
            while True:
                msg = json.loads(await self.client.ws.recv())
                if msg.get("method") != "ui.activity":
                    continue
                params = msg["params"]
                if params["kind"] == "snapshot":
                    self.messages = {m["message_id"]: m["content"]
                                     for m in params["data"]["transcript"]}
                elif params["kind"] == "message":
                    self.messages[params["data"]["message_id"]] = params["data"]["content"]
        except ConnectionClosed:
            pass

    @property
    def transcript(self):
        return list(self.messages.values())

    async def close(self):
        self.task.cancel()
        await self.client.close()


async def _open_serving_agent(server, agent_key, seconds=30):
    """An agent socket once the server serves one again: after the storm its pool reconnects,
    and until then a new socket is told the database is unreachable and closed (its refusal)."""
    deadline = time.monotonic() + seconds
    while True:
        agent = await open_agent(server, agent_key)
        try:
            reply = await agent.call("a2ui.sessions", {}, "ready", timeout=10)
            if "result" in reply:
                return agent
        except Exception:
            if time.monotonic() > deadline:
                raise
        await agent.close()
        await asyncio.sleep(0.5)


@database_sync_to_async
def _stored(sid):
    row = SessionActivity.objects.filter(session_id=sid).first()
    return [m["content"] for m in row.transcript] if row else []


async def _push(bot, sid, i, keyed, rpc_id):
    params = {"session_id": sid, "event": {"type": "TEXT_MESSAGE", "sender": "bot",
                                           "content": f"m{i}"}}
    if keyed:
        params["idempotency_key"] = f"k{i}"
    return await bot.call("agui.event", params, rpc_id, timeout=20)


async def _retry(bot, sid, key):
    await asyncio.sleep(0.2)
    return await bot.call("agui.event", {
        "session_id": sid, "idempotency_key": key,
        "event": {"type": "TEXT_MESSAGE", "sender": "bot", "content": key}}, "retry", timeout=20)


@pytest.mark.timeout(300)  # 80 pushes under a kill storm, each failing one may wait 2 s
async def test_outcomes_under_killed_database_connections(daphne_server, user, agent,
                                                          stream_token, agent_key):
    # Backends are killed every 0.15 s, new ones too: a push that waits for a connection
    # fails after 2 s rather than the default 10 (the answer is what is checked, not the rate).
    server = daphne_server(DB_POOL_TIMEOUT="2")
    bot = await open_agent(server, agent_key)
    person = await open_user(server, stream_token)
    sid = await init_session(person)
    await bot.recv_until(is_method("session.opened"))
    screen = Screen(person)

    stop = asyncio.Event()
    kills = []

    async def killer():
        await asyncio.sleep(0.2)
        while not stop.is_set():
            kills.append(await asyncio.to_thread(terminate_server_backends, server.proc.pid))
            await asyncio.sleep(0.15)

    killing = asyncio.ensure_future(killer())
    answers = {}
    try:
        for i in range(PUSHES):
            answers[i] = await _push(bot, sid, i, keyed=i % 2 == 0, rpc_id=f"p{i}")
            await asyncio.sleep(0.01)
    finally:
        stop.set()
        await killing
    assert sum(kills) > 0, "no backend was terminated"

    delivered, failed, unknown = set(), set(), set()
    for i, reply in answers.items():
        if "result" in reply:
            assert reply["result"]["delivered"] is True, reply
            delivered.add(f"m{i}")
        elif reply["error"]["code"] == UNKNOWN:
            unknown.add(i)
        else:
            assert reply["error"]["code"] != -32602, reply  # a real fault, not bad input
            failed.add(f"m{i}")

    # After an unknown outcome a keyed push is retried with its key until it is answered.
    retried = set()
    for i in sorted(n for n in unknown if n % 2 == 0):
        for attempt in range(20):
            reply = await _push(bot, sid, i, keyed=True, rpc_id=f"r{i}-{attempt}")
            if "result" in reply:
                retried.add(f"m{i}")
                break
            await asyncio.sleep(0.25)
        else:
            raise AssertionError(f"retry of m{i} never answered: {reply}")

    # Answers lost with the agent's connection: the agent cannot know, and retries with the key.
    for j in range(5):
        lost = await _open_serving_agent(server, agent_key)
        await lost.send({"jsonrpc": "2.0", "id": "lost", "method": "agui.event", "params": {
            "session_id": sid, "idempotency_key": f"lost-{j}",
            "event": {"type": "TEXT_MESSAGE", "sender": "bot", "content": f"lost-{j}"}}})
        await lost.ws.close()
        again = await _open_serving_agent(server, agent_key)
        reply = await _retry(again, sid, f"lost-{j}")
        assert "result" in reply, reply
        retried.add(f"lost-{j}")
        await again.close()

    since = time.monotonic()
    stored = await _stored(sid)
    while time.monotonic() - since < CONVERGE_SECONDS and sorted(screen.transcript) != sorted(
            stored):
        await asyncio.sleep(0.1)
        stored = await _stored(sid)
    shown = screen.transcript
    await screen.close()
    await bot.close()

    report = (f"answers: {len(delivered)} delivered, {len(failed)} failed, {len(unknown)} "
              f"unknown; kills {sum(kills)}; shown {shown}; stored {stored}")
    assert len(shown) == len(set(shown)), "a message shown twice: " + report
    assert len(stored) == len(set(stored)), "a message stored twice: " + report
    assert sorted(shown) == sorted(stored), "the screen is not what is stored: " + report
    for message_id in delivered | retried:
        assert shown.count(message_id) == 1, f"{message_id} answered delivered: " + report
    for message_id in failed:
        assert message_id not in shown, f"{message_id} answered failed: " + report
