"""The person sees when the session's agent is offline and when it comes back
(a2ui.sessions.presence): ``a2ui.init``'s ``agent_status``, then ``a2ui.agent_status``
notifications on the agent's first socket or listener, its last leave, and its liveness lapsing.

In process (the in-memory layer, or Redis when ``REDIS_URL`` is set: then the Lua scripts run);
two processes: tests/live/test_live_presence.py.
"""

import asyncio

import pytest

from a2ui import agents
from a2ui.sessions import presence
from tests.wsutil import INIT, connect_agent, connect_user, recv, recv_until, send

pytestmark = pytest.mark.django_db(transaction=True)


async def _init(person):
    await send(person, INIT)
    reply = await recv_until(person, lambda m: m.get("id") == INIT["id"])
    return reply["result"]


def _is_status(message):
    return message.get("method") == "a2ui.agent_status"


async def _status(person):
    return (await recv_until(person, _is_status))["params"]["status"]


async def _no_status(person, quiet=0.3):
    while not await person.receive_nothing(quiet):
        message = await recv(person)
        assert not _is_status(message), message


async def test_offline_at_init_then_online_then_offline(stream_token, agent_key):
    person = await connect_user(stream_token)
    assert (await _init(person))["agent_status"] == "offline"  # no agent socket yet
    agent = await connect_agent(agent_key)
    assert await _status(person) == "online"
    # A page opened now says online at once.
    second = await connect_user(stream_token)
    assert (await _init(second))["agent_status"] == "online"
    await agent.disconnect()
    assert await _status(person) == "offline"
    assert await _status(second) == "offline"
    for comm in (person, second):
        await comm.disconnect()


async def test_offline_only_when_the_last_socket_leaves(stream_token, agent_key):
    first = await connect_agent(agent_key)
    observer = await connect_agent(agent_key, "/ws/v4/a2ui/agent?events=all")
    person = await connect_user(stream_token)
    assert (await _init(person))["agent_status"] == "online"
    await first.disconnect()
    await _no_status(person)  # the observer is still there
    await observer.disconnect()
    assert await _status(person) == "offline"
    await person.disconnect()


async def test_a_python_listener_is_the_agent_being_there(stream_token, agent):
    person = await connect_user(stream_token)
    assert (await _init(person))["agent_status"] == "offline"
    async with agents.events(agent):
        assert await _status(person) == "online"
    assert await _status(person) == "offline"
    await person.disconnect()


async def test_a_killed_process_turns_offline_when_its_liveness_lapses(stream_token, agent,
                                                                       monkeypatch):
    monkeypatch.setattr(presence, "LIVE_TTL", 1)
    person = await connect_user(stream_token)
    assert (await _init(person))["agent_status"] == "offline"
    # A listener of another process: joined, then the process died without leaving (nothing
    # here refreshes it).
    await presence.ajoin(agent.id, "specific.killed!1")
    assert await _status(person) == "online"
    presence._mine.pop("specific.killed!1")
    await presence.asweep()
    await _no_status(person, quiet=0.1)  # not lapsed yet
    await asyncio.sleep(1.1)
    await presence.asweep()
    assert await _status(person) == "offline"
    await presence.asweep()
    await _no_status(person, quiet=0.1)  # told once
    await person.disconnect()


async def test_the_heartbeat_keeps_a_live_member_online(stream_token, agent, monkeypatch):
    monkeypatch.setattr(presence, "LIVE_TTL", 1)
    person = await connect_user(stream_token)
    await _init(person)
    await presence.ajoin(agent.id, "specific.alive!1")
    assert await _status(person) == "online"
    for _ in range(3):
        await asyncio.sleep(0.5)
        await presence.asweep()  # refreshes this process's members, then sweeps
    await _no_status(person, quiet=0.1)
    assert await presence.astatus(agent.id) == "online"
    await presence.aleave("specific.alive!1")
    assert await _status(person) == "offline"
    await person.disconnect()


async def test_an_agent_mcp_listen_stream_is_the_agent_being_there(stream_token, agent):
    """The agent's MCP client holds a ``subscriptions/listen`` stream open (a2ui.mcp.listen)."""
    from types import SimpleNamespace

    import anyio

    from a2ui.mcp import filters, listen

    person = await connect_user(stream_token)
    assert (await _init(person))["agent_status"] == "offline"
    send, recv = anyio.create_memory_object_stream(filters.MAX_BUFFERED)
    feed = listen.Feed(SimpleNamespace(kind="agent", agent=agent), filters.plan(None, None), send)
    await feed.start()
    assert await _status(person) == "online"
    await feed.close()
    assert await _status(person) == "offline"
    send.close()
    recv.close()
    await person.disconnect()


async def test_a_resync_says_the_agent_status_again(stream_token, agent_key):
    """A resync (a gap, a new epoch) re-sends the state: the agent's presence with it, so a
    notice lost with the session's events is corrected too."""
    from a2ui.infra import groups

    person = await connect_user(stream_token)
    sid = (await _init(person))["session_id"]
    await _no_status(person, quiet=0.1)
    await groups.send_group(groups.session_group(sid), {"type": "a2ui.event", "resync": True})
    assert await _status(person) == "offline"
    await person.disconnect()
