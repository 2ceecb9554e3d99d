"""The person's chat message on the JSON-RPC socket, ``user.message`` (in process): recorded in
the session's transcript as role user (every client of the session gets it as ``ui.activity``),
forwarded to the agent as ``user.message`` and audited, the way the AG-UI socket's TEXT_MESSAGE
is (``a2ui.requests.actions.text_message``); refused input is -32602 naming the field and changes
nothing; a missing required consent is -32010."""

import asyncio

import pytest
from channels.db import database_sync_to_async
from django.test import override_settings

from a2ui.models import AuditEvent, SessionActivity
from tests.wsutil import (
    agent_and_person,
    connect_user,
    init_session,
    recv,
    recv_until,
    send,
)

pytestmark = pytest.mark.django_db(transaction=True)


def message(params, rpc_id="m1"):
    return {"jsonrpc": "2.0", "id": rpc_id, "method": "user.message", "params": params}


pair = agent_and_person


@database_sync_to_async
def transcript(sid):
    row = SessionActivity.objects.filter(session_id=sid).first()
    return row.transcript if row is not None else []


@database_sync_to_async
def audits(sid):
    return list(AuditEvent.objects.filter(action="user.message", session_id=sid)
                .values_list("details", flat=True))


async def audited(sid):
    for _ in range(100):  # written after the agent was told
        found = await audits(sid)
        if found:
            return found
        await asyncio.sleep(0.02)
    raise AssertionError("no user.message audit event")


async def test_a_chat_message_reaches_the_agent_and_the_transcript(stream_token, agent_key,
                                                                   user):
    bot, person, sid = await pair(stream_token, agent_key)
    content = "Hi <b>there</b> & <script>alert(1)</script>**bold**"
    await send(person, message({"content": content, "metadata": {"reply_to": "m0"}}))
    got = [await recv(person), await recv(person)]  # the answer and the transcript's change
    assert [m for m in got if m.get("id") == "m1"] == [{"jsonrpc": "2.0", "id": "m1",
                                                        "result": {"ok": True}}]
    shown = next(m for m in got if m.get("method") == "ui.activity")
    data = shown["params"]["data"]
    assert shown["params"]["kind"] == "message"
    assert data["role"] == "user" and data["sender"] == user.get_username()
    assert "<" not in data["content"] and "alert(1)" not in data["content"]  # sanitized
    assert "**bold**" in data["content"]
    note = await recv_until(bot, lambda m: m.get("method") == "user.message")
    # The agent gets what the person wrote, as the AG-UI socket's TEXT_MESSAGE does.
    assert note["params"] == {"session_id": sid, "user": user.get_username(),
                              "sender": user.get_username(), "content": content,
                              "metadata": {"reply_to": "m0"}}
    assert await audited(sid) == [{"length": len(content)}]
    stored = await transcript(sid)
    assert [(m["role"], m["content"]) for m in stored] == [("user", data["content"])]

    # A resume shows it again, in the activity snapshot.
    await person.disconnect()
    again = await connect_user(stream_token)
    await init_session(again, session_id=sid)
    snap = await recv_until(again, lambda m: m.get("method") == "ui.activity")
    assert snap["params"]["kind"] == "snapshot"
    assert snap["params"]["data"]["transcript"] == stored
    await again.disconnect()
    await bot.disconnect()


@pytest.mark.parametrize(("params", "path"), [
    ({}, "params.content"),
    ({"content": None}, "params.content"),
    ({"content": 7}, "params.content"),
    ({"content": "   "}, "params.content"),
    ({"content": "x" * 16001}, "params.content"),
    ({"content": "hi", "metadata": "no"}, "params.metadata"),
    ({"content": "hi", "metadata": [1]}, "params.metadata"),
    ({"content": "hi", "metadata": {"n": 2 ** 70}}, "params.metadata.n"),
])
async def test_refused_input_is_invalid_params_and_changes_nothing(stream_token, agent_key,
                                                                   params, path):
    bot, person, sid = await pair(stream_token, agent_key)
    await send(person, message(params))
    reply = await recv(person)
    assert reply["id"] == "m1" and reply["error"]["code"] == -32602, reply
    assert reply["error"]["data"]["path"] == path
    await send(person, message({"content": "still here"}, "m2"))
    reply = await recv_until(person, lambda m: m.get("id") == "m2")
    assert reply["result"] == {"ok": True}
    # Only the second message reached the transcript and the agent.
    assert [m["content"] for m in await transcript(sid)] == ["still here"]
    note = await recv_until(bot, lambda m: m.get("method") == "user.message")
    assert note["params"]["content"] == "still here"
    assert await bot.receive_nothing(timeout=0.2)
    assert len(await audited(sid)) == 1
    await person.disconnect()
    await bot.disconnect()


async def test_params_not_an_object_and_before_init(stream_token):
    person = await connect_user(stream_token)
    await send(person, message({"content": "early"}))
    reply = await recv(person)
    assert reply["error"]["code"] == -32000  # session not found: a2ui.init first
    await init_session(person)
    await send(person, message(["content"], "m2"))
    reply = await recv(person)
    assert reply["error"]["code"] == -32602 and reply["error"]["data"]["path"] == "params"
    await person.disconnect()


async def test_the_consent_gate_refuses_until_granted(stream_token, agent_key):
    from django.conf import settings

    with override_settings(A2UI={**settings.A2UI, "REQUIRED_CONSENTS": ["ui_interaction"]}):
        bot, person, sid = await pair(stream_token, agent_key)
        assert (await recv(person))["method"] == "a2ui.consent_required"
        await send(person, message({"content": "hello"}))
        prompt = await recv(person)  # the person is asked again
        assert prompt["method"] == "a2ui.consent_required"
        reply = await recv(person)
        assert reply["id"] == "m1" and reply["error"]["code"] == -32010, reply
        assert await transcript(sid) == []
        assert await audits(sid) == []
        assert await bot.receive_nothing(timeout=0.2)
        await send(person, {"jsonrpc": "2.0", "id": "c", "method": "user.consent",
                            "params": {"consent_type": "ui_interaction", "granted": True}})
        await recv_until(person, lambda m: m.get("id") == "c")
        await send(person, message({"content": "hello"}, "m2"))
        reply = await recv_until(person, lambda m: m.get("id") == "m2")
        assert reply["result"] == {"ok": True}
        note = await recv_until(bot, lambda m: m.get("method") == "user.message")
        assert note["params"]["content"] == "hello"
        await person.disconnect()
        await bot.disconnect()
