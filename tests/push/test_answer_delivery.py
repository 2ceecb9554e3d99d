"""A person's answer is never acknowledged and lost (docs/agents.md, "When the agent goes away").

The answer is stored with its PendingRequest row and counts as delivered only once an agent
took it. An agent socket that comes back lists and takes over what waits for it with
``a2ui.pending``; each outcome reaches one socket once. An answer no agent can ever get is
refused to the person. (The SIGKILL of a real Daphne process: tests/live/test_live_answers.py.)
"""

from datetime import timedelta

import pytest
from channels.db import database_sync_to_async
from django.utils import timezone
from rest_framework.test import APIClient

from a2ui import agents, tokens
from a2ui.models import Agent, PendingRequest
from a2ui.push import sweep
from a2ui.sessions import admission
from tests.wsutil import (
    agent_and_person,
    connect_agent,
    recv,
    recv_until,
    send,
)

pytestmark = pytest.mark.django_db(transaction=True)


def rpc(method, params, rpc_id=None):
    msg = {"jsonrpc": "2.0", "method": method, "params": params}
    if rpc_id is not None:
        msg["id"] = rpc_id
    return msg


async def call(comm, method, params, rpc_id):
    await send(comm, rpc(method, params, rpc_id))
    return await recv_until(comm, lambda m: m.get("id") == rpc_id and "method" not in m)


async def ask(agent_ws, user, sid, request_id="r1", method="ui.request_input", **extra):
    """The agent asks (as a request: the answer would be its response); the person sees it."""
    params = {"session_id": sid, "request_id": request_id, **extra}
    if method == "ui.request_input":
        params.setdefault("input_type", "text")
        params.setdefault("prompt", "Your name?")
    else:
        params.setdefault("title", "Go?")
    await send(agent_ws, rpc(method, params, f"ask-{request_id}"))
    await recv_until(user, lambda m: m.get("method") == method)


async def answer(user, request_id="r1", value="Ada", rpc_id="ans"):
    await send(user, rpc("user.respond", {"request_id": request_id, "value": value}, rpc_id))
    return await recv_until(user, lambda m: m.get("id") == rpc_id)


setup = agent_and_person


row = database_sync_to_async(
    lambda sid, rid: PendingRequest.objects.get(session_id=sid, request_id=rid)
)


async def test_answer_given_while_the_agent_is_away_reaches_it_once(stream_token, agent_key):
    agent_ws, user, sid = await setup(stream_token, agent_key)
    await ask(agent_ws, user, sid)
    await agent_ws.disconnect()  # the asking socket is gone
    assert (await answer(user))["result"] == {"ok": True}
    stored = await row(sid, "r1")
    assert stored.status == "answered" and stored.delivered_at is None

    back = await connect_agent(agent_key)
    hint = await recv_until(back, lambda m: True)  # the first thing a new socket hears
    assert hint == {"jsonrpc": "2.0", "method": "a2ui.pending", "params": {"outcomes": 1}}
    told = await recv(back)  # then the live session nobody holds (the asker went)
    assert told["method"] == "session.resumed" and told["params"]["session_id"] == sid
    reply = await call(back, "a2ui.pending", {}, "p1")
    [item] = reply["result"]["requests"]
    assert item["session_id"] == sid and item["request_id"] == "r1"
    assert item["method"] == "ui.request_input" and item["status"] == "answered"
    assert item["answer"] == "Ada" and item["params"]["prompt"] == "Your name?"
    assert (await row(sid, "r1")).delivered_at is not None
    again = await call(back, "a2ui.pending", {}, "p2")
    assert again["result"] == {"requests": []}  # exactly once
    await back.disconnect()
    third = await connect_agent(agent_key)
    told = await recv(third)  # nothing waits any more: no hint, only the session
    assert told["method"] == "session.resumed" and told["params"]["session_id"] == sid
    assert await third.receive_nothing(0.3)
    await third.disconnect()
    await user.disconnect()


