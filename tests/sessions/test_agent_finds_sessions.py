"""An agent started after its people opened their pages finds their sessions (issue 26): on
connect, a socket (or a Python listener) is told of each live session of the agent that no
other socket of the agent holds, as ``session.resumed``, and holds it from then on; a second
socket of the agent is not told of the first's sessions; an observer is told of all."""

import pytest

from a2ui import agents
from a2ui.push import sessions as session_actions
from tests.wsutil import connect_agent, connect_user, init_session, recv, recv_until, send

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def held_notice(monkeypatch):
    """The person's socket tells the agent ``session.opened`` only when the test says so: an
    agent that connects in between finds the session among its announcements too. Yields
    ``(release, told)``: set ``release`` to let the notice go; ``told`` is set once it went."""
    import asyncio

    from a2ui.consumers.socket import SessionSocket

    release, told = asyncio.Event(), asyncio.Event()
    announce = SessionSocket.announce

    async def held(self, *args, **kwargs):
        await release.wait()
        await announce(self, *args, **kwargs)
        told.set()

    monkeypatch.setattr(SessionSocket, "announce", held)
    return release, told


async def test_a_socket_that_connects_later_is_told_of_the_live_sessions(
        stream_token, agent_key, held_notice):
    release, told = held_notice
    person = await connect_user(stream_token)
    sid = await init_session(person)
    release.set()
    await told.wait()  # no agent yet: nobody is told
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


async def test_a_python_listener_is_told_first(stream_token, agent, held_notice):
    release, told = held_notice
    person = await connect_user(stream_token)
    sid = await init_session(person)
    release.set()
    await told.wait()  # no listener yet: nobody is told
    try:
        async with agents.events(agent) as events:
            told = await events.next(timeout=3)
            assert told["method"] == "session.resumed"
            assert told["params"]["session_id"] == sid
    finally:
        await person.disconnect()


async def test_a_notice_relayed_after_the_announcement_is_not_told_again(
        stream_token, agent_key, held_notice):
    release, told = held_notice
    person = await connect_user(stream_token)
    sid = await init_session(person)
    bot = await connect_agent(agent_key)
    try:
        resumed = await recv(bot)
        assert resumed["method"] == "session.resumed" and resumed["params"]["session_id"] == sid
        release.set()
        await told.wait()
        assert await bot.receive_nothing(timeout=0.3)  # not session.opened as well
        await send(person, {"jsonrpc": "2.0", "id": 9, "method": "user.cancel",
                            "params": {"task_id": "t1"}})
        cancel = await recv_until(bot, lambda m: m.get("method") == "user.cancel")
        assert cancel["params"]["session_id"] == sid
        # A notice of the session after that one is told (it is not a repeat of the connect's).
        await session_actions.aclose_session(sid, reason="done")
        closed = await recv_until(bot, lambda m: m.get("method") == "session.closed")
        assert closed["params"]["session_id"] == sid
    finally:
        await bot.disconnect()
        await person.disconnect()


async def test_a_notice_relayed_before_the_announcement_is_told_once(
        stream_token, agent_key, held_notice, monkeypatch):
    """The notice reaches the socket while it looks its sessions up: it is told as
    ``session.opened``, and not announced as ``session.resumed`` after it."""
    import asyncio

    from a2ui.sessions import lifecycle

    release, told = held_notice
    lookup = lifecycle.aannouncements

    async def notice_first(*args, **kwargs):
        release.set()
        await told.wait()
        await asyncio.sleep(0.2)  # the relay hands the notice to the socket
        return await lookup(*args, **kwargs)

    monkeypatch.setattr(lifecycle, "aannouncements", notice_first)
    person = await connect_user(stream_token)
    sid = await init_session(person)
    bot = await connect_agent(agent_key)
    try:
        opened = await recv(bot)
        assert opened["method"] == "session.opened" and opened["params"]["session_id"] == sid
        assert await bot.receive_nothing(timeout=0.3)  # not session.resumed as well
    finally:
        await bot.disconnect()
        await person.disconnect()


async def test_a_python_listener_is_told_a_session_once(stream_token, agent, held_notice):
    release, told = held_notice
    person = await connect_user(stream_token)
    sid = await init_session(person)
    try:
        async with agents.events(agent) as events:
            first = await events.next(timeout=3)
            assert first["method"] == "session.resumed" and first["params"]["session_id"] == sid
            release.set()
            await told.wait()
            with pytest.raises(TimeoutError):
                await events.next(timeout=0.5)
    finally:
        await person.disconnect()


def test_told_once_drops_only_the_notice_of_a_socket_that_connected_before(monkeypatch):
    from a2ui.sessions import lifecycle

    def notice(sid, since=None, method="session.opened"):
        event = {"type": "a2ui.agent_event", "method": method, "params": {"session_id": sid}}
        return event if since is None else {**event, "since": since}

    now = [100.0]
    monkeypatch.setattr(lifecycle.time, "monotonic", lambda: now[0])
    told = lifecycle.ToldOnce(listening=1000.0)
    assert told.relayed(notice("early", 999.0))  # before the announcements: told, and ...
    assert told.relayed({"type": "a2ui.agent_event", "method": "user.cancel",
                         "params": {"session_id": "a"}})
    assert [p["session_id"] for p in told.announce(  # ... not announced
        [{"session_id": s} for s in ("early", "a", "b", "c", "d")])] == ["a", "b", "c", "d"]
    assert not told.relayed(notice("a", 999.0))  # the person's socket connected before: a repeat
    assert told.relayed(notice("a", 999.0, "session.resumed"))  # once only
    assert told.relayed(notice("b", 1001.0, "session.resumed"))  # a socket connected later
    assert told.relayed(notice("c"))  # a notice that does not say when: told
    assert told.relayed(notice("x", 999.0))  # not announced
    now[0] += lifecycle.ToldOnce.REPEAT_SECONDS + 1
    assert told.relayed(notice("d", 999.0))  # the ids are let go
    assert told.announced == set()
