"""The person's custom action on the JSON-RPC socket, ``user.action`` (in process): forwarded to
the agent as ``user.action`` and audited, the way the AG-UI socket's custom USER_ACTION is
(``a2ui.requests.actions.custom_action``, one code path); refused input is -32602 naming the field
and changes nothing; a missing required consent is -32010."""

import asyncio

import pytest
from channels.db import database_sync_to_async
from django.test import override_settings

from a2ui.agui import actions as agui_actions
from a2ui.core.content import methods
from a2ui.jsonrpc.consumer import A2UIUserConsumer
from a2ui.models import AuditEvent
from tests.wsutil import (
    agent_and_person,
    connect_user,
    init_session,
    recv,
    recv_until,
    send,
)

pytestmark = pytest.mark.django_db(transaction=True)

EDIT = {"action_type": "artifact_edit", "component_id": "f1",
        "payload": {"content": "fn main() {}\n", "base_length": 10}}


def action(params, rpc_id="a1"):
    return {"jsonrpc": "2.0", "id": rpc_id, "method": "user.action", "params": params}


pair = agent_and_person


@database_sync_to_async
def audits(sid):
    return list(AuditEvent.objects.filter(action="user.action", session_id=sid)
                .values_list("details", flat=True))


async def audited(sid, count=1):
    for _ in range(100):  # written after the agent was told
        found = await audits(sid)
        if len(found) >= count:
            return found
        await asyncio.sleep(0.02)
    raise AssertionError("no user.action audit event")


async def test_an_artifact_edit_reaches_the_agent_and_is_audited(stream_token, agent_key):
    bot, person, sid = await pair(stream_token, agent_key)
    content = 'if a < b && c > d:\n\tprint("<b>x</b>")\n'
    await send(person, action({**EDIT, "payload": {"content": content, "base_length": 3}}))
    reply = await recv(person)
    assert reply == {"jsonrpc": "2.0", "id": "a1", "result": {"ok": True}}
    note = await recv_until(bot, lambda m: m.get("method") == "user.action")
    # What the AG-UI socket's USER_ACTION sends; the content as the person wrote it.
    assert note["params"] == {"session_id": sid, "action_type": "artifact_edit",
                              "component_id": "f1",
                              "payload": {"content": content, "base_length": 3}}
    assert await audited(sid) == [{"action_type": "artifact_edit", "component_id": "f1"}]

    # component_id and payload are optional: left out of what the agent gets, not null.
    await send(person, action({"action_type": "ping", "payload": None}, "a2"))
    assert (await recv_until(person, lambda m: m.get("id") == "a2"))["result"] == {"ok": True}
    note = await recv_until(bot, lambda m: m.get("method") == "user.action")
    assert note["params"] == {"session_id": sid, "action_type": "ping"}
    assert {"action_type": "ping"} in await audited(sid, 2)
    await person.disconnect()
    await bot.disconnect()


LONG = "x" * 257


@pytest.mark.parametrize(("params", "path"), [
    ({}, "params.action_type"),
    ({"action_type": None}, "params.action_type"),
    ({"action_type": 7}, "params.action_type"),
    ({"action_type": ""}, "params.action_type"),
    ({"action_type": LONG}, "params.action_type"),
    ({"action_type": "edit\x00"}, "params.action_type"),
    ({"action_type": "edit\n"}, "params.action_type"),
    ({"action_type": "submit", "component_id": "r1"}, "params.action_type"),
    ({"action_type": "consent"}, "params.action_type"),
    ({"action_type": "edit", "component_id": ["f1"]}, "params.component_id"),
    ({"action_type": "edit", "component_id": "f\x001"}, "params.component_id"),
    ({"action_type": "edit", "component_id": LONG}, "params.component_id"),
    ({"action_type": "edit", "payload": {"n": 2 ** 70}}, "params.payload.n"),
    ({"action_type": "edit", "payload": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]},
     "params.payload"),
])
async def test_refused_input_is_invalid_params_and_changes_nothing(stream_token, agent_key,
                                                                   params, path):
    bot, person, sid = await pair(stream_token, agent_key)
    await send(person, action(params))
    reply = await recv(person)
    assert reply["id"] == "a1" and reply["error"]["code"] == -32602, reply
    assert reply["error"]["data"]["path"].startswith(path), reply
    await send(person, action(EDIT, "a2"))
    reply = await recv_until(person, lambda m: m.get("id") == "a2")
    assert reply["result"] == {"ok": True}
    # Only the second action reached the agent and the audit trail.
    note = await recv_until(bot, lambda m: m.get("method") == "user.action")
    assert note["params"]["payload"] == EDIT["payload"]
    assert await bot.receive_nothing(timeout=0.2)
    assert len(await audited(sid)) == 1
    await person.disconnect()
    await bot.disconnect()


