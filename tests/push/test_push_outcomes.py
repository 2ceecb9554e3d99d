"""A push's answer is what happened, and a retry with its idempotency key is safe.

Faults are injected at each step of a push: before the store, at its commit (committed, the
connection lost before the reply), after the commit (Redis fails to number or deliver it). In
each case what the agent is told must match what the person's client ends up showing: a push
answered as failed is never shown, one answered as delivered (or shown late) is shown exactly
once, and a retry with the same key shows nothing twice.
"""

import asyncio
import json
from datetime import timedelta

import pytest
from channels.db import database_sync_to_async
from django.db import OperationalError
from django.db.backends.base.base import BaseDatabaseWrapper
from django.utils import timezone
from rest_framework.test import APIClient

from a2ui import agents
from a2ui.infra import shared
from a2ui.models import A2UISessionLog, PushKey, RenderedComponent, SessionActivity
from a2ui.push import fanout as stream
from a2ui.push import keys as outcomes
from a2ui.surfaces import components
from tests.wsutil import (
    agent_and_person,
    connect_agent,
    connect_user,
    init_session,
    recv,
    recv_until,
    send,
)

pytestmark = pytest.mark.django_db(transaction=True)

LOST = "server closed the connection unexpectedly"


class Screen:
    """What the person's JSON-RPC client shows: components by id and the chat transcript by
    message id (as the web client keeps them), folded from what its socket sends (live events
    and resync snapshots alike). ``transcript``: the messages' contents, in order."""

    def __init__(self, comm):
        self.comm = comm
        self.components = {}
        self.messages = {}
        self.notices = []

    @property
    def transcript(self):
        return list(self.messages.values())

    async def settle(self, quiet=0.6):
        """Take every message until the socket is quiet (a resync comes within a second)."""
        while not await self.comm.receive_nothing(quiet):
            self.take(await recv(self.comm))
        return self

    def take(self, msg):
        method, params = msg.get("method"), msg.get("params") or {}
        if method == "ui.render":
            self.components[params["component_id"]] = params["data"]
        elif method == "ui.notify":
            self.notices.append(params["title"])
        elif method == "ui.activity" and params["kind"] == "snapshot":
            self.messages = {m["message_id"]: m["content"]
                             for m in params["data"]["transcript"]}
        elif method == "ui.activity" and params["kind"] == "message":
            self.messages[params["data"]["message_id"]] = params["data"]["content"]


async def pair(stream_token, agent_key):
    agent, person, sid = await agent_and_person(stream_token, agent_key)
    return agent, Screen(person), sid


async def call(agent, rpc_id, method, params):
    await send(agent, {"jsonrpc": "2.0", "id": rpc_id, "method": method, "params": params})
    return await recv_until(agent, lambda m: m.get("id") == rpc_id)


def message(sid, text, **extra):
    """A chat message with no message_id: the server gives it one (a new one per push, or one
    derived from the idempotency key), so a push stored twice is shown twice."""
    return {"session_id": sid, "event": {"type": "TEXT_MESSAGE", "sender": "bot",
                                         "content": text}, **extra}


@database_sync_to_async
def stored_transcript(sid):
    row = SessionActivity.objects.filter(session_id=sid).first()
    return [m["content"] for m in row.transcript] if row else []


@database_sync_to_async
def stored_components(sid):
    return {c.component_id: c.data for c in RenderedComponent.objects.filter(session_id=sid)}


# Fault injection ------------------------------------------------------------------------------


def lose_connection_before_store(monkeypatch):
    """The connection is gone before anything is stored (the store raises at once)."""
    def store_render(*args, **kwargs):
        raise OperationalError(LOST)
    monkeypatch.setattr(components, "store_render", store_render)
    from a2ui.surfaces import activity

    def store(*args, **kwargs):
        raise OperationalError(LOST)
    monkeypatch.setattr(activity, "store", store)


