"""Redis bursts, restarts and lost keys, against a redis-server of the test's own.

Bursts queue for a connection instead of failing; a lost sequence counter comes back with a new
epoch, which makes sockets resync and stops direct delivery from trusting the lost socket count;
a socket left behind with no later push is found by ``seqwatch``; a failed ``a2ui.init`` leaves
the socket uninitialized.
"""

import asyncio

import pytest
from channels.db import database_sync_to_async

from a2ui.consumers import seqwatch
from a2ui.infra import shared
from a2ui.push import entry as pushentry
from a2ui.surfaces import components
from tests.redisserver import own_redis  # noqa: F401 (fixture)
from tests.wsutil import INIT, connect_agent, connect_user, init_session, recv, recv_until, send

pytestmark_db = pytest.mark.django_db(transaction=True)


@pytest.fixture
def redis_settings(settings, own_redis):  # noqa: F811
    settings.A2UI = {**getattr(settings, "A2UI", {}), "REDIS_URL": own_redis.url(),
                     "REDIS_MAX_CONNECTIONS": 5}
    return own_redis


def render(sid, component_id, rpc_id=None):
    msg = {"jsonrpc": "2.0", "method": "ui.render", "params": {
        "session_id": sid, "component_id": component_id, "component_type": "card",
        "data": {"title": component_id}}}
    if rpc_id is not None:
        msg["id"] = rpc_id
    return msg


# Bursts ------------------------------------------------------------------------------------------


async def test_a_burst_beyond_the_pool_waits_for_a_connection(redis_settings):
    """120 commands that each hold a connection for 50 ms, 5 connections: all answered."""
    client = shared.redis_client()
    replies = await asyncio.gather(
        *[client.blpop([f"a2ui:test:nothing:{i}"], timeout=0.05) for i in range(120)],
        return_exceptions=True,
    )
    assert replies == [None] * 120


@pytestmark_db
async def test_a_burst_of_renders_all_succeed(redis_settings, stream_token, agent_key):
    agent = await connect_agent(agent_key)
    user = await connect_user(stream_token)
    sid = await init_session(user)
    await recv(agent)  # session.opened
    agent_id = (await shared.cached_session(sid.replace("-", "")))[0]
    results = await asyncio.gather(*[
        pushentry.apush(agent_id, sid, "ui.render", {
            "component_id": f"c{i}", "component_type": "card", "data": {"title": "x"}})
        for i in range(150)
    ], return_exceptions=True)
    assert [r for r in results if isinstance(r, BaseException)] == []
    assert sorted(results) == list(range(1, 151))
    await user.disconnect()
    await agent.disconnect()


# Lost keys ---------------------------------------------------------------------------------------


async def test_a_lost_counter_comes_back_with_a_new_epoch_and_an_untrusted_count(
        redis_settings):
    epoch = await shared.socket_opened("s1", fresh=True)
    assert await shared.next_seq_and_sockets("s1") == (1, epoch, 1)
    second = await shared.socket_opened("s1")  # a second socket (resumed the session)
    assert second == epoch
    assert await shared.next_seq_and_sockets("s1") == (2, epoch, 2)
    redis_settings.flushdb()
    seq, new_epoch, sockets = await shared.next_seq_and_sockets("s1")
    assert (seq, sockets) == (1, None)  # the count is not trusted: publish
    assert new_epoch != epoch
    assert await shared.current_seq("s1") == (1, new_epoch)
    assert await shared.socket_closed("s1", epoch) is None  # its count is gone: unknown
    recounted = await shared.socket_opened("s1")  # the other socket counts itself again
    assert recounted == new_epoch
    assert (await shared.next_seq_and_sockets("s1"))[2] is None  # still not trusted
    assert await shared.socket_closed("s1", recounted) == 0


async def test_only_the_sessions_first_socket_makes_the_count_trusted(redis_settings):
    await shared.socket_opened("s2", fresh=False)  # a resumed session, counter lost meanwhile
    assert (await shared.next_seq_and_sockets("s2"))[2] is None
    await shared.next_seq_and_sockets("s3")  # a push before the first socket: not trusted
    await shared.socket_opened("s3", fresh=True)
    assert (await shared.next_seq_and_sockets("s3"))[2] is None


async def test_commands_survive_a_redis_restart(redis_settings):
    assert await shared.next_seq("s4") == 1
    await shared.hit_rate_limit("k", 10)
    await asyncio.to_thread(redis_settings.restart)
    assert await shared.next_seq("s4") == 1  # retried on a new connection; the key is gone
    assert await shared.redis_client().ping()


