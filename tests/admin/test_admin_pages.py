"""Every admin changelist and change page answers 200 to a superuser."""

import pytest
from django.contrib import admin
from django.urls import reverse

from a2ui import tokens
from a2ui.compliance import audit
from a2ui.models import (
    A2UIConsentRecord,
    A2UISessionLog,
    AuditEvent,
    PendingRequest,
    RenderedComponent,
    Surface,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def populated(user, agent):
    issued = tokens.issue_stream_token(user, agent)
    session = A2UISessionLog.objects.create(agent=agent, user=user, token=issued.record)
    A2UIConsentRecord.objects.create(session=session, user=user, consent_type="data_collection",
                                     granted=True)
    RenderedComponent.objects.create(session=session, component_id="c1", component_type="card",
                                     data={"title": "x"})
    from django.utils import timezone
    PendingRequest.objects.create(session=session, request_id="r1", kind="input",
                                  params={"prompt": "?"}, deadline=timezone.now())
    Surface.objects.create(session=session, surface_id="s1", catalog_id="basic", state={})
    audit.record("session.open", actor=user, agent=agent, target=session,
                 session_id=session.session_id)


def test_every_changelist_and_change_page(client, superuser, populated):
    client.force_login(superuser)
    models = [m for m in admin.site._registry if m._meta.app_label == "a2ui"]
    assert len(models) >= 8
    for model in models:
        opts = model._meta
        url = reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist")
        assert client.get(url).status_code == 200, url
        obj = model.objects.first()
        assert obj is not None, model
        url = reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[obj.pk])
        assert client.get(url).status_code == 200, url


def test_changelist_filters(client, superuser, populated):
    client.force_login(superuser)
    for url in [
        "/admin/a2ui/a2uisessionlog/?state__exact=active",
        "/admin/a2ui/streamtoken/?state=active",
        "/admin/a2ui/streamtoken/?state=revoked",
        "/admin/a2ui/a2uiconsentrecord/?consent_type=data_collection",
        "/admin/a2ui/a2uisessionlog/?q=alice",
    ]:
        assert client.get(url).status_code == 200, url


def test_audit_events_cannot_change(populated):
    from django.core.exceptions import PermissionDenied

    event = AuditEvent.objects.first()
    event.action = "tampered"
    with pytest.raises(PermissionDenied):
        event.save()
    with pytest.raises(PermissionDenied):
        event.delete()
    with pytest.raises(PermissionDenied):
        AuditEvent.objects.all().delete()
    with pytest.raises(PermissionDenied):
        AuditEvent.objects.update(action="x")


READ_ONLY = [A2UISessionLog, A2UIConsentRecord, RenderedComponent, PendingRequest, Surface,
             AuditEvent]


@pytest.mark.parametrize("model", READ_ONLY, ids=lambda m: m.__name__)
def test_read_only_models_say_view_not_change(client, superuser, populated, model):
    client.force_login(superuser)
    obj = model.objects.first()
    page = client.get(reverse(f"admin:a2ui_{model._meta.model_name}_change", args=[obj.pk]))
    assert page.status_code == 200
    title = page.content.decode().split("<title>", 1)[1].split("</title>", 1)[0]
    assert f"| View {model._meta.verbose_name} |" in title, title


def test_an_agent_icon_follows_the_one_url_policy(client, superuser):
    """Django's URLField allowed ftp, credentials and bracketed hosts in the icon people see;
    the agent form now refuses whatever a2ui.core.content.urls refuses, and no agent is made."""
    from a2ui.models import Agent

    client.force_login(superuser)
    url = reverse("admin:a2ui_agent_add")
    for icon in ("ftp://example.com/i.png", "https://user:pw@example.com/i.png",
                 "https://[x]/i.png", "https://example.com/\u202ei.png", "/static/i.png"):
        response = client.post(url, {"name": "bot", "icon_url": icon})
        assert response.status_code == 200, icon  # the form again, with its error
        assert "Not an acceptable icon URL" in response.content.decode() or \
            "Enter a valid URL" in response.content.decode(), icon
        assert not Agent.objects.filter(name="bot").exists(), icon
    response = client.post(url, {"name": "bot", "icon_url": "https://example.com/i.png"})
    assert response.status_code == 302
    assert Agent.objects.get(name="bot").icon_url == "https://example.com/i.png"


def test_hostile_action_selections_are_400(client, superuser, populated):
    """A selected row that is not an id of the list crashed Django's admin (500)."""
    client.force_login(superuser)
    for name, value in (("agent", "x"), ("agent", "\x00"), ("a2uisessionlog", "1"),
                        ("streamtoken", "nope"), ("agent", "9" * 30)):
        response = client.post(reverse(f"admin:a2ui_{name}_changelist"),
                               {"action": "delete_selected", "_selected_action": [value]})
        assert response.status_code == 400, (name, value)
        assert b"not an id of this list" in response.content


def test_integers_beyond_64_bits_are_not_a_crash(client, superuser, populated):
    """SQLite raised OverflowError (500) for a filter beyond 64 bits (found by the admin fuzz);
    PostgreSQL's lookup finds nothing."""
    client.force_login(superuser)
    huge = "9" * 30
    response = client.get(f"{reverse('admin:a2ui_streamtoken_changelist')}?agent={huge}")
    assert response.status_code in (200, 400), response.status_code