async def test_a_frame_over_the_limit_is_refused_and_nothing_is_forwarded(stream_token,
                                                                          agent_key):
    from django.conf import settings

    with override_settings(A2UI={**settings.A2UI, "MAX_PAYLOAD_SIZE": 4096}):
        bot, person, sid = await pair(stream_token, agent_key)
        await send(person, action({**EDIT, "payload": {"content": "x" * 5000}}))
        reply = await recv(person)
        assert reply["error"]["code"] == -32002, reply  # payload too large
        assert await bot.receive_nothing(timeout=0.2)
        assert await audits(sid) == []
        await person.disconnect()
        await bot.disconnect()


async def test_before_init_and_params_not_an_object(stream_token):
    person = await connect_user(stream_token)
    await send(person, action(EDIT))
    assert (await recv(person))["error"]["code"] == -32000  # a2ui.init first
    await init_session(person)
    await send(person, action(["artifact_edit"], "a2"))
    reply = await recv(person)
    assert reply["error"]["code"] == -32602 and reply["error"]["data"]["path"] == "params"
    await person.disconnect()


async def test_the_consent_gate_refuses_until_granted(stream_token, agent_key):
    from django.conf import settings

    with override_settings(A2UI={**settings.A2UI, "REQUIRED_CONSENTS": ["ui_interaction"]}):
        bot, person, sid = await pair(stream_token, agent_key)
        assert (await recv(person))["method"] == "a2ui.consent_required"
        await send(person, action(EDIT))
        assert (await recv(person))["method"] == "a2ui.consent_required"  # asked again
        reply = await recv(person)
        assert reply["id"] == "a1" and reply["error"]["code"] == -32010, reply
        assert await audits(sid) == []
        assert await bot.receive_nothing(timeout=0.2)
        await send(person, {"jsonrpc": "2.0", "id": "c", "method": "user.consent",
                            "params": {"consent_type": "ui_interaction", "granted": True}})
        await recv_until(person, lambda m: m.get("id") == "c")
        await send(person, action(EDIT, "a2"))
        reply = await recv_until(person, lambda m: m.get("id") == "a2")
        assert reply["result"] == {"ok": True}
        note = await recv_until(bot, lambda m: m.get("method") == "user.action")
        assert note["params"]["component_id"] == "f1"
        await person.disconnect()
        await bot.disconnect()


def test_the_reserved_action_types_are_the_ag_ui_sockets_own():
    own = {*agui_actions.ANSWERS, *agui_actions.CONFIRMS, "cancel", "consent"}
    assert set(methods.RESERVED_ACTIONS) == own
    for name, method in methods.RESERVED_ACTIONS.items():
        assert method in A2UIUserConsumer.HANDLERS, name


@pytest.mark.parametrize("value", ["a\ud800", "a\x7f", "a\x9fb", "\x00", "", "x" * 257, 7])
def test_a_name_is_not_text(value):
    """The one name check of both sockets (AG-UI USER_ACTION, JSON-RPC user.action)."""
    from a2ui.agui import protocol
    from a2ui.core.content import fields

    assert fields.name_reason(value) is not None
    assert protocol._ident is fields.name_reason
    assert fields.name_reason("artifact_edit") is None
    assert fields.name_reason("src/main.rs — ünïcode") is None