def lose_connection_at_commit(monkeypatch):
    """The commit happens, then the connection drops before its reply: the caller gets an
    OperationalError for a change that is stored. An autocommit statement (a render without a
    key) is its own commit."""
    state = {"armed": True}
    real_commit = BaseDatabaseWrapper.commit
    real_render = components.store_render

    def commit(self):
        real_commit(self)
        if state["armed"]:
            state["armed"] = False
            raise OperationalError(LOST)

    def store_render(*args, **kwargs):
        real_render(*args, **kwargs)
        from django.db import connection
        if state["armed"] and not connection.in_atomic_block:
            state["armed"] = False
            raise OperationalError(LOST)

    monkeypatch.setattr(BaseDatabaseWrapper, "commit", commit)
    monkeypatch.setattr(components, "store_render", store_render)


def fail_after_commit(monkeypatch):
    """Stored and committed, then Redis fails to number it (once)."""
    state = {"armed": True}
    real = shared.next_seq_and_sockets

    async def next_seq_and_sockets(*args, **kwargs):
        if state["armed"]:
            state["armed"] = False
            raise ConnectionError("Redis unreachable")
        return await real(*args, **kwargs)

    monkeypatch.setattr(shared, "next_seq_and_sockets", next_seq_and_sockets)


# Without a key ---------------------------------------------------------------------------------


async def test_connection_lost_at_the_commit_is_outcome_unknown_and_shown_once(
        stream_token, agent_key, monkeypatch):
    agent, screen, sid = await pair(stream_token, agent_key)
    lose_connection_at_commit(monkeypatch)
    reply = await call(agent, 1, "ui.render", {"session_id": sid, "component_id": "c1",
                                               "component_type": "card", "data": {"title": "A"}})
    # Not -32603 (that says "failed", and it is stored): the outcome is unknown to the server.
    assert reply["error"]["code"] == -32012, reply
    assert reply["error"]["data"] == {"session_id": sid}
    await screen.settle()
    assert await stored_components(sid) == {"c1": {"title": "A"}}
    assert screen.components == {"c1": {"title": "A"}}  # the clients resynced: shown once


async def test_connection_lost_before_the_store_is_outcome_unknown_and_not_shown(
        stream_token, agent_key, monkeypatch):
    agent, screen, sid = await pair(stream_token, agent_key)
    lose_connection_before_store(monkeypatch)
    reply = await call(agent, 1, "ui.render", {"session_id": sid, "component_id": "c1",
                                               "component_type": "card", "data": {"title": "A"}})
    assert reply["error"]["code"] == -32012, reply
    await screen.settle()
    assert await stored_components(sid) == {} and screen.components == {}


async def test_redis_failing_after_the_commit_is_success_with_a_warning_and_shown_once(
        stream_token, agent_key, monkeypatch):
    agent, screen, sid = await pair(stream_token, agent_key)
    fail_after_commit(monkeypatch)
    reply = await call(agent, 1, "agui.event", message(sid, "one"))
    assert reply["result"]["delivered"] is True and reply["result"]["seq"] is None, reply
    assert reply["result"]["warning"] == outcomes.WARNING_LATE
    await screen.settle()
    assert await stored_transcript(sid) == ["one"]
    assert screen.transcript == ["one"]


async def test_the_repair_is_retried_while_redis_is_away(stream_token, agent_key, monkeypatch):
    agent, screen, sid = await pair(stream_token, agent_key)
    monkeypatch.setattr(stream, "REPAIR_INTERVAL", 0.05)
    failures = {"left": 4}  # the push's own number, then three tries of the repair
    real = shared.next_seq_and_sockets

    async def flaky(*args, **kwargs):
        if failures["left"]:
            failures["left"] -= 1
            raise ConnectionError("Redis unreachable")
        return await real(*args, **kwargs)

    monkeypatch.setattr(shared, "next_seq_and_sockets", flaky)
    reply = await call(agent, 1, "agui.event", message(sid, "late"))
    assert reply["result"]["warning"] == outcomes.WARNING_LATE, reply
    await screen.settle()
    assert failures["left"] == 0 and screen.transcript == ["late"]


