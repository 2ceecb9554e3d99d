"""Tier 2: sessions sharded over two Redis servers (``A2UI['REDIS_SHARDS']``), under two live
Daphne processes; one shard restarts (every key gone) while the agent pushes.

The main server (``REDIS_URL``) is also the first shard; the second is a server of its own.
The agent is on process A, each session's tab on B, so every push crosses processes through
the session's shard (its sequence number and its group's PUBLISH). Every render the agent was
told was delivered must reach its tab, before, across and after the restart of the shard.
"""

import asyncio
import time
import uuid

import pytest

from a2ui.core.shardmap import ShardMap, shard_name
from tests.live.client import init_session, open_agent, open_user
from tests.live.conftest import DaphneServer, live_env
from tests.live.screen import Screen
from tests.live.test_live_jsonrpc import is_method, new_token

pytestmark = pytest.mark.django_db(transaction=True)

CONVERGE_SECONDS = 3.0
SESSIONS = 4  # at least, with one on each shard


@pytest.fixture
def sharded(request, live_services, transactional_db):
    """``(main, other, start)``: two redis-servers of the test's own (the main one is also the
    first shard) and a factory of Daphne processes sharding sessions over both."""
    from tests.redisserver import RedisServer

    main, other = RedisServer().start(), RedisServer().start()
    env = dict(live_env(main.url()), A2UI_REDIS_SHARDS=f"{main.url()} {other.url()}")
    servers = request.node._live_servers = []

    def start():
        server = DaphneServer(env, name=chr(ord("A") + len(servers)))
        servers.append(server)
        return server.wait_ready()

    def start_with(**extra):
        server = DaphneServer(dict(env, **extra), name=chr(ord("A") + len(servers)))
        servers.append(server)
        return server.wait_ready()

    start.with_env = start_with
    yield main, other, start
    for server in servers:
        server.stop()
    main.stop()
    other.stop()
    for server in servers:
        server.cleanup()


class Pusher:
    """The agent's socket: renders to any session, each remembered as delivered only if the
    agent was told so."""

    def __init__(self, client):
        self.client = client
        self.delivered = {}  # session id -> [component ids]
        self.refused = []

    async def render(self, sid, component_id):
        rpc_id = uuid.uuid4().hex
        await self.client.send({"jsonrpc": "2.0", "id": rpc_id, "method": "ui.render",
                                "params": {"session_id": sid, "component_id": component_id,
                                           "component_type": "card",
                                           "data": {"title": component_id}}})
        reply = await self.client.recv_until(lambda m: m.get("id") == rpc_id and "method" not in m)
        if reply.get("result", {}).get("delivered") is True:
            self.delivered.setdefault(sid, []).append(component_id)
        else:
            self.refused.append((component_id, reply.get("error", {}).get("code")))

    async def everywhere(self, sessions, label):
        for sid in sessions:
            await self.render(sid, f"{label}-{sid[:8]}")


async def converged(screens, pusher, since):
    deadline = since + CONVERGE_SECONDS
    while time.monotonic() < deadline:
        if all(set(pusher.delivered.get(sid, ())) <= screen.ids
               for sid, screen in screens.items()):
            return
        await asyncio.sleep(0.02)
    missing = {sid[:8]: sorted(set(pusher.delivered.get(sid, ())) - screen.ids)
               for sid, screen in screens.items()}
    raise AssertionError(f"not converged {CONVERGE_SECONDS} s after: missing {missing}")


def keys_on(server):
    """The sessions (hex) whose sequence counter a redis-server holds."""
    import redis

    client = redis.Redis.from_url(server.url(), decode_responses=True)
    try:
        return {key.split(":")[2] for key in client.scan_iter("a2ui:ss:*")}
    finally:
        client.close()


