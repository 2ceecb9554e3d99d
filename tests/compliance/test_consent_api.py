"""Tier 1: people list and revoke their own consents over REST."""

import pytest
from asgiref.sync import sync_to_async
from channels.db import database_sync_to_async
from django.conf import settings
from django.test import override_settings
from rest_framework.test import APIClient

from a2ui.models import A2UIConsentRecord, AuditEvent
from tests.wsutil import connect_agent, connect_user, init_session, recv_until, send

LIST = "/api/v4/consents"


def api(user=None):
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client


@pytest.fixture
def records(db, user, other_user):
    mine = A2UIConsentRecord.objects.create(user=user, consent_type="data_collection",
                                            granted=True)
    refused = A2UIConsentRecord.objects.create(user=user, consent_type="ui_interaction",
                                               granted=False)
    theirs = A2UIConsentRecord.objects.create(user=other_user, consent_type="data_collection",
                                              granted=True)
    return {"mine": mine, "refused": refused, "theirs": theirs}


@pytest.mark.django_db
def test_list_shows_only_mine_and_the_required_state(user, records):
    with override_settings(A2UI={**settings.A2UI,
                                 "REQUIRED_CONSENTS": ["data_collection", "ui_interaction"]}):
        response = api(user).get(LIST)
    assert response.status_code == 200
    body = response.json()
    assert {c["id"] for c in body["consents"]} == {records["mine"].pk, records["refused"].pk}
    mine = next(c for c in body["consents"] if c["id"] == records["mine"].pk)
    assert mine["in_force"] is True and mine["revoked_at"] is None
    assert [(r["type"], r["granted"]) for r in body["required"]] == [
        ("data_collection", True), ("ui_interaction", False)]
    assert all(r["description"] for r in body["required"])


@pytest.mark.django_db
def test_revoke_one_of_mine(user, records):
    response = api(user).post(f"{LIST}/{records['mine'].pk}/revoke")
    assert response.status_code == 200
    assert response.json()["in_force"] is False and response.json()["revoked_at"]
    record = A2UIConsentRecord.objects.get(pk=records["mine"].pk)
    assert record.revoked_by == user
    event = AuditEvent.objects.get(action="consent.revoke")
    assert event.actor_label == "user:alice" and event.details["by"] == "user"
    again = api(user).post(f"{LIST}/{records['mine'].pk}/revoke")
    assert again.status_code == 409 and "already revoked" in again.json()["detail"]


@pytest.mark.django_db
def test_cannot_revoke_someone_elses_or_a_refusal(user, records):
    response = api(user).post(f"{LIST}/{records['theirs'].pk}/revoke")
    assert response.status_code == 404 and response.json()["detail"]
    assert A2UIConsentRecord.objects.get(pk=records["theirs"].pk).revoked_at is None
    assert api(user).post(f"{LIST}/{records['refused'].pk}/revoke").status_code == 409
    assert api(user).post(f"{LIST}/999999/revoke").status_code == 404


@pytest.mark.django_db
def test_revoke_by_type(user, records):
    response = api(user).post(f"{LIST}/revoke", {"consent_type": "data_collection"},
                              format="json")
    assert response.status_code == 200 and response.json()["revoked"] is True
    assert api(user).post(f"{LIST}/revoke", {"consent_type": "data_collection"},
                          format="json").status_code == 409
    bad = api(user).post(f"{LIST}/revoke", {"consent_type": "mind_reading"}, format="json")
    assert bad.status_code == 400 and "consent_type" in bad.json()
    assert api(user).post(f"{LIST}/revoke", {}, format="json").status_code == 400
    assert A2UIConsentRecord.objects.get(pk=records["theirs"].pk).revoked_at is None


@pytest.mark.django_db
def test_needs_a_person(agent_key, records):
    assert api().get(LIST).status_code in (401, 403)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {agent_key}")
    response = client.get(LIST)
    assert response.status_code == 403 and "people" in response.json()["detail"]


@pytest.mark.django_db(transaction=True)
async def test_revoking_over_rest_reaches_live_sockets(stream_token, agent_key, user):
    with override_settings(A2UI={**settings.A2UI, "REQUIRED_CONSENTS": ["data_collection"]}):
        agent_ws = await connect_agent(agent_key)
        comm = await connect_user(stream_token)
        sid = await init_session(comm)
        await send(comm, {"jsonrpc": "2.0", "id": "g", "method": "user.consent",
                          "params": {"consent_type": "data_collection", "granted": True}})
        await recv_until(comm, lambda m: m.get("id") == "g")
        await recv_until(agent_ws, lambda m: m.get("method") == "consent.changed")
        pk = await database_sync_to_async(
            lambda: A2UIConsentRecord.objects.get(user=user).pk)()
        response = await sync_to_async(lambda: api(user).post(f"{LIST}/{pk}/revoke"))()
        assert response.status_code == 200
        note = await recv_until(agent_ws, lambda m: m.get("method") == "consent.changed")
        assert note["params"] == {"session_id": sid, "consent_type": "data_collection",
                                  "granted": False}
        await send(agent_ws, {"jsonrpc": "2.0", "id": "ask", "method": "ui.request_input",
                              "params": {"session_id": sid, "request_id": "r",
                                         "input_type": "text", "prompt": "?"}})
        err = await recv_until(agent_ws, lambda m: m.get("id") == "ask")
        assert err["error"]["code"] == -32010
        await comm.disconnect()
        await agent_ws.disconnect()
