"""Tier 1: the audit trail's filters and CSV export, and a session's timeline page."""

import csv
import io
import uuid
from datetime import timedelta

import pytest
from django.utils import timezone
from django.utils.html import strip_tags

from a2ui.compliance import audit
from a2ui.models import A2UIConsentRecord, A2UISessionLog, AuditEvent, PendingRequest

pytestmark = pytest.mark.django_db

LIST = "/admin/a2ui/auditevent/"
EXPORT = "/admin/a2ui/auditevent/export.csv"


@pytest.fixture
def trail(user, other_user, agent, superuser):
    s1 = A2UISessionLog.objects.create(user=user, agent=agent, state="active")
    s2 = A2UISessionLog.objects.create(user=other_user, agent=agent, state="active")
    old = timezone.now() - timedelta(days=10)
    events = [
        audit.record("session.open", actor=user, agent=agent, target=s1,
                     session_id=s1.session_id),
        audit.record("session.open", actor=other_user, agent=agent, target=s2,
                     session_id=s2.session_id),
        audit.record("token.revoke", actor=superuser, target=("streamtoken", "t1"),
                     details={"note": "=HYPERLINK(\"http://evil\")"}),
        audit.record("agent.create", agent=agent, target=agent),
    ]
    AuditEvent.objects.create(actor_label="system", action="retention.purge", at=old)
    return {"s1": s1, "s2": s2, "events": events}


def rows(response):
    body = b"".join(response.streaming_content).decode()
    return list(csv.DictReader(io.StringIO(body)))


def listed(response):
    return [(e.action, e.actor_label) for e in response.context["cl"].result_list]


@pytest.mark.parametrize(("query", "expected"), [
    ("actor=alice", [("session.open", "user:alice")]),
    ("actor=agent:", [("agent.create", "agent:demo-agent")]),
    ("action__exact=token.revoke", [("token.revoke", "user:root")]),
])
def test_filters(superuser, client_for, trail, query, expected):
    response = client_for(superuser).get(f"{LIST}?{query}")
    assert response.status_code == 200
    assert listed(response) == expected


def test_filter_by_session_agent_and_date(superuser, client_for, trail, agent):
    client = client_for(superuser)
    sid = trail["s2"].session_id
    assert listed(client.get(f"{LIST}?session={sid}")) == [("session.open", "user:bob")]
    by_agent = listed(client.get(f"{LIST}?agent__id__exact={agent.pk}"))
    assert len(by_agent) == 3
    today = timezone.now().date().isoformat()
    assert len(listed(client.get(f"{LIST}?from={today}"))) == 4
    old_day = (timezone.now() - timedelta(days=10)).date().isoformat()
    assert listed(client.get(f"{LIST}?to={old_day}")) == [("retention.purge", "system")]


@pytest.mark.parametrize("query", ["session=not-a-uuid", "from=yesterday", "to=2024-13-45"])
def test_bad_filter_values_are_explained_not_500(superuser, client_for, trail, query):
    response = client_for(superuser).get(f"{LIST}?{query}", follow=True)
    assert response.status_code == 200
    text = response.content.decode()
    assert "errornote" in text or "error" in text
    assert listed(response) == []


def test_export_follows_the_filters_and_is_audited(superuser, client_for, trail):
    client = client_for(superuser)
    response = client.get(f"{EXPORT}?actor=root")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    assert "attachment" in response["Content-Disposition"]
    got = rows(response)
    assert [r["action"] for r in got] == ["token.revoke"]
    assert got[0]["details"].startswith("'{") or got[0]["details"].startswith("{")
    assert '"note": "=HYPERLINK' in got[0]["details"]
    export = AuditEvent.objects.get(action="audit.export")
    assert export.actor_label == "user:root"
    assert export.details == {"rows": 1, "filters": {"actor": "root"}}


def test_export_everything(superuser, client_for, trail):
    got = rows(client_for(superuser).get(EXPORT))
    assert len(got) == 5
    assert set(got[0]) == {"at", "actor", "actor_id", "action", "target_type", "target_id",
                           "session_id", "agent", "details"}


def test_export_cells_are_not_formulas(superuser, client_for, db):
    AuditEvent.objects.create(actor_label="=cmd|' /C calc'!A0", action="@sum", target_id="+1")
    got = rows(client_for(superuser).get(EXPORT))
    assert got[0]["actor"].startswith("'=") and got[0]["action"] == "'@sum"
    assert got[0]["target_id"] == "'+1"