async def test_sessions_on_two_shards_lose_nothing_delivered_across_a_shard_restart(
        sharded, user, agent, agent_key):
    main, other, start = sharded
    shards = ShardMap([shard_name(main.url()), shard_name(other.url())])
    a, b = start(), start()
    bot = await open_agent(a, agent_key)
    pusher, screens, on = Pusher(bot), {}, {0: [], 1: []}
    while len(screens) < SESSIONS or not (on[0] and on[1]):
        assert len(screens) < 16, on
        tab = await open_user(b, await new_token(user, agent))
        sid = await init_session(tab)
        await bot.recv_until(is_method("session.opened"))
        screens[sid] = Screen(tab)
        on[shards.index(uuid.UUID(sid).hex)].append(sid)
    sessions = list(screens)

    await pusher.everywhere(sessions, "before")
    await converged(screens, pusher, time.monotonic())
    # Each session's state is on its shard, and only there.
    held = {0: keys_on(main), 1: keys_on(other)}
    for shard, sids in on.items():
        for sid in sids:
            hexid = uuid.UUID(sid).hex
            assert hexid in held[shard] and hexid not in held[1 - shard], (shard, sid, held)

    other.stop()  # the second shard crashes: its keys are gone, its connections drop
    await pusher.everywhere(on[0], "during")  # the first shard's sessions go on meanwhile
    assert not [c for c, _ in pusher.refused], pusher.refused
    await asyncio.to_thread(other.start)
    answering = time.monotonic()
    for i in range(5):
        await pusher.everywhere(sessions, f"after{i}")
    # Refused only while the shard was down (none here: nothing was pushed to it then).
    assert pusher.refused == [], pusher.refused
    await converged(screens, pusher, max(answering, time.monotonic()))
    for screen in screens.values():
        await screen.close()
    await bot.close()


async def test_a_session_on_the_second_shard_resumes_on_the_other_process(
        sharded, user, agent, agent_key):
    """A session whose state is on the second shard: its tab moves from B to A (a resume on
    another process) and still gets every push, each process reading and publishing on the
    same shard."""
    main, other, start = sharded
    shards = ShardMap([shard_name(main.url()), shard_name(other.url())])
    a, b = start(), start()
    bot = await open_agent(a, agent_key)
    pusher, others = Pusher(bot), []
    for _ in range(16):  # (kept open: a closed tab's session is resumed by the next init)
        tab = await open_user(b, await new_token(user, agent))
        sid = await init_session(tab)
        await bot.recv_until(is_method("session.opened"))
        if shards.index(uuid.UUID(sid).hex) == 1:
            break
        others.append(tab)
    else:
        pytest.fail("no session on the second shard in 16")
    for other_tab in others:
        await other_tab.close()
    screen = Screen(tab)
    await pusher.render(sid, "one")
    await converged({sid: screen}, pusher, time.monotonic())
    await screen.close()
    moved = await open_user(a, await new_token(user, agent))
    assert await init_session(moved, session_id=sid) == sid
    await bot.recv_until(is_method("session.resumed"))
    screen = Screen(moved)
    await pusher.render(sid, "two")
    await converged({sid: screen}, pusher, time.monotonic())
    assert uuid.UUID(sid).hex in keys_on(other)
    await screen.close()
    await bot.close()


def test_a_process_placing_sessions_otherwise_is_not_ready(sharded):
    """A process started on the main server alone beside processes on two shards (a rolling
    deploy that changes ``A2UI['REDIS_SHARDS']``) answers not ready, naming no server, while
    one with the recorded list is alive; the others stay ready."""
    from tests.live.test_live_probes import until

    main, other, start = sharded
    a = start()
    until(a, "/a2ui/readyz", 200, within=15)
    b = start.with_env(A2UI_REDIS_SHARDS="")
    body, _ = until(b, "/a2ui/readyz", 503, within=15)
    assert body["checks"]["redis"] == {"status": "fail", "error": "ShardsDiffer",
                                       "latency_ms": body["checks"]["redis"]["latency_ms"]}
    assert str(other.port) not in str(body) and str(main.port) not in str(body)
    until(a, "/a2ui/readyz", 200)
