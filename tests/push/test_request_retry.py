"""Asking again is safe (issue 23, item 4): a request is its own idempotency key.

The same request again (same session, ``request_id``, method and params, compared by the hash
stored with the request) is a retry: while the request is open the retry waits on it (the
person is not asked twice, the old waiter is told -32011), once it has an outcome the retry
gets it at once (again, if a waiter that died took it first). Another request under a used
``request_id`` is -32602. And ``a2ui.pending`` is one operation on every transport: REST's
``POST /api/v4/requests/take`` too. (MCP: tests/mcp/test_mcp_pending.py; a SIGKILLed MCP
agent: tests/live/test_live_mcp_pending.py.)
"""

from datetime import timedelta

import pytest
from channels.db import database_sync_to_async
from django.utils import timezone
from rest_framework.test import APIClient

from a2ui import agents
from a2ui.models import PendingRequest
from a2ui.requests import pending
from a2ui.sessions import admission
from tests.push.test_answer_delivery import answer, ask, call, row, rpc, setup
from tests.wsutil import connect_agent, recv_until, send

pytestmark = pytest.mark.django_db(transaction=True)

ASKED = {"request_id": "r1", "input_type": "text", "prompt": "Your name?"}


async def test_a_retry_waits_on_the_open_request_and_the_person_is_asked_once(
        stream_token, agent_key):
    agent_ws, user, sid = await setup(stream_token, agent_key)
    await ask(agent_ws, user, sid)  # JSON-RPC id "ask-r1"
    # The same request again, its keys in another order, under another JSON-RPC id.
    await send(agent_ws, rpc("ui.request_input", {
        "prompt": "Your name?", "input_type": "text", "request_id": "r1", "session_id": sid},
        "again"))
    lost = await recv_until(agent_ws, lambda m: m.get("id") == "ask-r1")
    assert lost["error"]["code"] == -32011, lost
    assert await user.receive_nothing(0.3)  # not asked twice
    assert (await answer(user))["result"] == {"ok": True}
    got = await recv_until(agent_ws, lambda m: m.get("id") == "again")
    assert got["result"] == "Ada"
    assert await database_sync_to_async(PendingRequest.objects.count)() == 1
    await agent_ws.disconnect()
    await user.disconnect()


async def test_a_retry_as_a_notification_answers_the_request_it_replaces(
        stream_token, agent_key):
    """Asked as a request, asked again as a notification on the same socket: the first call is
    answered -32011 (it would wait forever), the answer comes as user.respond."""
    agent_ws, user, sid = await setup(stream_token, agent_key)
    await ask(agent_ws, user, sid)
    await send(agent_ws, rpc("ui.request_input", {"session_id": sid, **ASKED}))
    lost = await recv_until(agent_ws, lambda m: m.get("id") == "ask-r1")
    assert lost["error"]["code"] == -32011, lost
    assert (await answer(user))["result"] == {"ok": True}
    note = await recv_until(agent_ws, lambda m: m.get("method") == "user.respond")
    assert note["params"] == {"session_id": sid, "request_id": "r1", "value": "Ada"}
    await agent_ws.disconnect()
    await user.disconnect()


async def test_a_retry_after_the_answer_gets_it_at_once_every_time(stream_token, agent_key):
    agent_ws, user, sid = await setup(stream_token, agent_key)
    await ask(agent_ws, user, sid)
    await agent_ws.disconnect()  # the agent's process died
    assert (await answer(user))["result"] == {"ok": True}
    await recv_until(user, lambda m: m.get("method") == "a2ui.request_closed")
    back = await connect_agent(agent_key)
    # The person is told the agent is back (a2ui.sessions.presence); nothing else after.
    await recv_until(user, lambda m: m.get("method") == "a2ui.agent_status"
                     and m["params"]["status"] == "online")
    for rpc_id in ("retry-1", "retry-2"):  # the first response may be lost too: safe again
        got = await call(back, "ui.request_input", {"session_id": sid, **ASKED}, rpc_id)
        assert got["result"] == "Ada", got
        assert (await row(sid, "r1")).delivered_at is not None
    assert await user.receive_nothing(0.3)  # the person is not asked again
    # Another request under the same request_id is refused, and changes nothing.
    other = await call(back, "ui.request_input",
                       {"session_id": sid, **ASKED, "prompt": "Your city?"}, "other")
    assert other["error"]["code"] == -32602
    assert "another request" in other["error"]["message"]
    assert other["error"]["data"]["path"] == "params.request_id"
    confirm = await call(back, "ui.confirm", {"session_id": sid, "request_id": "r1",
                                               "title": "Your name?"}, "kind")
    assert confirm["error"]["code"] == -32602
    stored = await row(sid, "r1")
    assert stored.params["prompt"] == "Your name?" and stored.answer == "Ada"
    assert len(stored.content_hash) == 64
    await back.disconnect()
    await user.disconnect()


