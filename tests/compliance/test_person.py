"""Tier 1: a person's data on request: export then erasure of one person leaves no trace of
their content, an audit entry for each, and a chain that verifies; other people's data stays."""

import json
from io import StringIO

import pytest
from django.apps import apps
from django.core import serializers
from django.core.management import call_command
from django.core.management.base import CommandError

from a2ui import tokens
from a2ui.compliance import audit, person
from a2ui.compliance import chain as auditchain
from a2ui.models import (
    A2UIConsentRecord,
    A2UISessionLog,
    AuditEvent,
    PendingRequest,
    RenderedComponent,
    SessionActivity,
    StreamToken,
    Surface,
)
from a2ui.push import revocation

pytestmark = pytest.mark.django_db
SECRET = "ZOE-SECRET-7731"


def make_person(name, agent, secret):
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.create_user(name, f"{name}@example.com", "pw-x-12345")
    issued = tokens.issue_stream_token(user, agent)
    audit.record("token.issue", agent=agent, target=issued.record)  # found through the token
    session = A2UISessionLog.objects.create(
        user=user, agent=agent, token=issued.record, state="closed",
        client_info={"name": f"client of {secret}"}, close_reason=f"bye {secret}")
    RenderedComponent.objects.create(session=session, component_id="c", component_type="card",
                                     data={"title": f"card {secret}"})
    PendingRequest.objects.create(session=session, request_id="r", kind="input",
                                  params={"prompt": "Your name?"}, deadline=session.created_at,
                                  answer={"value": f"answer {secret}"}, status="answered")
    Surface.objects.create(session=session, surface_id="s", catalog_id="basic",
                           state={"data": {"name": secret}})
    SessionActivity.objects.create(session=session, transcript=[{"text": f"said {secret}"}])
    consent = A2UIConsentRecord.objects.create(user=user, session=session,
                                               consent_type="data_collection", granted=True)
    audit.record("consent.grant", actor=user, target=consent, session_id=session.session_id,
                 details={"consent_type": "data_collection", "note": secret})
    audit.record("session.open", actor=user, agent=agent, target=session,
                 session_id=session.session_id, details={"client": secret})
    # an operator's revocation of a consent record purged since names the person in details
    audit.record("consent.revoke", target=("a2uiconsentrecord", 999999),
                 details={"user": name, "note": secret})
    return user, session


def everything_stored():
    """Every row of every a2ui model, as text."""
    out = []
    for model in apps.get_app_config("a2ui").get_models():
        out.append(serializers.serialize("json", model.objects.all()))
    return "\n".join(out)


@pytest.fixture
def zoe(agent):
    return make_person("zoe-person", agent, SECRET)


@pytest.fixture
def bob(agent):
    return make_person("bob-person", agent, "BOB-KEEPS-THIS")


def run(*args):
    out = StringIO()
    call_command("a2ui_person", *args, stdout=out)
    return out.getvalue()


def test_export_then_erase_leaves_no_trace(zoe, bob, tmp_path):
    user, session = zoe
    run("export", "zoe-person", "--out", str(tmp_path / "zoe.json"))
    doc = json.loads((tmp_path / "zoe.json").read_text())
    assert doc["format"] == person.FORMAT and doc["user"]["username"] == "zoe-person"
    [s] = doc["sessions"]
    assert s["components"][0]["data"] == {"title": f"card {SECRET}"}
    assert s["requests"][0]["answer"] == {"value": f"answer {SECRET}"}
    assert s["surfaces"][0]["state"]["data"]["name"] == SECRET
    assert s["activity"]["transcript"] == [{"text": f"said {SECRET}"}]
    assert [c["consent_type"] for c in doc["consents"]] == ["data_collection"]
    [token] = doc["stream_tokens"]
    assert set(token) >= {"jti", "token_type", "issued_at", "expires_at"}
    actions = {e["action"] for e in doc["audit_events"]}
    assert {"consent.grant", "session.open", "token.issue"} <= actions
    assert "BOB-KEEPS-THIS" not in (tmp_path / "zoe.json").read_text()

    dry = run("erase", "zoe-person", "--dry-run")
    assert "dry run: nothing changed" in dry
    assert "components: 1 would be deleted" in dry and "requests: 1 would be deleted" in dry
    assert "consent records: 1 would be deleted" in dry
    assert SECRET in everything_stored()

    out = run("erase", "zoe-person")
    assert "Erasure done." in out and "sessions: 1 were anonymized" in out
    stored = everything_stored()
    assert SECRET not in stored
    assert "zoe-person" not in stored
    assert "BOB-KEEPS-THIS" in stored  # another person's data stays
    session.refresh_from_db()
    assert session.user is None and session.client_info == {} and session.close_reason == ""
    assert not StreamToken.objects.filter(user=user).exists()
    # an audit entry for each (export, dry run, erasure), naming the person by id only
    entries = AuditEvent.objects.filter(target_type="user", target_id=str(user.pk))
    assert sorted(entries.values_list("action", flat=True)) == [
        "person.erase", "person.erase.dry_run", "person.export"]
    erased = entries.filter(details__dry_run=False).get()
    assert erased.details["counts"]["audit events"] >= 3
    result = auditchain.verify()
    assert result.ok, result.problems
    assert result.redacted >= 3
    # and a second export finds nothing left
    doc = person.export(user)
    assert doc["sessions"] == [] and doc["consents"] == [] and doc["audit_events"] == []


@pytest.mark.django_db(transaction=True)  # closing a session runs on another thread
def test_erase_closes_live_sessions_and_revokes_tokens(zoe):
    user, session = zoe
    A2UISessionLog.objects.filter(pk=session.pk).update(state="active")
    report = revocation.erase_person(user)
    assert report.counts["live sessions"] == 1 and report.counts["stream tokens in force"] == 1
    session.refresh_from_db()
    assert session.state == "closed" and session.user is None
    assert auditchain.verify().ok


def test_unknown_user_is_a_clear_error():
    with pytest.raises(CommandError, match="No user 'nobody'"):
        run("export", "nobody")
    with pytest.raises(CommandError, match="Name a user"):
        run("erase", "  ")


def test_user_by_id(zoe):
    user, _ = zoe
    out = run("erase", f"#{user.pk}", "--dry-run")
    assert f"Erasure of user #{user.pk}" in out
