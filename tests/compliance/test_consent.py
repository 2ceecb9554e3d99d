"""Tier 1: consent prompts, the -32010 gate on both sides, and the consent.changed notice."""

import pytest
from channels.db import database_sync_to_async
from django.test import override_settings

from a2ui.core.errors import DomainError
from a2ui.models import A2UIConsentRecord, AuditEvent
from tests.wsutil import connect_agent, connect_user, init_session, recv, recv_until, send

pytestmark = pytest.mark.django_db(transaction=True)

REQUIRED = {"REQUIRED_CONSENTS": ["data_collection", "ui_interaction"]}


def _settings(**extra):
    from django.conf import settings

    return override_settings(A2UI={**settings.A2UI, **REQUIRED, **extra})


def ask(sid, rid="r1", rpc_id="ask"):
    msg = {"jsonrpc": "2.0", "method": "ui.request_input", "params": {
        "session_id": sid, "request_id": rid, "input_type": "text", "prompt": "Name?"}}
    if rpc_id is not None:
        msg["id"] = rpc_id
    return msg


def consent_msg(ctype, granted, rpc_id=None):
    msg = {"jsonrpc": "2.0", "method": "user.consent",
           "params": {"consent_type": ctype, "granted": granted}}
    if rpc_id is not None:
        msg["id"] = rpc_id
    return msg


async def test_prompt_after_init_lists_missing_types(stream_token):
    with _settings():
        comm = await connect_user(stream_token)
        await init_session(comm)
        prompt = await recv(comm)
        assert prompt["method"] == "a2ui.consent_required"
        types = prompt["params"]["consent_types"]
        assert [t["type"] for t in types] == ["data_collection", "ui_interaction"]
        assert all(t["description"] for t in types)
        await comm.disconnect()


async def test_no_prompt_without_required_consents(stream_token):
    comm = await connect_user(stream_token)
    await init_session(comm)
    assert await comm.receive_nothing(timeout=0.2)
    await comm.disconnect()


async def test_agent_request_refused_until_granted(stream_token, agent_key, user):
    with _settings():
        agent = await connect_agent(agent_key)
        comm = await connect_user(stream_token)
        sid = await init_session(comm)
        assert (await recv(comm))["method"] == "a2ui.consent_required"
        opened = await recv_until(agent, lambda m: m.get("method") == "session.opened")
        assert opened["params"]["consents_missing"] == ["data_collection", "ui_interaction"]

        await send(agent, ask(sid))
        err = await recv_until(agent, lambda m: m.get("id") == "ask")
        assert err["error"]["code"] == -32010
        assert err["error"]["message"] == "Consent required"
        assert err["error"]["data"]["consent_types"] == ["data_collection", "ui_interaction"]
        # The person is asked again; the request itself never reached them.
        again = await recv(comm)
        assert again["method"] == "a2ui.consent_required"
        assert await comm.receive_nothing(timeout=0.2)

        await send(comm, consent_msg("data_collection", True, rpc_id="c1"))
        reply = await recv_until(comm, lambda m: m.get("id") == "c1")
        consents = reply["result"].pop("consents")  # what the page lists (docs/client.md)
        assert reply["result"] == {"consent_type": "data_collection", "granted": True,
                                   "missing": ["ui_interaction"]}
        assert [(c["type"], c["granted"]) for c in consents] == [
            ("data_collection", True), ("ui_interaction", False)]
        note = await recv_until(agent, lambda m: m.get("method") == "consent.changed")
        assert note["params"] == {"session_id": sid, "consent_type": "data_collection",
                                  "granted": True}
        await send(agent, ask(sid, "r2", "ask2"))
        err = await recv_until(agent, lambda m: m.get("id") == "ask2")
        assert err["error"]["data"]["consent_types"] == ["ui_interaction"]

        await send(comm, consent_msg("ui_interaction", True))  # as a notification
        await recv_until(agent, lambda m: m.get("method") == "consent.changed")
        await send(agent, ask(sid, "r3", "ask3"))
        shown = await recv_until(comm, lambda m: m.get("method") == "ui.request_input")
        assert shown["params"]["request_id"] == "r3"
        await send(comm, {"jsonrpc": "2.0", "method": "user.respond",
                          "params": {"request_id": "r3", "value": "Ada"}})
        answer = await recv_until(agent, lambda m: m.get("id") == "ask3")
        assert answer["result"] == "Ada"

        records = await database_sync_to_async(lambda: list(
            A2UIConsentRecord.objects.filter(user=user).values_list(
                "consent_type", "granted", "revoked_at", "session_id")))()
        assert sorted(r[0] for r in records) == ["data_collection", "ui_interaction"]
        assert all(r[1] and r[2] is None and str(r[3]) == sid for r in records)
        actions = await database_sync_to_async(lambda: list(
            AuditEvent.objects.filter(action__startswith="consent.").values_list(
                "action", "actor_label")))()
        assert actions.count(("consent.grant", "user:alice")) == 2
        await comm.disconnect()
        await agent.disconnect()


