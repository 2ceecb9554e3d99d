"""A session's events go to one socket of its agent (a2ui.sessions.agentroute).

Two sockets of one agent (an agent process that runs twice): the person's session opens, is
cancelled, submits a form; exactly one socket sees each event, always the same one, and the
other one takes the session over when that socket closes. A socket opened with ``?events=all``
sees everything. Pushes work from either socket.
"""

import pytest

from a2ui.sessions import agentroute
from tests.wsutil import connect_agent, connect_user, init_session, recv, recv_until, send

pytestmark = pytest.mark.django_db(transaction=True)


async def _events(comm, quiet=0.3):
    """Every notification that arrives until ``quiet`` seconds pass without one."""
    out = []
    while not await comm.receive_nothing(quiet):
        out.append(await recv(comm))
    return out


def _methods(messages, sid):
    return [m["method"] for m in messages if m.get("params", {}).get("session_id") == sid]


async def _call(comm, rpc_id, method, **params):
    await send(comm, {"jsonrpc": "2.0", "id": rpc_id, "method": method, "params": params})
    return await recv_until(comm, lambda m: m.get("id") == rpc_id)


async def test_each_session_event_reaches_one_socket_the_same_one(stream_token, agent_key):
    first, second = await connect_agent(agent_key), await connect_agent(agent_key)
    person = await connect_user(stream_token)
    sid = await init_session(person)
    got = {first: await _events(first), second: await _events(second)}
    holder = first if _methods(got[first], sid) == ["session.opened"] else second
    other = second if holder is first else first
    assert _methods(got[holder], sid) == ["session.opened"]
    assert _methods(got[other], sid) == []

    # A push from the socket that does not hold the session still reaches the person.
    reply = await _call(other, 1, "ui.render", session_id=sid, component_id="f1",
                        component_type="form",
                        data={"fields": [{"name": "q", "type": "text", "label": "Q"}]})
    assert reply["result"]["delivered"] is True
    await recv(person)
    await send(person, {"jsonrpc": "2.0", "id": 2, "method": "user.respond",
                        "params": {"request_id": "f1", "value": {"q": "cats"}}})
    assert (await recv(person))["result"] == {"ok": True}
    await send(person, {"jsonrpc": "2.0", "id": 3, "method": "user.cancel",
                        "params": {"task_id": "t1", "reason": "stop"}})
    assert (await recv(person))["result"] == {"ok": True}
    assert _methods(await _events(holder), sid) == ["user.respond", "user.cancel"]
    assert _methods(await _events(other), sid) == []

    # The holder goes away: the other socket takes the session over.
    await holder.disconnect()
    await send(person, {"jsonrpc": "2.0", "id": 4, "method": "user.cancel",
                        "params": {"task_id": "t2"}})
    assert (await recv(person))["result"] == {"ok": True}
    note = await recv_until(other, lambda m: m.get("method") == "user.cancel")
    assert note["params"] == {"session_id": sid, "task_id": "t2"}
    await person.disconnect()
    await other.disconnect()


async def test_an_observer_socket_gets_every_event(stream_token, agent_key):
    worker = await connect_agent(agent_key)
    observer = await connect_agent(agent_key, "/ws/v4/a2ui/agent?events=all")
    person = await connect_user(stream_token)
    sid = await init_session(person)
    await send(person, {"jsonrpc": "2.0", "id": 2, "method": "user.cancel",
                        "params": {"task_id": "t1"}})
    assert (await recv(person))["result"] == {"ok": True}
    assert _methods(await _events(worker), sid) == ["session.opened", "user.cancel"]
    assert _methods(await _events(observer), sid) == ["session.opened", "user.cancel"]
    for comm in (worker, observer, person):
        await comm.disconnect()


async def test_sessions_spread_over_sockets_each_event_once(user, agent, agent_key):
    from channels.db import database_sync_to_async

    from a2ui import tokens

    sockets = [await connect_agent(agent_key) for _ in range(2)]
    people, sids = [], []
    for _ in range(4):
        issued = await database_sync_to_async(tokens.issue_stream_token)(user, agent)
        person = await connect_user(issued.token)
        sids.append(await init_session(person))
        people.append(person)
    seen = [await _events(s) for s in sockets]
    for sid in sids:
        assert sum(_methods(got, sid).count("session.opened") for got in seen) == 1
    for comm in (*sockets, *people):
        await comm.disconnect()


