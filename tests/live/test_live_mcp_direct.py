"""Tier 2: a session an MCP host watches (``resources/subscribe``) is pushed by direct delivery
when the person's socket, the host's subscription and the agent are on one Daphne process (the
MCP watcher is a listener of the session like the sockets: ``a2ui.mcp.watch``), and still
through the channel layer when the host is on the other process."""

import asyncio

import mcp_types as types
import pytest

from tests.live.client import init_session, open_agent, open_user
from tests.live.mcpclient import mcp_session
from tests.live.test_live_direct import publishes
from tests.live.test_live_jsonrpc import is_method, rpc
from tests.live.test_live_mcp import issue

pytestmark = pytest.mark.django_db(transaction=True)
PUSHES = 200


def update(sid, n):
    return rpc("ui.update", {"session_id": sid, "component_id": "c1", "operation": "merge",
                             "data": {"title": f"#{n}"}})


async def watched_updates(server_for_host, server, user, agent, agent_key, live_services):
    bot = await open_agent(server, agent_key)
    person = await open_user(server, await issue(user, agent))
    sid = await init_session(person)
    await bot.recv_until(is_method("session.opened"))
    await bot.send(rpc("ui.render", {"session_id": sid, "component_id": "c1",
                                     "component_type": "card", "data": {"title": "#0"}}))
    await person.recv_until(is_method("ui.render"))
    card = f"ui://sessions/{sid}/components/c1"
    updated = asyncio.Queue()

    async def on_message(message):
        if isinstance(message, types.ResourceUpdatedNotification):
            await updated.put(str(message.params.uri))

    host_token = await issue(user, agent, "stream_mcp")
    async with mcp_session(server_for_host, host_token, message_handler=on_message) as host:
        await host.subscribe_resource(card)
        before = publishes(live_services)
        for n in range(1, PUSHES + 1):
            await bot.send(update(sid, n))
        for _ in range(PUSHES):  # the person's socket gets every one, in order
            await person.recv_until(is_method("ui.update"))
        notes = [await asyncio.wait_for(updated.get(), 15) for _ in range(PUSHES)]
        published = publishes(live_services) - before
        assert set(notes) == {card}
        text = (await host.read_resource(card)).contents[0].text
        assert f"#{PUSHES}" in text
    await person.close()
    await bot.close()
    return published


async def test_an_mcp_watched_session_on_one_process_is_pushed_directly(
        daphne_server, user, agent, agent_key, live_services):
    server = daphne_server()
    published = await watched_updates(server, server, user, agent, agent_key, live_services)
    # Not one PUBLISH per push (other test runs on the shared Redis may publish meanwhile).
    assert published < PUSHES // 2, published


async def test_an_mcp_host_on_the_other_process_still_gets_every_push(
        two_servers, user, agent, agent_key, live_services):
    a, b = two_servers
    published = await watched_updates(b, a, user, agent, agent_key, live_services)
    assert published >= PUSHES  # published through the layer to the watcher on b