async def test_revoked_consent_refuses_user_answers(stream_token, agent_key):
    with _settings(REQUIRED_CONSENTS=["data_collection"]):
        agent = await connect_agent(agent_key)
        comm = await connect_user(stream_token)
        sid = await init_session(comm)
        await recv(comm)  # the prompt
        await send(comm, consent_msg("data_collection", True, "g"))
        await recv_until(comm, lambda m: m.get("id") == "g")
        await send(agent, ask(sid, "q", None))  # notification: answer comes as user.respond
        await recv_until(comm, lambda m: m.get("method") == "ui.request_input")

        await send(comm, consent_msg("data_collection", False, "rv"))
        reply = await recv_until(comm, lambda m: m.get("id") == "rv")
        assert reply["result"]["missing"] == ["data_collection"]
        note = await recv_until(agent, lambda m: m.get("method") == "consent.changed"
                                and not m["params"]["granted"])
        assert note["params"]["consent_type"] == "data_collection"

        await send(comm, {"jsonrpc": "2.0", "id": "ans", "method": "user.respond",
                          "params": {"request_id": "q", "value": "secret"}})
        err = await recv_until(comm, lambda m: m.get("id") == "ans")
        assert err["error"]["code"] == -32010
        assert err["error"]["data"] == {"consent_types": ["data_collection"]}
        await send(comm, {"jsonrpc": "2.0", "id": "ok", "method": "user.approve",
                          "params": {"request_id": "q", "approved": True}})
        assert (await recv_until(comm, lambda m: m.get("id") == "ok"))["error"]["code"] == -32010
        assert await agent.receive_nothing(timeout=0.3)  # nothing of the answer reached it

        rec = await database_sync_to_async(
            lambda: A2UIConsentRecord.objects.get(consent_type="data_collection"))()
        assert rec.granted and rec.revoked_at is not None and rec.revoked_by_id == rec.user_id
        await comm.disconnect()
        await agent.disconnect()


async def test_refusal_is_recorded(stream_token, agent_key):
    with _settings(REQUIRED_CONSENTS=["data_collection"]):
        agent = await connect_agent(agent_key)
        comm = await connect_user(stream_token)
        sid = await init_session(comm)
        await send(comm, consent_msg("data_collection", False, "no"))
        reply = await recv_until(comm, lambda m: m.get("id") == "no")
        assert reply["result"]["granted"] is False
        note = await recv_until(agent, lambda m: m.get("method") == "consent.changed")
        assert note["params"] == {"session_id": sid, "consent_type": "data_collection",
                                  "granted": False}
        rec = await database_sync_to_async(lambda: A2UIConsentRecord.objects.get())()
        assert rec.granted is False
        assert await database_sync_to_async(
            AuditEvent.objects.filter(action="consent.refuse").count)() == 1
        await comm.disconnect()
        await agent.disconnect()


async def test_consent_granted_earlier_holds_in_new_session(user, agent):
    from a2ui import tokens

    with _settings(REQUIRED_CONSENTS=["data_collection"]):
        tok = await database_sync_to_async(lambda: tokens.issue_stream_token(user, agent).token)()
        comm = await connect_user(tok)
        await init_session(comm)
        await recv(comm)
        await send(comm, consent_msg("data_collection", True, "g"))
        await recv_until(comm, lambda m: m.get("id") == "g")
        # the grant's broadcast to the person's sockets (through Redis: still in flight after
        # the answer) reaches this socket, not the next one
        await recv_until(comm, lambda m: m.get("method") == "a2ui.consent_changed")
        await comm.disconnect()
        tok = await database_sync_to_async(lambda: tokens.issue_stream_token(user, agent).token)()
        comm = await connect_user(tok)
        await init_session(comm)
        assert await comm.receive_nothing(timeout=0.2)  # no prompt
        await comm.disconnect()


@pytest.mark.parametrize(("params", "path"), [
    ({"consent_type": "telepathy", "granted": True}, "params.consent_type"),
    ({"consent_type": "", "granted": True}, "params.consent_type"),
    ({"consent_type": 3, "granted": True}, "params.consent_type"),
    ({"consent_type": "data_collection", "granted": "yes"}, "params.granted"),
    ({"consent_type": "data_collection"}, "params.granted"),
])
async def test_bad_consent_params(stream_token, params, path):
    with _settings():
        comm = await connect_user(stream_token)
        await init_session(comm)
        await recv(comm)
        await send(comm, {"jsonrpc": "2.0", "id": "x", "method": "user.consent",
                          "params": params})
        err = await recv_until(comm, lambda m: m.get("id") == "x")
        assert err["error"]["code"] == -32602
        assert err["error"]["data"]["path"] == path
        await comm.disconnect()


async def test_consent_before_init_is_refused(stream_token):
    comm = await connect_user(stream_token)
    await send(comm, consent_msg("data_collection", True, "early"))
    err = await recv(comm)
    assert err["id"] == "early" and err["error"]["code"] == -32000
    await comm.disconnect()


async def test_python_api_request_is_refused_without_consent(stream_token, agent):
    from a2ui import agents

    with _settings(REQUIRED_CONSENTS=["data_collection"]):
        comm = await connect_user(stream_token)
        sid = await init_session(comm)
        await recv(comm)  # the prompt
        with pytest.raises(DomainError) as exc:
            await agents.arequest_input(agent, sid, "text", "Name?")
        assert exc.value.code == -32010
        assert exc.value.data == {"consent_types": ["data_collection"]}
        await comm.disconnect()
