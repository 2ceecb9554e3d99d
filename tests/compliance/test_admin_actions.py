"""Tier 1: each admin action through the admin (client POST) and what it does to live sockets.

Sockets are in-process (WebsocketCommunicator); tests/live/test_compliance_live.py does the
same against sockets held by other Daphne processes.
"""

import json

import pytest
from asgiref.sync import sync_to_async
from channels.db import database_sync_to_async
from django.contrib.admin import helpers
from django.test import override_settings

from a2ui import tokens
from a2ui.models import A2UIConsentRecord, A2UISessionLog, Agent, AuditEvent, StreamToken
from tests.wsutil import connect_agent, connect_user, init_session, recv, recv_until, send

pytestmark = pytest.mark.django_db(transaction=True)

CHANGELIST = {
    "session": "/admin/a2ui/a2uisessionlog/",
    "token": "/admin/a2ui/streamtoken/",
    "agent": "/admin/a2ui/agent/",
    "consent": "/admin/a2ui/a2uiconsentrecord/",
}


async def run_action(client, kind, action, pks):
    data = {"action": action, helpers.ACTION_CHECKBOX_NAME: [str(pk) for pk in pks]}
    response = await sync_to_async(client.post)(CHANGELIST[kind], data)
    assert response.status_code == 302, response.content[:500]
    return response


async def closed_with(comm, timeout=1.0, notices=None):
    """The close frame the server sent (within ``timeout`` seconds), skipping text frames.

    ``ui.notify`` messages before it are appended to ``notices``.
    """
    while True:
        out = await comm.receive_output(timeout=timeout)
        if out["type"] == "websocket.close":
            return out["code"], out.get("reason", "")
        msg = json.loads(out.get("text") or "{}")
        if notices is not None and msg.get("method") == "ui.notify":
            notices.append(msg["params"])


async def audit_rows(action):
    return await database_sync_to_async(lambda: list(
        AuditEvent.objects.filter(action=action).values_list("actor_label", "target_id",
                                                             "session_id")))()


async def test_terminate_closes_the_socket_with_4010(superuser, client_for, stream_token,
                                                     agent_key):
    client = await sync_to_async(client_for)(superuser)
    agent = await connect_agent(agent_key)
    comm = await connect_user(stream_token)
    sid = await init_session(comm)
    await recv_until(agent, lambda m: m.get("method") == "session.opened")

    await run_action(client, "session", "terminate_sessions", [sid])
    notices = []
    assert await closed_with(comm, notices=notices) == (4010, "Session terminated by an operator")
    # Daphne drops close reasons, so the client is also told in a notice it shows.
    assert notices == [{"level": "warning", "title": "Session terminated",
                        "message": "Session terminated by an operator", "duration_ms": 0}]
    note = await recv_until(agent, lambda m: m.get("method") == "session.closed")
    assert note["params"]["session_id"] == sid
    assert note["params"]["reason"] == "Session terminated by an operator"
    session = await database_sync_to_async(A2UISessionLog.objects.get)(pk=sid)
    assert session.state == "closed" and session.close_reason.startswith("Session terminated")
    assert await audit_rows("session.terminate") == [("user:root", sid, session.session_id)]
    await agent.disconnect()


async def test_terminating_a_closed_session_is_harmless(superuser, client_for, stream_token):
    client = await sync_to_async(client_for)(superuser)
    comm = await connect_user(stream_token)
    sid = await init_session(comm)
    await run_action(client, "session", "terminate_sessions", [sid])
    await closed_with(comm)
    await run_action(client, "session", "terminate_sessions", [sid])
    assert len(await audit_rows("session.terminate")) == 1


async def test_revoke_token_closes_sockets_and_refuses_next_use(
        superuser, client_for, user, agent, agent_key):
    client = await sync_to_async(client_for)(superuser)
    issued = await database_sync_to_async(tokens.issue_stream_token)(user, agent)
    agent_ws = await connect_agent(agent_key)
    comm = await connect_user(issued.token)
    sid = await init_session(comm)
    idle = await connect_user(issued.token)  # a second socket with no session yet

    await run_action(client, "token", "revoke_tokens", [issued.record.jti])
    assert await closed_with(comm) == (4011, "Stream token revoked")
    assert await closed_with(idle) == (4011, "Stream token revoked")
    note = await recv_until(agent_ws, lambda m: m.get("method") == "session.closed")
    assert note["params"]["session_id"] == sid

    again = await connect_user(issued.token)
    refused = await recv(again)
    assert refused["error"]["code"] == -32006
    assert refused["error"]["data"]["reason"] == "Stream token revoked."
    assert (await again.receive_output())["code"] == 4006

    token = await database_sync_to_async(
        lambda: StreamToken.objects.select_related("revoked_by").get(pk=issued.record.jti))()
    assert token.revoked_at is not None and token.revoked_by.username == "root"
    assert await audit_rows("token.revoke") == [("user:root", str(issued.record.jti), None)]
    state = await database_sync_to_async(lambda: A2UISessionLog.objects.get(pk=sid).state)()
    assert state == "closed"
    await agent_ws.disconnect()


