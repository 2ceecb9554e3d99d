"""Tier 2: direct delivery and the hot-path Redis connection against live Daphne and Redis.

A push skips the channel layer only when every socket of the session is in the sending process
(a2ui.push.direct). These tests check, over real sockets, that nothing is lost or reordered
when the sockets are all on one process, spread over two, or move between the two cases.
"""

import asyncio

import pytest
import redis

from a2ui.infra import redisline
from tests.live.client import init_session, open_agent, open_user
from tests.live.test_live_jsonrpc import is_method, new_token, rpc

pytestmark = pytest.mark.django_db(transaction=True)


def progress(sid, value):
    return rpc("ui.progress", {"session_id": sid, "task_id": "t", "progress_type": "determinate",
                               "value": value, "total": 1000})


async def progress_values(client, count):
    values = []
    while len(values) < count:
        msg = await client.recv_until(is_method("ui.progress"))
        values.append(msg["params"]["value"])
    return values


def publishes(redis_url):
    """PUBLISH commands the Redis server has run (all databases)."""
    client = redis.Redis.from_url(redis_url)
    try:
        stats = client.info("commandstats")
    finally:
        client.close()
    return stats.get("cmdstat_publish", {}).get("calls", 0)


async def test_redisline_against_redis(live_services):
    line = redisline.Line(live_services)
    try:
        await line.execute(("DEL", "a2ui:test:n", "a2ui:test:s"))
        assert await line.execute(("INCR", "a2ui:test:n"), ("EXPIRE", "a2ui:test:n", 60),
                                  ("GET", "a2ui:test:n"), ("GET", "a2ui:test:none")) == [
            1, 1, "1", None]
        await line.execute(("SET", "a2ui:test:s", "héllo"))
        assert await line.execute(("GET", "a2ui:test:s")) == ["héllo"]
        with pytest.raises(redisline.ReplyError):
            await line.execute(("INCR", "a2ui:test:s"))
        assert await line.execute(("INCR", "a2ui:test:n")) == [2]
    finally:
        await line.execute(("DEL", "a2ui:test:n", "a2ui:test:s"))
        line.close()


async def test_one_process_pushes_arrive_in_order_without_the_layer(daphne_server, stream_token,
                                                                    agent_key, live_services):
    server = daphne_server()
    bot = await open_agent(server, agent_key)
    ui = await open_user(server, stream_token)
    sid = await init_session(ui)
    await bot.recv_until(is_method("session.opened"))
    before = publishes(live_services)
    for value in range(300):
        await bot.send(progress(sid, value))
    assert await progress_values(ui, 300) == list(range(300))
    assert publishes(live_services) - before < 10  # not one PUBLISH per push


async def test_sockets_on_two_processes_both_get_every_push_in_order(two_servers, user, agent,
                                                                     stream_token, agent_key):
    a, b = two_servers
    bot = await open_agent(a, agent_key)
    here = await open_user(a, stream_token)
    sid = await init_session(here)
    await bot.recv_until(is_method("session.opened"))
    there = await open_user(b, await new_token(user, agent))
    assert await init_session(there, session_id=sid) == sid
    await bot.recv_until(is_method("session.resumed"))

    for value in range(100):  # one socket elsewhere: through the layer
        await bot.send(progress(sid, value))
    here_values, there_values = await asyncio.gather(progress_values(here, 100),
                                                     progress_values(there, 100))
    assert here_values == there_values == list(range(100))

    # All sockets on the agent's process again, from some push on: the switch to direct
    # delivery happens mid-stream, while earlier publishes may still be in flight.
    await there.close()
    for value in range(100, 300):
        await bot.send(progress(sid, value))
        if value % 20 == 0:
            await asyncio.sleep(0.02)
    assert await progress_values(here, 200) == list(range(100, 300))