async def test_an_open_request_is_taken_over_and_answered_there(stream_token, agent_key):
    agent_ws, user, sid = await setup(stream_token, agent_key)
    await ask(agent_ws, user, sid, method="ui.confirm")
    await agent_ws.disconnect()
    back = await connect_agent(agent_key)
    reply = await call(back, "a2ui.pending", {"session_id": sid}, "p")
    [item] = reply["result"]["requests"]
    assert item["status"] == "pending" and item["method"] == "ui.confirm"
    assert "answer" not in item
    await send(user, rpc("user.approve", {"request_id": "r1", "approved": True}, "ok"))
    assert (await recv_until(user, lambda m: m.get("id") == "ok"))["result"] == {"ok": True}
    note = await recv_until(back, lambda m: m.get("method") == "user.approve")
    assert note["params"] == {"session_id": sid, "request_id": "r1", "approved": True,
                              "reason": ""}
    assert (await row(sid, "r1")).delivered_at is not None
    assert (await call(back, "a2ui.pending", {}, "p2"))["result"]["requests"] == []
    await back.disconnect()
    await user.disconnect()


async def test_two_sockets_racing_get_the_answer_once(stream_token, agent_key):
    agent_ws, user, sid = await setup(stream_token, agent_key)
    await ask(agent_ws, user, sid)
    await agent_ws.disconnect()
    await answer(user)
    first, second = await connect_agent(agent_key), await connect_agent(agent_key)
    await send(first, rpc("a2ui.pending", {}, "a"))
    await send(second, rpc("a2ui.pending", {}, "b"))
    got = [(await recv_until(first, lambda m: m.get("id") == "a"))["result"]["requests"],
           (await recv_until(second, lambda m: m.get("id") == "b"))["result"]["requests"]]
    assert sorted(len(g) for g in got) == [0, 1]
    await first.disconnect()
    await second.disconnect()
    await user.disconnect()


async def test_a_live_waiter_that_lost_its_request_is_told(stream_token, agent_key):
    agent_ws, user, sid = await setup(stream_token, agent_key)
    await ask(agent_ws, user, sid)
    other = await connect_agent(agent_key)
    assert len((await call(other, "a2ui.pending", {}, "p"))["result"]["requests"]) == 1
    lost = await recv_until(agent_ws, lambda m: m.get("id") == "ask-r1")
    assert lost["error"]["code"] == -32011
    assert lost["error"]["data"] == {"session_id": sid, "request_id": "r1"}
    await answer(user)
    note = await recv_until(other, lambda m: m.get("method") == "user.respond")
    assert note["params"]["value"] == "Ada"
    assert await agent_ws.receive_nothing(0.3)  # nothing twice
    await other.disconnect()
    await agent_ws.disconnect()
    await user.disconnect()


async def test_an_answer_no_agent_can_get_is_refused(stream_token, agent_key, agent):
    agent_ws, user, sid = await setup(stream_token, agent_key)
    await ask(agent_ws, user, sid)
    await database_sync_to_async(
        lambda: Agent.objects.filter(pk=agent.pk).update(is_active=False))()
    reply = await answer(user)
    assert reply["error"]["code"] == -32000
    assert reply["error"]["data"] == {"request_id": "r1"}
    assert (await row(sid, "r1")).status == "pending"  # nothing changed
    await agent_ws.disconnect()
    await user.disconnect()


async def test_a_dead_waiters_request_times_out_at_its_deadline_not_before(stream_token,
                                                                            agent_key):
    agent_ws, user, sid = await setup(stream_token, agent_key)
    await ask(agent_ws, user, sid, timeout_seconds=30)
    await agent_ws.disconnect()  # its timer goes with it
    assert await sweep.sweep() == (0, 0)  # before the deadline: left for a taker
    assert (await row(sid, "r1")).status == "pending"
    await database_sync_to_async(lambda: PendingRequest.objects.filter(request_id="r1").update(
        deadline=timezone.now() - timedelta(seconds=1)))()
    assert (await sweep.sweep())[1] == 1
    back = await connect_agent(agent_key)
    [item] = (await call(back, "a2ui.pending", {}, "p"))["result"]["requests"]
    assert item["status"] == "timed_out" and item["answer"] is None
    await back.disconnect()
    await user.disconnect()