def test_export_needs_view_permission(staff, officer, client_for, trail):
    assert client_for(staff).get(EXPORT).status_code == 403
    assert client_for(officer).get(EXPORT).status_code == 200


def test_export_link_keeps_the_filters(superuser, client_for, trail):
    body = client_for(superuser).get(f"{LIST}?actor=alice").content.decode()
    assert f"{EXPORT}?actor=alice" in body


def test_session_page_shows_its_timeline(officer, client_for, user, agent, superuser):
    session = A2UISessionLog.objects.create(
        user=user, agent=agent, state="active", client_info={"name": "WebUI"},
        message_count=7, components_rendered=2, inputs_requested=1)
    audit.record("session.open", actor=user, agent=agent, target=session,
                 session_id=session.session_id)
    A2UIConsentRecord.objects.create(user=user, session=session, consent_type="data_collection",
                                     granted=True, revoked_at=timezone.now(),
                                     revoked_by=superuser)
    now = timezone.now()
    PendingRequest.objects.create(session=session, request_id="r1", kind="input",
                                  params={"prompt": "Your name?", "input_type": "text"},
                                  deadline=now + timedelta(minutes=5), status="answered",
                                  answer="Ada Lovelace", resolved_at=now)
    PendingRequest.objects.create(session=session, request_id="k1", kind="confirm",
                                  params={"title": "Delete all?"}, deadline=now,
                                  status="timed_out", resolved_at=now)
    from a2ui.sessions import lifecycle as sessions

    sessions.close_session(session.session_id, "closed", "Session terminated by an operator",
                           actor=superuser)
    body = client_for(officer).get(f"/admin/a2ui/a2uisessionlog/{session.pk}/change/")
    assert body.status_code == 200
    text = body.content.decode()
    for expected in ("Timeline", "Session opened", "name: WebUI", "Messages: <strong>7",
                     "Consent granted: data_collection", "Consent revoked: data_collection",
                     "Input asked (text): Your name?", "Answered (r1)", "Ada Lovelace",
                     "Confirmation asked: Delete all?", "Request timed out (k1)",
                     "Session closed", "Session terminated by an operator", "user:root"):
        assert expected in text, expected
    kinds = [e.kind for e in body.context["timeline"]]
    assert kinds[0] == "opened" and kinds[-1] == "closed"
    (answer,) = [e for e in body.context["timeline"] if e.title == "Answered (r1)"]
    assert answer.actor == user.get_username()  # the person answered
    (expired,) = [e for e in body.context["timeline"] if e.title == "Request timed out (k1)"]
    assert expired.actor == ""


def test_session_page_reads_well(officer, client_for, user, agent):
    """A detached live session is not shown "Active"; client info and capabilities are lists,
    not raw JSON; the list's times have seconds."""
    at = timezone.now().replace(microsecond=0)
    session = A2UISessionLog.objects.create(
        user=user, agent=agent, state="active", detached_at=at, last_activity=at,
        client_info={"name": "WebUI", "version": "1.2"},
        capabilities={"components": ["text", "chart"], "v09": {"catalogs": ["basic"]}})
    page = client_for(officer).get(f"/admin/a2ui/a2uisessionlog/{session.pk}/change/")
    assert page.status_code == 200
    text = page.content.decode()
    assert "Detached (resumable)" in text
    assert "<dt>name</dt><dd>WebUI</dd>" in text and "<dd>text, chart</dd>" in text
    # Not the raw JSON Django shows for a JSONField (its repr, or as JSON).
    assert "&#x27;name&#x27;: &#x27;WebUI&#x27;" not in text
    assert "{&quot;name&quot;: &quot;WebUI&quot;" not in text
    listing = client_for(officer).get("/admin/a2ui/a2uisessionlog/").content.decode()
    assert "Detached (resumable)" in listing
    shown = strip_tags(listing)  # a time's date and clock each in a span that keeps it whole
    assert timezone.localtime(at).strftime("%Y-%m-%d %H:%M:%S") in shown


def test_unknown_session_page_is_not_a_500(officer, client_for):
    response = client_for(officer).get(f"/admin/a2ui/a2uisessionlog/{uuid.uuid4()}/change/")
    assert response.status_code == 302  # the admin's "doesn't exist" redirect