async def test_a_retry_past_the_deadline_times_out_at_once(stream_token, agent_key):
    agent_ws, user, sid = await setup(stream_token, agent_key)
    await ask(agent_ws, user, sid)
    await agent_ws.disconnect()
    await database_sync_to_async(PendingRequest.objects.filter(request_id="r1").update)(
        deadline=timezone.now() - timedelta(seconds=1))
    back = await connect_agent(agent_key)
    got = await call(back, "ui.request_input", {"session_id": sid, **ASKED}, "late")
    assert got["error"]["code"] == -32004, got
    closed = await recv_until(user, lambda m: m.get("method") == "a2ui.request_closed")
    assert closed["params"] == {"request_id": "r1", "status": "timed_out"}
    await back.disconnect()
    await user.disconnect()


async def test_the_python_api_retry_returns_the_stored_answer(stream_token, agent_key, agent):
    agent_ws, user, sid = await setup(stream_token, agent_key)
    await ask(agent_ws, user, sid)
    await agent_ws.disconnect()
    await answer(user, value={"city": "Oslo"})
    for _ in range(2):
        assert await agents.arequest_input(agent, sid, "text", "Your name?",
                                           request_id="r1") == {"city": "Oslo"}
    with pytest.raises(Exception) as refused:
        await agents.arequest_input(agent, sid, "number", "Your name?", request_id="r1")
    assert refused.value.code == -32602
    await user.disconnect()


async def test_rest_takes_what_waits_once(stream_token, agent_key):
    agent_ws, user, sid = await setup(stream_token, agent_key)
    await ask(agent_ws, user, sid)
    await agent_ws.disconnect()
    await answer(user)

    def take(body=None, fmt="json"):
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {agent_key}")
        return client.post("/api/v4/requests/take", body, format=fmt)

    for bad in ({"session_id": "x"}, {"session_id": 5}, [1]):
        assert (await database_sync_to_async(take)(bad)).status_code == 400
    response = await database_sync_to_async(take)({"session_id": sid})
    assert response.status_code == 200, response.content
    [item] = response.json()["requests"]
    assert item["status"] == "answered" and item["answer"] == "Ada"
    assert (await database_sync_to_async(take)()).json() == {"requests": []}  # once
    assert (await row(sid, "r1")).delivered_at is not None
    await user.disconnect()


def test_the_content_hash_is_canonical():
    a = pending.content_hash("input", {"request_id": "r", "prompt": "é", "n": [1, {"b": 1, "a": 2}]})
    b = pending.content_hash("input", {"n": [1, {"a": 2, "b": 1}], "prompt": "é", "request_id": "r"})
    assert a == b and len(a) == 64
    assert pending.content_hash("confirm", {"request_id": "r", "prompt": "é",
                                            "n": [1, {"b": 1, "a": 2}]}) != a
    assert pending.content_hash("input", {"request_id": "r", "prompt": "e",
                                          "n": [1, {"b": 1, "a": 2}]}) != a


def test_a_retry_that_cannot_take_the_open_request_is_told_so(user, agent, monkeypatch):
    """Other waiters kept re-pointing the request while the retry tried (``_repoint`` gave up):
    -32011, not a waiter left on a request whose outcome goes elsewhere."""
    from a2ui import tokens
    from a2ui.core.errors import DomainError, Fault

    session = admission.open_session(tokens.issue_stream_token(user, agent).record, {}, {})
    params = {"request_id": "r", "input_type": "text", "prompt": "?"}
    pending.create(session.pk, "input", params, reply_channel="socket-A")
    monkeypatch.setattr(pending, "_repoint", lambda *a, **k: False)
    with pytest.raises(DomainError) as caught:
        pending.ask(session.pk, "input", dict(params), "socket-B", 7)
    assert caught.value.fault is Fault.REQUEST_TAKEN_OVER
    stored = PendingRequest.objects.get(request_id="r")
    assert (stored.reply_channel, stored.status) == ("socket-A", "pending")