async def test_revoke_agent_closes_its_sockets_and_sessions(
        superuser, client_for, agent, agent_key, stream_token):
    client = await sync_to_async(client_for)(superuser)
    agent_ws = await connect_agent(agent_key)
    comm = await connect_user(stream_token)
    sid = await init_session(comm)

    await run_action(client, "agent", "revoke_agents", [agent.pk])
    assert await closed_with(agent_ws) == (4011, "Agent key revoked")
    assert await closed_with(comm) == (4011, "Agent revoked")
    refused = await connect_agent(agent_key)
    assert (await recv(refused))["error"]["data"]["reason"] == "Agent key revoked."
    row = await database_sync_to_async(Agent.objects.get)(pk=agent.pk)
    assert not row.is_active and row.revoked_at is not None
    assert await audit_rows("agent.revoke") == [("user:root", str(agent.pk), None)]
    session = await database_sync_to_async(A2UISessionLog.objects.get)(pk=sid)
    assert session.state == "closed" and session.close_reason == "Agent revoked"


async def test_revoke_consent_on_behalf_refuses_answers(superuser, client_for, stream_token,
                                                        agent_key, user):
    from django.conf import settings

    client = await sync_to_async(client_for)(superuser)
    with override_settings(A2UI={**settings.A2UI, "REQUIRED_CONSENTS": ["data_collection"]}):
        agent_ws = await connect_agent(agent_key)
        comm = await connect_user(stream_token)
        sid = await init_session(comm)
        await send(comm, {"jsonrpc": "2.0", "id": "g", "method": "user.consent",
                          "params": {"consent_type": "data_collection", "granted": True}})
        await recv_until(comm, lambda m: m.get("id") == "g")
        await recv_until(agent_ws, lambda m: m.get("method") == "consent.changed")
        await send(agent_ws, {"jsonrpc": "2.0", "method": "ui.request_input", "params": {
            "session_id": sid, "request_id": "q", "input_type": "text", "prompt": "?"}})
        await recv_until(comm, lambda m: m.get("method") == "ui.request_input")

        record = await database_sync_to_async(A2UIConsentRecord.objects.get)(user=user)
        await run_action(client, "consent", "revoke_consents", [record.pk])
        note = await recv_until(agent_ws, lambda m: m.get("method") == "consent.changed")
        assert note["params"] == {"session_id": sid, "consent_type": "data_collection",
                                  "granted": False}
        await send(comm, {"jsonrpc": "2.0", "id": "a", "method": "user.respond",
                          "params": {"request_id": "q", "value": "x"}})
        assert (await recv_until(comm, lambda m: m.get("id") == "a"))["error"]["code"] == -32010
        await send(agent_ws, {"jsonrpc": "2.0", "id": "again", "method": "ui.confirm",
                              "params": {"session_id": sid, "request_id": "k", "title": "?"}})
        err = await recv_until(agent_ws, lambda m: m.get("id") == "again")
        assert err["error"]["code"] == -32010

        record = await database_sync_to_async(
            lambda: A2UIConsentRecord.objects.select_related("revoked_by").get(pk=record.pk))()
        assert record.revoked_at is not None and record.revoked_by.username == "root"
        rows = await database_sync_to_async(lambda: list(
            AuditEvent.objects.filter(action="consent.revoke").values_list(
                "actor_label", "details")))()
        assert rows[0][0] == "user:root" and rows[0][1]["by"] == "operator"
        assert rows[0][1]["user"] == "alice"
        await comm.disconnect()
        await agent_ws.disconnect()


async def test_compliance_officer_can_run_every_action(officer, client_for, stream_token,
                                                       agent, agent_key):
    client = await sync_to_async(client_for)(officer)
    comm = await connect_user(stream_token)
    sid = await init_session(comm)
    await run_action(client, "session", "terminate_sessions", [sid])
    assert (await closed_with(comm))[0] == 4010
    assert (await audit_rows("session.terminate"))[0][0] == "user:officer"
    await run_action(client, "agent", "revoke_agents", [agent.pk])
    assert (await audit_rows("agent.revoke"))[0][0] == "user:officer"


async def test_staff_without_permission_cannot_terminate(viewer, client_for, stream_token):
    client = await sync_to_async(client_for)(viewer)
    comm = await connect_user(stream_token)
    sid = await init_session(comm)
    response = await sync_to_async(client.post)(CHANGELIST["session"], {
        "action": "terminate_sessions", helpers.ACTION_CHECKBOX_NAME: [sid]})
    assert response.status_code in (200, 302)  # "No action selected", nothing done
    assert await comm.receive_nothing(timeout=0.3)
    state = await database_sync_to_async(lambda: A2UISessionLog.objects.get(pk=sid).state)()
    assert state == "initialized"
    assert await audit_rows("session.terminate") == []
    await comm.disconnect()