# With a key: every step, then the retry --------------------------------------------------------


@pytest.mark.parametrize("fault, first", [
    (lose_connection_before_store, "failed"),
    (lose_connection_at_commit, "late"),
    (fail_after_commit, "late"),
])
async def test_a_keyed_push_at_each_fault_then_its_retry_is_shown_once(
        stream_token, agent_key, monkeypatch, fault, first):
    agent, screen, sid = await pair(stream_token, agent_key)
    fault(monkeypatch)
    push = message(sid, "hello", idempotency_key="k-1")
    reply = await call(agent, 1, "agui.event", push)
    await screen.settle()
    if first == "failed":  # found out: not stored, so a plain failure, and nothing shown
        assert reply["error"]["code"] == -32603, reply
        assert await stored_transcript(sid) == [] and screen.transcript == []
    else:  # stored: a success (shown when the clients resync), never an error
        assert reply["result"]["warning"] == outcomes.WARNING_LATE, reply
        assert await stored_transcript(sid) == ["hello"]
        assert screen.transcript == ["hello"]
    monkeypatch.undo()
    retry = await call(agent, 2, "agui.event", push)
    assert retry["result"]["delivered"] is True, retry
    assert retry["result"].get("replayed", False) is (first != "failed")
    await screen.settle()
    assert await stored_transcript(sid) == ["hello"]
    assert screen.transcript == ["hello"]


async def test_a_retry_racing_the_original_waits_for_it_and_replays(
        stream_token, agent_key, monkeypatch):
    """Two sockets push the same key at once: one is stored, the other replays it."""
    agent, screen, sid = await pair(stream_token, agent_key)
    other = await connect_agent(agent_key)
    push = message(sid, "race", idempotency_key="k-race")
    replies = await asyncio.gather(call(agent, 1, "agui.event", push),
                                   call(other, 1, "agui.event", push))
    assert sorted(bool(r["result"].get("replayed")) for r in replies) == [False, True]
    await screen.settle()
    assert await stored_transcript(sid) == ["race"] and screen.transcript == ["race"]


# Each transport --------------------------------------------------------------------------------


async def test_agent_socket_retries_each_push_method(stream_token, agent_key):
    agent, screen, sid = await pair(stream_token, agent_key)
    pushes = [
        ("ui.render", {"component_id": "c1", "component_type": "card", "data": {"title": "A"}}),
        ("ui.update", {"component_id": "c1", "operation": "merge", "data": {"title": "B"}}),
        ("ui.notify", {"level": "info", "title": "once"}),
        ("agui.event", {"event": {"type": "TEXT_MESSAGE", "sender": "bot", "content": "no id given"}}),
    ]
    for number, (method, params) in enumerate(pushes):
        params = {"session_id": sid, "idempotency_key": f"k{number}", **params}
        first = await call(agent, 10 + number, method, params)
        assert isinstance(first["result"]["seq"], int), first
        again = await call(agent, 20 + number, method, params)
        assert again["result"] == {"delivered": True, "seq": None, "replayed": True}, again
    await screen.settle()
    assert screen.notices == ["once"] and len(screen.transcript) == 1
    assert await stored_components(sid) == {"c1": {"title": "B"}}


async def test_v09_batch_retry_answers_the_original_outcome(stream_token, agent_key):
    from tests.surfaces.helpers import BASIC_CATALOG_ID, V09_CAPS

    bot = await connect_agent(agent_key)
    person = await connect_user(stream_token)
    sid = await init_session(person, capabilities=V09_CAPS)
    await recv_until(bot, lambda m: m.get("method") == "session.opened")
    batch = [{"version": "v0.9", "createSurface": {
        "surfaceId": "s1", "catalogId": BASIC_CATALOG_ID}}]
    params = {"session_id": sid, "messages": batch, "idempotency_key": "v-1"}
    first = await call(bot, 1, "a2ui.v09", params)
    assert first["result"] == {"delivered": 1, "seq": 1, "clients": {"jsonrpc": 1}, "reached": {"jsonrpc": 1}}, first
    again = await call(bot, 2, "a2ui.v09", params)
    assert again["result"] == {"delivered": 1, "seq": 1, "replayed": True}, again
    other = await call(bot, 3, "a2ui.v09", {**params, "idempotency_key": "v-2"})
    assert other["error"]["code"] == -32602  # stored twice it would have been (duplicate id)
    # Closed here, so their clean-up (the session detached) ends before the database's flush.
    await person.disconnect()
    await bot.disconnect()


