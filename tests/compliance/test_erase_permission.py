"""Tier 1: the compliance tools on the admin index (to those allowed), and the erase permission
given and taken back without a shell: ``manage.py a2ui_erase_permission`` and the superusers'
admin page "Who may erase"; each change audited, a change that changes nothing not."""

import io

import pytest
from django.core.management import CommandError, call_command

from a2ui.compliance import access
from a2ui.models import AuditEvent

pytestmark = pytest.mark.django_db
E = "/admin/a2ui/auditevent/erasers/"


def fresh(user):
    from django.contrib.auth import get_user_model

    return get_user_model().objects.get(pk=user.pk)  # no permission cache


def test_the_index_shows_the_compliance_tools_to_those_allowed(officer, staff, superuser,
                                                              client_for):
    page = client_for(officer).get("/admin/").content.decode()
    assert 'id="a2ui-compliance-tools"' in page
    assert 'href="/admin/a2ui/auditevent/verify/">Verify the trail' in page
    assert 'href="/admin/a2ui/auditevent/person/">A person\'s data' in page
    assert "Who may erase" not in page  # superusers only
    assert "Who may erase" in client_for(superuser).get("/admin/").content.decode()
    assert "a2ui-compliance-tools" not in client_for(staff).get("/admin/").content.decode()


def test_the_command_grants_withdraws_and_lists_audited(officer):
    out = io.StringIO()
    call_command("a2ui_erase_permission", "grant", "officer", stdout=out)
    assert fresh(officer).has_perm("a2ui.erase_person")
    assert "officer may erase" in out.getvalue()
    event = AuditEvent.objects.get(action="person.erase_permission")
    assert event.details == {"granted": True, "user": "officer"}
    assert event.target_id == str(officer.pk) and event.actor_label == "system"
    call_command("a2ui_erase_permission", "grant", "officer", stdout=out)  # nothing changes
    assert AuditEvent.objects.filter(action="person.erase_permission").count() == 1
    listed = io.StringIO()
    call_command("a2ui_erase_permission", "list", stdout=listed)
    assert "officer (permission)" in listed.getvalue()
    call_command("a2ui_erase_permission", "withdraw", "officer", stdout=out)
    assert not fresh(officer).has_perm("a2ui.erase_person")
    assert AuditEvent.objects.filter(action="person.erase_permission").count() == 2
    with pytest.raises(CommandError, match="No user named 'nobody'"):
        call_command("a2ui_erase_permission", "grant", "nobody")


def test_a_granted_staff_member_is_made_staff(user):
    assert not user.is_staff
    assert access.set_erase(user, True)
    assert fresh(user).is_staff and fresh(user).has_perm("a2ui.erase_person")


def test_superusers_grant_and_withdraw_in_the_admin(superuser, officer, client_for):
    client = client_for(superuser)
    assert client.get(E).status_code == 200
    response = client.post(E, {"user": "officer", "action": "grant"}, follow=True)
    assert response.status_code == 200 and b"Officer may now erase" in response.content
    assert fresh(officer).has_perm("a2ui.erase_person")
    assert b"<td>officer</td><td>permission</td>" in response.content
    event = AuditEvent.objects.get(action="person.erase_permission")
    assert event.actor == superuser and event.details["granted"] is True
    client.post(E, {"user": "officer", "action": "withdraw"})
    assert not fresh(officer).has_perm("a2ui.erase_person")
    assert client.post(E, {"user": "nobody", "action": "grant"}).status_code == 400
    assert client.post(E, {"user": "officer", "action": "bogus"}).status_code == 400


def test_others_may_not_grant(officer, client_for):
    client = client_for(officer)
    assert client.get(E).status_code == 403
    assert client.post(E, {"user": "officer", "action": "grant"}).status_code == 403
    assert not fresh(officer).has_perm("a2ui.erase_person")