@pytestmark_db
async def test_a_socket_resyncs_when_its_counter_comes_back_with_a_new_epoch(
        redis_settings, stream_token, agent_key, monkeypatch):
    monkeypatch.setattr(seqwatch, "INTERVAL_SECONDS", 3600)  # only the push may show it
    agent = await connect_agent(agent_key)
    user = await connect_user(stream_token)
    sid = await init_session(user)
    await recv(agent)
    await send(agent, render(sid, "c1", 1))
    assert (await recv(user))["params"]["component_id"] == "c1"
    redis_settings.flushdb()
    # c2 is stored but its push is lost (published while the subscription was down).
    await database_sync_to_async(components.store_render)(
        sid, {"component_id": "c2", "component_type": "card", "data": {"title": "c2"}})
    await send(agent, render(sid, "c3", 2))  # seq 1 again, under a new epoch
    seen = set()
    while "c3" not in seen:
        msg = await recv(user)
        if msg.get("method") == "ui.render":
            seen.add(msg["params"]["component_id"])
    assert seen == {"c1", "c2", "c3"}
    await user.disconnect()
    await agent.disconnect()


@pytestmark_db
async def test_a_socket_left_behind_with_no_later_push_is_resynced(
        redis_settings, stream_token, agent_key, monkeypatch):
    monkeypatch.setattr(seqwatch, "INTERVAL_SECONDS", 0.1)
    agent = await connect_agent(agent_key)
    user = await connect_user(stream_token)
    sid = await init_session(user)
    await recv(agent)
    await send(agent, render(sid, "c1", 1))
    assert (await recv(user))["params"]["component_id"] == "c1"
    redis_settings.flushdb()
    await database_sync_to_async(components.store_render)(
        sid, {"component_id": "c2", "component_type": "card", "data": {"title": "c2"}})
    msg = await recv_until(user, lambda m: m.get("params", {}).get("component_id") == "c2")
    assert msg["method"] == "ui.render"
    await user.disconnect()
    await agent.disconnect()


@pytestmark_db
async def test_a_push_lost_in_flight_with_none_after_it_is_found(
        redis_settings, stream_token, agent_key, monkeypatch):
    monkeypatch.setattr(seqwatch, "INTERVAL_SECONDS", 0.1)
    agent = await connect_agent(agent_key)
    user = await connect_user(stream_token)
    sid = await init_session(user)
    await recv(agent)
    # The render is stored and numbered, and its publish vanishes.
    await database_sync_to_async(components.store_render)(
        sid, {"component_id": "c9", "component_type": "card", "data": {"title": "c9"}})
    await shared.next_seq(sid.replace("-", ""))
    msg = await recv_until(user, lambda m: m.get("params", {}).get("component_id") == "c9")
    assert msg["method"] == "ui.render"
    await user.disconnect()
    await agent.disconnect()


# a2ui.init -----------------------------------------------------------------------------------------


@pytestmark_db
@pytest.mark.parametrize("resume", [False, True])
async def test_a_failed_init_leaves_the_socket_uninitialized(stream_token, monkeypatch, resume):
    params = {}
    if resume:
        first = await connect_user(stream_token)
        params["session_id"] = await init_session(first)
        await first.disconnect()
    original = shared.current_seq
    calls = []

    async def fails_once(session_id):
        calls.append(session_id)
        if len(calls) == 1:
            raise ConnectionError("Redis went away")
        return await original(session_id)

    monkeypatch.setattr(shared, "current_seq", fails_once)
    user = await connect_user(stream_token)
    await send(user, {**INIT, "params": {**INIT["params"], **params}})
    assert (await recv(user))["error"]["code"] == -32603
    sid = await init_session(user, **params)  # the retry works
    if resume:
        assert sid == params["session_id"]
    await user.disconnect()


async def wait_for(predicate, timeout=5.0):
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not await predicate():
        assert loop.time() < deadline, "condition not met in time"
        await asyncio.sleep(0.05)


@pytestmark_db
@pytest.mark.parametrize("kind", ["jsonrpc", "v09"])
async def test_sockets_count_themselves_again_after_a_loss_so_the_last_one_detaches(
        redis_settings, stream_token, monkeypatch, kind):
    from a2ui.models import A2UISessionLog
    from tests.surfaces.helpers import v09_socket

    monkeypatch.setattr(seqwatch, "INTERVAL_SECONDS", 0.1)
    if kind == "v09":
        tab, sid = await v09_socket(stream_token)
    else:
        tab = await connect_user(stream_token)
        sid = await init_session(tab)
    key = "a2ui:ss:" + sid.replace("-", "")
    assert redis_settings.command("HGET", key, "s") == b"1"
    redis_settings.flushdb()

    async def recounted():
        return redis_settings.command("HGET", key, "s") == b"1"

    await wait_for(recounted)
    await tab.disconnect()

    async def detached():
        row = await database_sync_to_async(A2UISessionLog.objects.get)(pk=sid)
        return row.detached_at is not None

    await wait_for(detached)


async def test_uncounting_without_an_epoch_uses_the_current_one(redis_settings):
    await shared.socket_opened("s5", fresh=True)
    await shared.socket_opened("s5")
    assert await shared.socket_closed("s5") == 1
    redis_settings.flushdb()
    assert await shared.socket_closed("s5") is None  # the count is gone: unknown, not -1
