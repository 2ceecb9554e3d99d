"""Rate limits on what a credential can loop on (a2ui.infra.caps.check_rate): stream tokens,
consent choices (REST and socket), per credential and per address, refused before anything is
written: HTTP 429 with Retry-After and the JSON-RPC error -32001, or the socket's -32001."""

import pytest
from rest_framework.test import APIClient

from a2ui.models import A2UIConsentRecord, AuditEvent, StreamToken
from tests.wsutil import connect_user, init_session, recv_until, send

pytestmark = pytest.mark.django_db(transaction=True)


def limits(settings, **values):
    settings.A2UI = {**settings.A2UI, **values}


def mint(client, agent):
    return client.post("/api/v4/stream-token",
                       {"token_type": "stream_a2ui", "agent_id": agent.name}, format="json")


def test_stream_tokens_are_limited_per_person(settings, user, other_user, agent):
    limits(settings, RATE_STREAM_TOKENS_PER_MINUTE=3)
    client = APIClient()
    client.force_authenticate(user)
    assert [mint(client, agent).status_code for _ in range(3)] == [201] * 3
    refused = mint(client, agent)
    assert refused.status_code == 429
    assert 1 <= int(refused["Retry-After"]) <= 60
    error = refused.json()["error"]
    assert error["code"] == -32001 and "Too many stream tokens for this account" in error["message"]
    assert error["data"]["kind"] == "stream_token" and error["data"]["per"] == "credential"
    assert StreamToken.objects.filter(user=user).count() == 3
    assert AuditEvent.objects.filter(action="token.issue").count() == 3
    other = APIClient()
    other.force_authenticate(other_user)
    assert mint(other, agent).status_code == 201  # another person, same address


def test_stream_tokens_are_limited_per_address(settings, user, other_user, agent):
    limits(settings, RATE_PER_ADDRESS_PER_MINUTE=2)
    first, second = APIClient(), APIClient()
    first.force_authenticate(user)
    second.force_authenticate(other_user)
    assert mint(first, agent).status_code == 201 and mint(second, agent).status_code == 201
    refused = mint(second, agent)
    assert refused.status_code == 429 and refused.json()["error"]["data"]["per"] == "address"
    elsewhere = APIClient(REMOTE_ADDR="192.0.2.9")
    elsewhere.force_authenticate(other_user)
    assert mint(elsewhere, agent).status_code == 201


def test_rest_consent_revokes_are_limited(settings, user):
    limits(settings, RATE_CONSENTS_PER_MINUTE=1)
    for kind in ("data_collection", "ui_interaction"):
        A2UIConsentRecord.objects.create(user=user, consent_type=kind, granted=True)
    client = APIClient()
    client.force_authenticate(user)
    assert client.post("/api/v4/consents/revoke", {"consent_type": "data_collection"},
                       format="json").status_code == 200
    refused = client.post("/api/v4/consents/revoke", {"consent_type": "ui_interaction"},
                          format="json")
    assert refused.status_code == 429 and refused.has_header("Retry-After")
    assert refused.json()["error"]["data"]["kind"] == "consent"
    assert A2UIConsentRecord.objects.filter(consent_type="ui_interaction",
                                            revoked_at__isnull=True).exists()


async def test_socket_consent_choices_are_limited(settings, stream_token):
    limits(settings, RATE_CONSENTS_PER_MINUTE=2)
    comm = await connect_user(stream_token)
    await init_session(comm)
    answers, stored = [], []
    for i, granted in enumerate((True, False, True)):
        stored.append(await A2UIConsentRecord.objects.acount())
        await send(comm, {"jsonrpc": "2.0", "id": f"c{i}", "method": "user.consent",
                          "params": {"consent_type": "data_collection", "granted": granted}})
        answers.append(await recv_until(comm, lambda m, i=i: m.get("id") == f"c{i}"))
    assert "result" in answers[0] and "result" in answers[1]
    error = answers[2]["error"]
    assert error["code"] == -32001 and error["data"]["kind"] == "consent"
    assert error["data"]["retry_after"] >= 1
    assert await A2UIConsentRecord.objects.acount() == stored[2]  # nothing written
    await comm.disconnect()


async def test_agui_consent_actions_are_limited(settings, user, agent, agent_key):
    from tests.agui.test_agui_socket import event_of, frame, pair

    limits(settings, RATE_CONSENTS_PER_MINUTE=1)
    _bot, person, _sid = await pair(user, agent, agent_key)
    for granted in (True, False):
        await send(person, frame({"type": "USER_ACTION", "action_type": "consent",
                                  "payload": {"consent_type": "data_collection",
                                              "granted": granted}}))
    refused = await event_of(person)
    while refused["type"] != "ERROR":
        refused = await event_of(person)
    assert refused["details"]["reason"] == "rate_limited", refused
    assert refused["details"]["kind"] == "consent" and refused["details"]["retry_after"] >= 1
    records = await A2UIConsentRecord.objects.filter(user=user).acount()
    assert records == 1
