"""Tier 1: the admin pages of compliance staff: verify and checkpoint, a person's export, dry
run and erasure; the "a2ui compliance" group may verify and export but not erase, and every
action is audited."""

import json

import pytest
from django.contrib.auth.models import Permission

from a2ui.compliance import audit
from a2ui.compliance import chain as auditchain
from a2ui.core import auditchain as chain
from a2ui.models import A2UIConsentRecord, AuditEvent

pytestmark = pytest.mark.django_db

V = "/admin/a2ui/auditevent/verify/"
C = "/admin/a2ui/auditevent/checkpoint.json"
P = "/admin/a2ui/auditevent/person/"
#: A row of the erasure report's table: what, how many, what happens to them.
ROW = '<tr><th scope="row">{what}</th><td class="a2ui-count">{n}</td><td>{done}</td></tr>'


@pytest.fixture
def person(user):
    A2UIConsentRecord.objects.create(user=user, consent_type="data_collection", granted=True)
    audit.record("consent.grant", actor=user, details={"note": "alice's own words"})
    return user


def test_officer_verifies_and_downloads_a_checkpoint(officer, client_for, person):
    client = client_for(officer)
    page = client.get("/admin/a2ui/auditevent/")
    assert b"Verify the trail" in page.content and b"A person's data" in page.content
    assert client.get(V).status_code == 200
    response = client.post(V)
    assert response.status_code == 200 and b"Verified:" in response.content
    event = AuditEvent.objects.get(action="audit.verify")
    assert event.actor == officer and event.details["ok"] is True
    assert client.get(C).status_code == 405
    response = client.post(C)
    cp = json.loads(response.content)
    assert chain.checkpoint_problem(cp, auditchain.signing_key()) is None
    assert AuditEvent.objects.filter(action="audit.checkpoint", actor=officer).exists()


def test_verify_page_names_a_broken_link(officer, client_for, person):
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {AuditEvent._meta.db_table} SET details = '{{}}' WHERE seq = 1")
    response = client_for(officer).post(V)
    assert b"Broken:" in response.content and b"seq 1 (id" in response.content


def test_officer_exports_and_dry_runs_but_cannot_erase(officer, client_for, person):
    client = client_for(officer)
    page = client.get(P)
    assert page.status_code == 200 and b'value="erase"' not in page.content
    response = client.post(P, {"user": "alice", "action": "export"})
    assert response.status_code == 200
    assert response["Content-Disposition"].startswith('attachment; filename="a2ui-person-')
    doc = json.loads(response.content)
    assert doc["user"]["username"] == "alice" and len(doc["consents"]) == 1
    response = client.post(P, {"user": "alice", "action": "dry_run"})
    assert b"(dry run: nothing changed)</caption>" in response.content
    assert ROW.format(what="Consent records", n=1, done="deleted").encode() in response.content
    assert b'<th scope="col">Would be</th>' in response.content
    assert client.post(P, {"user": "alice", "action": "erase", "confirm": "yes"}
                       ).status_code == 403
    assert A2UIConsentRecord.objects.filter(user=person).exists()
    actions = list(AuditEvent.objects.filter(actor=officer).values_list("action", "details"))
    assert [a for a, _ in actions].count("person.export") == 1
    assert [a for a, _ in actions].count("person.erase.dry_run") == 1  # the dry run
    assert "person.erase" not in [a for a, _ in actions]
    assert all(d["dry_run"] for a, d in actions if a == "person.erase.dry_run")


def test_erase_needs_the_second_permission_and_a_confirmation(officer, client_for, person):
    officer.user_permissions.add(Permission.objects.get(codename="erase_person"))
    client = client_for(officer)
    assert b'value="erase"' in client.get(P).content
    response = client.post(P, {"user": "alice", "action": "erase"})
    assert response.status_code == 400 and A2UIConsentRecord.objects.filter(user=person).exists()
    response = client.post(P, {"user": "alice", "action": "erase", "confirm": "yes"})
    assert response.status_code == 200 and b'<th scope="col">Were</th>' in response.content
    assert ROW.format(what="Consent records", n=1, done="deleted").encode() in response.content
    assert not A2UIConsentRecord.objects.filter(user=person).exists()
    assert AuditEvent.objects.filter(action="person.erase", actor=officer,
                                     details__dry_run=False).exists()
    assert not AuditEvent.objects.filter(details__note="alice's own words").exists()
    assert auditchain.verify().ok


def test_bad_input_is_a_clear_400(officer, client_for, person):
    client = client_for(officer)
    response = client.post(P, {"user": "nobody", "action": "export"})
    assert response.status_code == 400 and b"No user" in response.content
    assert client.post(P, {"user": "alice", "action": "explode"}).status_code == 400
    assert client.post(P, {"user": "a\x00b", "action": "export"}).status_code == 400


def test_staff_without_permissions_are_refused(staff, viewer, client_for, person):
    for who in (staff, viewer):
        client = client_for(who)
        assert client.get(V).status_code == 403
        assert client.post(C).status_code == 403
        assert client.get(P).status_code == 403
        assert client.post(P, {"user": "alice", "action": "export"}).status_code == 403
    assert not AuditEvent.objects.filter(action__in=["person.export", "audit.verify"]).exists()


def test_exports_are_rate_limited_per_officer(officer, client_for, person, settings):
    settings.A2UI = {**settings.A2UI, "RATE_EXPORTS_PER_MINUTE": 2}
    client = client_for(officer)
    for _ in range(2):
        assert client.post(P, {"user": "alice", "action": "export"}).status_code == 200
    exported = AuditEvent.objects.filter(action="person.export").count()
    refused = client.post(P, {"user": "alice", "action": "export"})
    assert refused.status_code == 429 and 1 <= int(refused["Retry-After"]) <= 60
    body = json.loads(refused.content)
    assert "Too many exports of a person's data for this account" in body["error"]["message"]
    assert AuditEvent.objects.filter(action="person.export").count() == exported