async def test_same_key_for_a_different_push_is_refused(stream_token, agent_key):
    agent, screen, sid = await pair(stream_token, agent_key)
    assert "result" in await call(agent, 1, "agui.event", message(sid, "a", idempotency_key="k"))
    reply = await call(agent, 2, "agui.event", message(sid, "b", idempotency_key="k"))
    assert reply["error"]["code"] == -32602, reply
    assert reply["error"]["data"] == {
        "path": "params.idempotency_key",
        "reason": "already used in this session for a different push"}
    assert await stored_transcript(sid) == ["a"]


@pytest.mark.parametrize("key", ["", 7, "x" * 129, "bad\x00key"])
async def test_a_bad_key_is_refused_before_anything_is_stored(stream_token, agent_key, key):
    agent, screen, sid = await pair(stream_token, agent_key)
    reply = await call(agent, 1, "agui.event", message(sid, "a", idempotency_key=key))
    assert reply["error"]["code"] == -32602 and \
        reply["error"]["data"]["path"] == "params.idempotency_key", reply
    assert await stored_transcript(sid) == []


async def test_requests_take_no_key(stream_token, agent_key):
    agent, screen, sid = await pair(stream_token, agent_key)
    reply = await call(agent, 1, "ui.request_input", {
        "session_id": sid, "request_id": "r1", "input_type": "text", "prompt": "?",
        "idempotency_key": "k"})
    assert reply["error"]["code"] == -32602, reply


def test_rest_retries_with_the_idempotency_key_header(user, agent, agent_key):
    session = A2UISessionLog.objects.create(agent=agent, user=user, state="active")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {agent_key}")
    base = f"/api/v4/sessions/{session.session_id}"
    batch = [{"jsonrpc": "2.0", "method": "ui.render", "params": {
        "component_id": "c1", "component_type": "card", "data": {"title": "A"}}},
        {"jsonrpc": "2.0", "method": "ui.update", "params": {
            "component_id": "c1", "operation": "merge", "data": {"title": "B"}}}]
    first = client.post(f"{base}/messages", batch, format="json", HTTP_IDEMPOTENCY_KEY="b-1")
    assert first.status_code == 202 and "replayed" not in first.json(), first.content
    again = client.post(f"{base}/messages", batch, format="json", HTTP_IDEMPOTENCY_KEY="b-1")
    assert again.status_code == 202, again.content
    assert again.json() == {"delivered": [{"method": "ui.render", "seq": None},
                                          {"method": "ui.update", "seq": None}],
                            "replayed": True}
    event = {"event": {"type": "TEXT_MESSAGE", "sender": "bot", "content": "hi"}}
    for _ in range(2):
        answer = client.post(f"{base}/agui", event, format="json", HTTP_IDEMPOTENCY_KEY="a-1")
        assert answer.status_code == 202, answer.content
    assert answer.json() == {"delivered": True, "seq": None, "replayed": True}
    assert len(SessionActivity.objects.get(session=session).transcript) == 1
    bad = client.post(f"{base}/agui", event, format="json", HTTP_IDEMPOTENCY_KEY="x" * 200)
    assert bad.status_code == 400 and bad.json()["error"]["data"]["path"] == "Idempotency-Key"
    assert PushKey.objects.filter(session=session).count() == 2