async def test_a_request_taken_over_times_out_on_the_new_socket(stream_token, agent_key):
    agent_ws, user, sid = await setup(stream_token, agent_key)
    await ask(agent_ws, user, sid, request_id="t", method="ui.confirm", timeout_seconds=1)
    await agent_ws.disconnect()
    back = await connect_agent(agent_key)
    await call(back, "a2ui.pending", {}, "p")
    note = await recv_until(back, lambda m: m.get("method") == "request.closed", timeout=4)
    assert note["params"] == {"session_id": sid, "request_id": "t", "status": "timed_out",
                              "method": "ui.confirm"}
    await back.disconnect()
    await user.disconnect()


async def test_pending_lists_only_the_callers_requests(stream_token, agent_key):
    agent_ws, user, sid = await setup(stream_token, agent_key)
    await ask(agent_ws, user, sid)
    _, other_key = await database_sync_to_async(tokens.create_agent)("other-agent")
    stranger = await connect_agent(other_key)
    assert (await call(stranger, "a2ui.pending", {}, "p"))["result"] == {"requests": []}
    bad = await call(stranger, "a2ui.pending", {"session_id": "nope"}, "q")
    assert bad["error"]["code"] == -32000
    bad = await call(stranger, "a2ui.pending", ["x"], "r")
    assert bad["error"]["code"] == -32602
    await stranger.disconnect()
    await agent_ws.disconnect()
    await user.disconnect()


async def test_rest_lists_without_taking(stream_token, agent_key):
    agent_ws, user, sid = await setup(stream_token, agent_key)
    await ask(agent_ws, user, sid)
    await agent_ws.disconnect()
    await answer(user)

    def get(query=""):
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {agent_key}")
        return client.get(f"/api/v4/requests{query}")

    for _ in range(2):  # a read: the same answer both times
        response = await database_sync_to_async(get)(f"?session_id={sid}")
        assert response.status_code == 200
        [item] = response.json()["requests"]
        assert item["status"] == "answered" and item["answer"] == "Ada"
    assert (await database_sync_to_async(get)("?session_id=x")).status_code == 400
    back = await connect_agent(agent_key)
    assert len((await call(back, "a2ui.pending", {}, "p"))["result"]["requests"]) == 1
    assert (await database_sync_to_async(get)()).json() == {"requests": []}
    await back.disconnect()
    await user.disconnect()


async def test_python_api_takes_a_lost_answer_once(stream_token, agent_key, agent):
    agent_ws, user, sid = await setup(stream_token, agent_key)
    await ask(agent_ws, user, sid)
    await agent_ws.disconnect()
    await answer(user, value=42)
    [item] = await agents.apending(agent, sid)
    assert item["answer"] == 42 and item["status"] == "answered"
    assert await agents.apending(agent) == []
    await user.disconnect()


def test_racing_takers_tell_the_waiter_they_really_replaced(user, agent, monkeypatch):
    """Two sockets take over the same open request at once: the one that loses it is told,
    even when the winner read the request before the loser re-pointed it."""
    from a2ui.requests import pending

    session = admission.open_session(tokens.issue_stream_token(user, agent).record, {}, {})
    pending.create(session.pk, "input", {
        "request_id": "r", "input_type": "text", "prompt": "?"}, reply_channel="dead-A")
    stale = pending._waiting(agent.pk)  # read by Y before X re-points the request
    _, _, moved = pending.take_over(agent.pk, "socket-X")
    assert [m[0] for m in moved] == ["dead-A"]
    monkeypatch.setattr(pending, "_waiting", lambda *a, **k: stale)
    items, taken, moved = pending.take_over(agent.pk, "socket-Y")
    assert [m[0] for m in moved] == ["socket-X"]
    assert [i["status"] for i in items] == ["pending"] and len(taken) == 1
    assert PendingRequest.objects.get(request_id="r").reply_channel == "socket-Y"
