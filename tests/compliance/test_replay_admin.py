"""The admin's replay pages (tier 1: Django's test client; tests/browser/test_replay.py draws
them in Chromium): who may see them, the frame's isolation, the timeline's links."""

import json
import re

import pytest
from asgiref.sync import async_to_sync

from a2ui import tokens
from a2ui.consent import choices as consent
from a2ui.models import SessionEvent
from a2ui.push import answers
from a2ui.push import entry as pushentry
from a2ui.sessions import admission
from tests.surfaces.helpers import V09_CAPS

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def story(user, agent):
    """A session: a card, a confirm the person answered, a consent they granted."""
    record = tokens.issue_stream_token(user, agent).record
    s = admission.open_session(record, {}, V09_CAPS)

    def push(method, **params):
        _, clean = pushentry.validate(method, {**params, "session_id": str(s.session_id)})
        async_to_sync(pushentry.apush)(agent.pk, s.session_id, method, clean)

    push("ui.render", component_id="c1", component_type="card",
         data={"title": "Order <b>42</b>"})
    push("ui.confirm", request_id="r1", title="Buy?", message="Pay 10 EUR", timeout_seconds=60)
    async_to_sync(answers.aanswer)(s.session_id, "r1", "confirm", {"approved": True,
                                                                   "reason": ""})
    consent.record_choice(user, "data_collection", True, s.session_id)
    return s


def page(client, s, suffix="", at=None):
    url = f"/admin/a2ui/a2uisessionlog/{s.pk}/replay/{suffix}"
    return client.get(url if at is None else f"{url}?at={at}")


def frame_messages(response):
    found = re.search(r'<script id="a2ui-replay-messages" type="application/json">(.*?)</script>',
                      response.content.decode(), re.S)
    return json.loads(found.group(1))


def test_the_frame_is_isolated(admin_client, story):
    response = page(admin_client, story, "frame/")
    assert response.status_code == 200
    policy = response["Content-Security-Policy"]
    assert "connect-src 'none'" in policy and "default-src 'none'" in policy
    assert "form-action 'none'" in policy and "frame-ancestors 'self'" in policy
    # fetched directly (not in the page's sandboxed iframe), it is sandboxed all the same
    assert "sandbox allow-scripts" in policy
    assert response["X-Frame-Options"] == "SAMEORIGIN"
    html = page(admin_client, story).content.decode()
    assert 'sandbox="allow-scripts"' in html and "allow-same-origin" not in html


def test_each_moment_shows_what_stood(admin_client, story):
    from a2ui.compliance import replay as replaylog

    replaylog.buffer.flush_sync()
    kinds = list(SessionEvent.objects.filter(session=story).values_list("kind", flat=True))
    assert kinds == ["component.rendered", "request.opened", "request.closed"]
    methods = [[m["method"] for m in frame_messages(page(admin_client, story, "frame/", n))]
               for n in range(5)]
    assert methods == [[], ["ui.render"], ["ui.render", "ui.confirm"], ["ui.render"],
                       ["ui.render"]]
    card = frame_messages(page(admin_client, story, "frame/", 1))[0]["params"]
    assert card["data"] == {"title": "Order 42"}  # as stored (sanitized on push)


def test_a_moment_out_of_range_is_clamped_and_a_bad_one_is_the_last(admin_client, story):
    assert 'data-moment="0"' in page(admin_client, story, "frame/", -3).content.decode()
    assert 'data-moment="4"' in page(admin_client, story, "frame/", 99).content.decode()
    assert 'data-moment="4"' in page(admin_client, story, "frame/", "x").content.decode()


def test_the_page_steps_through_the_moments(admin_client, story):
    html = page(admin_client, story, at=2).content.decode()
    assert 'href="?at=1"' in html and 'href="?at=3"' in html
    assert "asked (confirm): r1" in html and "consent granted: data_collection" in html
    assert f'src="/admin/a2ui/a2uisessionlog/{story.pk}/replay/frame/?at=2"' in html
    from a2ui.models import AuditEvent

    seen = AuditEvent.objects.filter(action="session.replay", session_id=story.pk)
    assert [e.details for e in seen] == [{"at": 2, "via": "page"}]  # who looked, where


def test_answers_and_consents_link_to_the_screen_then(admin_client, story):
    html = admin_client.get(f"/admin/a2ui/a2uisessionlog/{story.pk}/change/").content.decode()
    links = dict(re.findall(r'\?at=(\d+)" data-replay-entry="(\w+)"', html))
    # The answer: the screen with the confirm open (before it closed); the consent: after it.
    assert set(links.values()) == {"answer", "consent"}
    by_kind = {kind: int(at) for at, kind in links.items()}
    assert by_kind == {"answer": 2, "consent": 3}


def test_who_may_replay(client_for, staff, viewer, user, story):
    assert page(client_for(staff), story).status_code == 403
    assert page(client_for(staff), story, "frame/").status_code == 403
    assert page(client_for(viewer), story).status_code == 200
    assert page(client_for(user), story).status_code == 302  # not staff: the login page


def test_an_unknown_session_is_404(admin_client, story):
    response = admin_client.get(
        "/admin/a2ui/a2uisessionlog/00000000-0000-0000-0000-000000000000/replay/")
    assert response.status_code == 404


def test_a_view_is_audited_once_however_many_moments_and_frames(admin_client, client_for,
                                                                 viewer, story):
    from a2ui.models import AuditEvent

    for n in range(5):  # the timeline's moments clicked through, each page with its frame
        assert page(admin_client, story, at=n).status_code == 200
        assert page(admin_client, story, "frame/", n).status_code == 200
    seen = AuditEvent.objects.filter(action="session.replay", session_id=story.pk)
    assert [(e.actor.username, e.details) for e in seen] == [("admin", {"at": 0, "via": "page"})]
    # the frame fetched directly, with no page: audited too (once)
    other = client_for(viewer)
    for n in (3, 1):
        assert page(other, story, "frame/", n).status_code == 200
    seen = AuditEvent.objects.filter(action="session.replay", session_id=story.pk,
                                     actor=viewer)
    assert [e.details for e in seen] == [{"at": 3, "via": "frame"}]


def test_a_refusal_is_one_log_line_not_a_traceback(client_for, staff, story, caplog):
    caplog.set_level("WARNING", logger="django.request")
    for suffix in ("", "frame/"):
        assert page(client_for(staff), story, suffix).status_code == 403
    refusals = [r for r in caplog.records if r.name == "django.request"]
    assert len(refusals) == 2 and all(r.exc_info is None for r in refusals), refusals
    assert all(r.getMessage().startswith("Forbidden") for r in refusals)