async def test_a_bad_events_mode_is_refused(agent_key):
    comm = await connect_agent(agent_key, "/ws/v4/a2ui/agent?events=some")
    reply = await recv(comm)
    assert reply["error"]["code"] == -32602
    assert reply["error"]["data"]["reason"] == "events must be 'one' or 'all'"
    assert (await comm.receive_output(1))["type"] == "websocket.close"


def test_mode_from_query():
    assert agentroute.mode_from_query(b"") == "one"
    assert agentroute.mode_from_query(b"events=all") == "all"
    assert agentroute.mode_from_query("x=1&events=one") == "one"
    for bad in (b"events=", b"events=ALL", b"events=one&events=all"):
        with pytest.raises(Exception) as info:
            agentroute.mode_from_query(bad)
        assert info.value.fault == "invalid_input"  # -32602 on the agent socket (above)


async def test_python_listeners_take_part_like_sockets(stream_token, agent, agent_key):
    from a2ui import agents

    socket = await connect_agent(agent_key)
    async with agents.events(agent) as listener, \
            agents.events(agent, events="all") as observer:
        person = await connect_user(stream_token)
        sid = await init_session(person)
        seen = await observer.next(timeout=3)
        assert seen == {"method": "session.opened", "params": seen["params"]}
        assert seen["params"]["session_id"] == sid
        on_socket = _methods(await _events(socket), sid)
        try:
            heard = await listener.next(timeout=0.5)
        except TimeoutError:
            heard = None
        # Exactly one of the two workers got it.
        assert (on_socket == ["session.opened"]) != (heard is not None), (on_socket, heard)
        await person.disconnect()
    await socket.disconnect()


def test_a_bad_listener_mode_is_refused(agent):
    from a2ui import agents

    with pytest.raises(ValueError):
        agents.events(agent, events="some")


async def test_one_wake_up_per_event_whatever_the_number_of_sockets(
    user, agent, agent_key, monkeypatch
):
    """Five sockets of one agent in one process: each session event wakes one socket, not five
    (the process's relay decides; agentroute), and new sessions go round the sockets."""
    from channels.db import database_sync_to_async

    from a2ui import tokens
    from a2ui.jsonrpc.agent import A2UIAgentConsumer

    woken = []
    dispatch = A2UIAgentConsumer.dispatch
    deliver = getattr(A2UIAgentConsumer, "agent_event", None)  # the relay's hand-over

    async def counting_dispatch(self, message):
        if message.get("type") == "a2ui.agent_event":
            woken.append(message)
        return await dispatch(self, message)

    async def counting_deliver(self, event):
        woken.append(event)
        return await deliver(self, event)

    monkeypatch.setattr(A2UIAgentConsumer, "dispatch", counting_dispatch)
    if deliver is not None:
        monkeypatch.setattr(A2UIAgentConsumer, "agent_event", counting_deliver)
    sockets = [await connect_agent(agent_key) for _ in range(5)]
    people, sids = [], []
    for _ in range(5):
        issued = await database_sync_to_async(tokens.issue_stream_token)(user, agent)
        person = await connect_user(issued.token)
        sids.append(await init_session(person))
        people.append(person)
    seen = [await _events(s) for s in sockets]
    assert len(woken) == 5  # one per session.opened
    for sid in sids:
        assert sum(_methods(got, sid).count("session.opened") for got in seen) == 1
    assert all(len(got) == 1 for got in seen), seen  # one new session each
    for comm in (*sockets, *people):
        await comm.disconnect()


async def test_the_relay_leaves_with_the_last_socket_and_comes_back(stream_token, agent_key):
    first = await connect_agent(agent_key)
    await first.disconnect()
    second = await connect_agent(agent_key)  # the relay joins the group again
    person = await connect_user(stream_token)
    sid = await init_session(person)
    assert _methods(await _events(second), sid) == ["session.opened"]
    for comm in (second, person):
        await comm.disconnect()
