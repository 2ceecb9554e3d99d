"""Tier 1: the permission matrix of the admin, and the "a2ui compliance" group itself."""

import pytest
from django.contrib.admin import helpers
from django.core.management import call_command

from a2ui import tokens
from a2ui.compliance import audit
from a2ui.models import A2UIConsentRecord, A2UISessionLog, AuditEvent

pytestmark = pytest.mark.django_db

A = "/admin/a2ui/"
VIEWABLE = ["a2uisessionlog", "a2uiconsentrecord", "auditevent", "streamtoken", "agent"]
HIDDEN = ["pendingrequest", "renderedcomponent", "surface"]
ACTIONS = {
    "a2uisessionlog": "terminate_sessions",
    "streamtoken": "revoke_tokens",
    "agent": "revoke_agents",
    "a2uiconsentrecord": "revoke_consents",
}


@pytest.fixture
def objects(user, agent):
    issued = tokens.issue_stream_token(user, agent)
    session = A2UISessionLog.objects.create(user=user, agent=agent, token=issued.record,
                                            state="initialized")
    record = A2UIConsentRecord.objects.create(user=user, session=session,
                                              consent_type="data_collection", granted=True)
    event = audit.record("session.open", actor=user, agent=agent, target=session,
                         session_id=session.session_id)
    return {"a2uisessionlog": session.pk, "streamtoken": issued.record.pk, "agent": agent.pk,
            "a2uiconsentrecord": record.pk, "auditevent": event.pk}


def action_names(response):
    form = response.context["action_form"] if response.context else None
    if form is None:
        return set()
    return {name for name, _ in form.fields["action"].choices if name}


def test_group_holds_exactly_its_permissions(compliance_group):
    perms = {f"{p.content_type.app_label}.{p.codename}"
             for p in compliance_group.permissions.select_related("content_type")}
    assert perms == {
        "a2ui.view_a2uisessionlog", "a2ui.view_a2uiconsentrecord", "a2ui.view_auditevent",
        "a2ui.view_streamtoken", "a2ui.view_agent", "a2ui.terminate_a2uisessionlog",
        "a2ui.revoke_streamtoken", "a2ui.revoke_agent", "a2ui.revoke_a2uiconsentrecord",
        "a2ui.view_replay", "a2ui.verify_auditevent", "a2ui.export_person",
    }
    assert "a2ui.erase_person" not in perms  # a second permission, given on purpose


def test_command_creates_and_resets_the_group(user, capsys):
    from django.contrib.auth.models import Group, Permission

    call_command("a2ui_compliance_group")
    group = Group.objects.get(name="a2ui compliance")
    assert group.permissions.count() == 12
    group.permissions.add(Permission.objects.get(codename="delete_agent"))
    call_command("a2ui_compliance_group", "--add-user", "alice")
    assert group.permissions.count() == 12  # reset to exactly its permissions
    user.refresh_from_db()
    assert user.is_staff and user.groups.filter(pk=group.pk).exists()
    assert "Updated group" in capsys.readouterr().out


def test_command_unknown_user_is_a_clear_error():
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="No user named 'nobody'"):
        call_command("a2ui_compliance_group", "--add-user", "nobody")


@pytest.mark.parametrize("model", VIEWABLE)
def test_officer_views_and_may_act(officer, client_for, objects, model):
    client = client_for(officer)
    response = client.get(f"{A}{model}/")
    assert response.status_code == 200
    expected = {ACTIONS[model]} if model in ACTIONS else set()
    assert action_names(response) == expected  # no delete_selected, nothing else
    detail = client.get(f"{A}{model}/{objects[model]}/change/")
    assert detail.status_code == 200
    assert b'name="_save"' not in detail.content  # read-only
    assert client.get(f"{A}{model}/add/").status_code == 403
    assert client.get(f"{A}{model}/{objects[model]}/delete/").status_code == 403


@pytest.mark.parametrize("model", HIDDEN)
def test_officer_sees_nothing_else(officer, client_for, model):
    assert client_for(officer).get(f"{A}{model}/").status_code == 403


def test_officer_cannot_change_an_agent(officer, client_for, objects, agent):
    response = client_for(officer).post(f"{A}agent/{agent.pk}/change/",
                                        {"name": "renamed", "display_name": "x"})
    assert response.status_code == 403
    agent.refresh_from_db()
    assert agent.name == "demo-agent"


def test_officer_cannot_reach_auth_admin(officer, client_for):
    client = client_for(officer)
    assert client.get("/admin/auth/user/").status_code == 403
    assert client.get("/admin/auth/group/").status_code == 403


@pytest.mark.parametrize("model", VIEWABLE + HIDDEN)
def test_staff_without_permissions_sees_nothing(staff, client_for, model):
    assert client_for(staff).get(f"{A}{model}/").status_code == 403


@pytest.mark.parametrize("model", list(ACTIONS))
def test_viewer_may_look_but_not_act(viewer, client_for, objects, model):
    client = client_for(viewer)
    response = client.get(f"{A}{model}/")
    assert response.status_code == 200
    assert action_names(response) == set()
    client.post(f"{A}{model}/", {"action": ACTIONS[model],
                                 helpers.ACTION_CHECKBOX_NAME: [str(objects[model])]})
    assert not AuditEvent.objects.filter(actor__username="viewer").exists()


def test_non_staff_is_sent_to_login(user, client_for):
    response = client_for(user).get(f"{A}a2uisessionlog/")
    assert response.status_code == 302 and "/admin/login/" in response["Location"]


def test_superuser_cannot_change_or_delete_audit(superuser, client_for, objects):
    client = client_for(superuser)
    pk = objects["auditevent"]
    listing = client.get(f"{A}auditevent/")
    assert "delete_selected" not in action_names(listing)
    assert client.get(f"{A}auditevent/add/").status_code == 403
    assert client.get(f"{A}auditevent/{pk}/delete/").status_code == 403
    assert client.post(f"{A}auditevent/{pk}/delete/", {"post": "yes"}).status_code == 403
    response = client.post(f"{A}auditevent/{pk}/change/", {"action": "tampered"})
    assert response.status_code == 403
    client.post(f"{A}auditevent/", {"action": "delete_selected",
                                     helpers.ACTION_CHECKBOX_NAME: [str(pk)], "post": "yes"})
    assert AuditEvent.objects.get(pk=pk).action == "session.open"


def test_superuser_cannot_delete_sessions_or_consents(superuser, client_for, objects):
    client = client_for(superuser)
    for model in ("a2uisessionlog", "a2uiconsentrecord", "streamtoken"):
        assert client.get(f"{A}{model}/{objects[model]}/delete/").status_code == 403
    assert A2UISessionLog.objects.filter(pk=objects["a2uisessionlog"]).exists()


def test_audit_model_refuses_changes_outside_the_admin(objects):
    from django.core.exceptions import PermissionDenied

    event = AuditEvent.objects.get(pk=objects["auditevent"])
    event.action = "x"
    with pytest.raises(PermissionDenied):
        event.save()
    with pytest.raises(PermissionDenied):
        event.delete()
    with pytest.raises(PermissionDenied):
        AuditEvent.objects.filter(pk=event.pk).update(action="x")
    with pytest.raises(PermissionDenied):
        AuditEvent.objects.all().delete()
