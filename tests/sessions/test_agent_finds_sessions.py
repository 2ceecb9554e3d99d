"""An agent started after its people opened their pages finds their sessions (issue 26): on
connect, a socket (or a Python listener) is told of each live session of the agent that no
other socket of the agent holds, as ``session.resumed``, and holds it from then on; a second
socket of the agent is not told of the first's sessions; an observer is told of all."""

import pytest

from a2ui import agents
from a2ui.push import sessions as session_actions
from tests.wsutil import connect_agent, connect_user, init_session, recv, recv_until, send

pytestmark = pytest.mark.django_db(transaction=True)


async def test_a_socket_that_connects_later_is_told_of_the_live_sessions(
        stream_token, agent_key):
    person = await connect_user(stream_token)
    sid = await init_session(person)  # no agent yet: nobody is told
    bot = await connect_agent(agent_key)
    second = observer = None
    try:
        told = await recv(bot)
        assert told["method"] == "session.resumed", told
        assert told["params"]["session_id"] == sid and told["params"]["user"] == "alice"
        assert set(told["params"]) == {"session_id", "user", "client_info", "capabilities",
                                       "consents_missing"}
        # It holds the session now: the person's events come to it, and a second socket of
        # the agent is told of nothing (it would show the person everything twice).
        second = await connect_agent(agent_key)
        assert await second.receive_nothing(timeout=0.3)
        observer = await connect_agent(agent_key, path="/ws/v4/a2ui/agent?events=all")
        seen = await recv(observer)
        assert seen["method"] == "session.resumed" and seen["params"]["session_id"] == sid
        await send(person, {"jsonrpc": "2.0", "id": 9, "method": "user.cancel",
                            "params": {"task_id": "t1"}})
        cancel = await recv_until(bot, lambda m: m.get("method") == "user.cancel")
        assert cancel["params"]["session_id"] == sid
        assert await second.receive_nothing(timeout=0.3)
        # The first socket goes: the next to connect is told of the session and holds it.
        await bot.disconnect()
        bot = await connect_agent(agent_key)
        again = await recv(bot)
        assert again["method"] == "session.resumed" and again["params"]["session_id"] == sid
    finally:
        for socket in (bot, second, observer):
            if socket is not None:
                await socket.disconnect()
        await person.disconnect()


async def test_a_closed_session_is_not_told(stream_token, agent_key):

    person = await connect_user(stream_token)
    sid = await init_session(person)
    await session_actions.aclose_session(sid, reason="done")
    await person.disconnect()
    bot = await connect_agent(agent_key)
    try:
        assert await bot.receive_nothing(timeout=0.3)
    finally:
        await bot.disconnect()


async def test_a_python_listener_is_told_first(stream_token, agent):
    person = await connect_user(stream_token)
    sid = await init_session(person)
    try:
        async with agents.events(agent) as events:
            told = await events.next(timeout=3)
            assert told["method"] == "session.resumed"
            assert told["params"]["session_id"] == sid
    finally:
        await person.disconnect()