def test_rest_connection_lost_is_503(user, agent, agent_key, monkeypatch):
    session = A2UISessionLog.objects.create(agent=agent, user=user, state="active")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {agent_key}")
    lose_connection_before_store(monkeypatch)
    answer = client.post(f"/api/v4/sessions/{session.session_id}/agui",
                         {"event": {"type": "TEXT_MESSAGE", "sender": "bot", "content": "hi"}}, format="json")
    assert answer.status_code == 503, answer.content
    assert answer.json()["error"]["code"] == -32012


async def test_python_api_retries(agent, stream_token, agent_key):
    bot, screen, sid = await pair(stream_token, agent_key)
    first = await agents.arender(agent, sid, "card", {"title": "A"}, idempotency_key="p-1")
    again = await agents.arender(agent, sid, "card", {"title": "A"}, idempotency_key="p-1")
    assert first == again  # the component id follows from the key: the same component
    said = await agents.aagui_event(agent, sid, {"type": "TEXT_MESSAGE", "sender": "bot", "content": "x"},
                                    idempotency_key="p-2")
    resaid = await agents.aagui_event(agent, sid, {"type": "TEXT_MESSAGE", "sender": "bot", "content": "x"},
                                      idempotency_key="p-2")
    assert said > 0 and resaid == 0 and resaid.replayed
    await screen.settle()
    assert list(screen.components) == [first] and len(screen.transcript) == 1


async def test_mcp_tools_retry(agent, stream_token, agent_key):
    from a2ui.mcp import agent as mcp_agent

    bot, screen, sid = await pair(stream_token, agent_key)

    class Who:
        pass

    who = Who()
    who.agent = agent
    args = {"session_id": sid, "component_type": "card", "data": {"title": "M"},
            "idempotency_key": "mcp-1"}
    first = (await mcp_agent.call(None, who, "render", dict(args))).structured_content
    again = (await mcp_agent.call(None, who, "render", dict(args))).structured_content
    assert again == {"delivered": True, "seq": None, "replayed": True,
                     "component_id": first["component_id"]}
    event = {"session_id": sid, "event": {"type": "TEXT_MESSAGE", "sender": "bot", "content": "m"},
             "idempotency_key": "mcp-2"}
    for _ in range(2):
        said = (await mcp_agent.call(None, who, "agui_event", dict(event))).structured_content
    assert said["replayed"] is True
    await screen.settle()
    assert list(screen.components) == [first["component_id"]] and len(screen.transcript) == 1


async def test_keys_expire(stream_token, agent_key, settings):
    agent, screen, sid = await pair(stream_token, agent_key)
    assert "result" in await call(agent, 1, "ui.notify", {
        "session_id": sid, "level": "info", "title": "t", "idempotency_key": "old"})
    await database_sync_to_async(PushKey.objects.filter(key="old").update)(
        created_at=timezone.now() - timedelta(seconds=3601))
    assert await database_sync_to_async(outcomes.expire_due)() == 1
    again = await call(agent, 2, "ui.notify", {
        "session_id": sid, "level": "info", "title": "t", "idempotency_key": "old"})
    assert "replayed" not in again["result"], again


async def test_a_stateless_push_whose_send_fails_frees_its_key(
        stream_token, agent_key, monkeypatch):
    agent, screen, sid = await pair(stream_token, agent_key)
    fail_after_commit(monkeypatch)  # the notify's number: nothing was sent
    params = {"session_id": sid, "level": "info", "title": "t", "idempotency_key": "n"}
    assert (await call(agent, 1, "ui.notify", params))["error"]["code"] == -32603
    retry = await call(agent, 2, "ui.notify", params)
    assert isinstance(retry["result"]["seq"], int), retry
    await screen.settle()
    assert screen.notices == ["t"]


def test_the_answer_never_claims_a_number_it_has_not(stream_token):
    from a2ui.push.outcome import Pushed, answer, flag

    assert answer(5) == {"delivered": True, "seq": 5}
    assert answer(Pushed(replayed=True)) == {"delivered": True, "seq": None, "replayed": True}
    late = Pushed(warning="w")
    assert json.loads(json.dumps(flag({"delivered": [{"seq": None}]}, 3, late))) == {
        "delivered": [{"seq": None}], "warning": "w"}
