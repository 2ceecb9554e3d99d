"""Tier 1: ``manage.py a2ui_purge`` with and without --dry-run."""

from datetime import timedelta
from io import StringIO

import pytest
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import override_settings
from django.utils import timezone

from a2ui import tokens
from a2ui.compliance import audit
from a2ui.models import (
    A2UIConsentRecord,
    A2UISessionLog,
    AuditEvent,
    PendingRequest,
    RenderedComponent,
    SessionEvent,
    StreamToken,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def data(user, agent):
    now = timezone.now()
    long_ago = now - timedelta(days=100)
    issued = tokens.issue_stream_token(user, agent)
    StreamToken.objects.filter(pk=issued.record.pk).update(
        issued_at=long_ago, expires_at=long_ago + timedelta(minutes=30))
    old = A2UISessionLog.objects.create(
        user=user, agent=agent, token=issued.record, state="closed", created_at=long_ago,
        last_activity=long_ago, closed_at=long_ago, client_info={"name": "WebUI"},
        close_reason="Bye")
    RenderedComponent.objects.create(session=old, component_id="c", component_type="card")
    PendingRequest.objects.create(session=old, request_id="r", kind="input",
                                  deadline=long_ago, answer="secret", status="answered")
    SessionEvent.objects.create(session=old, seq=1, kind="component.rendered", at=long_ago,
                                data={"component_id": "c", "component_type": "card",
                                      "data": {"title": "secret"}})
    # Old but still live: never purged.
    live = A2UISessionLog.objects.create(user=user, agent=agent, state="active",
                                         created_at=long_ago, last_activity=long_ago)
    recent = A2UISessionLog.objects.create(user=user, agent=agent, state="closed",
                                           closed_at=now, last_activity=now)
    SessionEvent.objects.create(session=recent, seq=1, kind="component.rendered",
                                data={"component_id": "n", "component_type": "card",
                                      "data": {"title": "recent"}})
    in_force = A2UIConsentRecord.objects.create(
        user=user, session=old, consent_type="data_collection", granted=True,
        granted_at=long_ago)
    revoked = A2UIConsentRecord.objects.create(
        user=user, session=old, consent_type="ui_interaction", granted=True,
        granted_at=long_ago, revoked_at=long_ago)
    AuditEvent.objects.create(actor_label="system", action="session.closed", at=long_ago,
                              session_id=old.session_id)
    audit.record("session.open", actor=user)
    return {"old": old, "live": live, "recent": recent, "in_force": in_force,
            "revoked": revoked, "token": issued.record}


def run(*args):
    out = StringIO()
    call_command("a2ui_purge", *args, stdout=out)
    return out.getvalue()


def test_dry_run_reports_and_changes_nothing(data):
    before = (A2UISessionLog.objects.count(), RenderedComponent.objects.count(),
              StreamToken.objects.count(), AuditEvent.objects.count())
    out = run("--older-than", "30", "--dry-run")
    assert "dry run: nothing changed" in out
    assert "sessions: 1 would be deleted" in out
    assert "rendered components: 1 would be deleted" in out
    assert "pending requests: 1 would be deleted" in out
    assert "stream tokens: 1 would be deleted" in out
    assert "consent records: kept" in out and "audit events: kept" in out
    after = (A2UISessionLog.objects.count(), RenderedComponent.objects.count(),
             StreamToken.objects.count(), AuditEvent.objects.count())
    assert before == after


def test_purge_deletes_old_session_data_and_keeps_consents_and_audit(data):
    out = run("--older-than", "30")
    assert "sessions: 1 were deleted" in out and "Purge done." in out
    assert not A2UISessionLog.objects.filter(pk=data["old"].pk).exists()
    assert A2UISessionLog.objects.filter(pk=data["live"].pk).exists()
    assert A2UISessionLog.objects.filter(pk=data["recent"].pk).exists()
    assert not RenderedComponent.objects.exists() and not PendingRequest.objects.exists()
    assert list(SessionEvent.objects.values_list("session", flat=True)) == [data["recent"].pk]
    assert "replay events: 1 were deleted" in out
    assert not StreamToken.objects.filter(pk=data["token"].pk).exists()
    kept = A2UIConsentRecord.objects.get(pk=data["in_force"].pk)
    assert kept.session is None and kept.is_active
    assert A2UIConsentRecord.objects.filter(pk=data["revoked"].pk).exists()
    assert AuditEvent.objects.filter(action="session.closed",
                                     session_id=data["old"].session_id).exists()
    report = AuditEvent.objects.get(action="retention.purge")
    assert report.actor_label == "system"
    assert report.details["counts"]["sessions"] == 1
    assert run("--older-than", "30").count(": 0 were deleted") == 6  # idempotent


def test_purge_consents_and_audit_when_configured(data):
    with override_settings(A2UI={**settings.A2UI, "PURGE_CONSENTS": True,
                                 "PURGE_AUDIT": True}):
        out = run("--older-than", "30")
    assert "consent records: 1 were deleted" in out
    assert "audit events: 1 were deleted" in out
    assert A2UIConsentRecord.objects.filter(pk=data["in_force"].pk).exists()  # still in force
    assert not A2UIConsentRecord.objects.filter(pk=data["revoked"].pk).exists()
    assert not AuditEvent.objects.filter(action="session.closed").exists()
    assert AuditEvent.objects.filter(action="session.open").exists()  # recent
    assert AuditEvent.objects.filter(action="retention.purge").exists()


def test_anonymize_keeps_rows_without_the_person(data):
    out = run("--older-than", "30", "--anonymize")
    assert "sessions: 1 were anonymized" in out
    old = A2UISessionLog.objects.get(pk=data["old"].pk)
    assert old.user is None and old.token is None and old.client_info == {}
    assert old.close_reason == "" and old.state == "closed"
    assert not RenderedComponent.objects.filter(session=old).exists()
    assert not PendingRequest.objects.filter(session=old).exists()
    assert not SessionEvent.objects.filter(session=old).exists()  # what the person saw, too
    assert "sessions: 0 were anonymized" in run("--older-than", "30", "--anonymize")


def test_default_retention_comes_from_settings(data):
    with override_settings(A2UI={**settings.A2UI, "RETENTION_DAYS": 365}):
        assert "sessions: 0 would be deleted" in run("--dry-run")
    assert "sessions: 1 would be deleted" in run("--dry-run")  # default 90 days


@pytest.mark.parametrize("value", ["abc", "-1", "1.5"])
def test_bad_older_than_is_a_clear_error(value):
    with pytest.raises(CommandError, match="older-than"):
        call_command("a2ui_purge", "--older-than", value)
