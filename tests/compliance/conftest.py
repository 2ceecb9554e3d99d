"""Fixtures for compliance tests: operators by role, an admin client per role."""

import pytest

from a2ui.compliance import access


@pytest.fixture
def compliance_group(db):

    return access.ensure_compliance_group()[0]


@pytest.fixture
def officer(db, compliance_group):
    """A staff member in the "a2ui compliance" group."""
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.create_user(
        "officer", "officer@example.com", "pw-officer-123", is_staff=True
    )
    user.groups.add(compliance_group)
    return user


@pytest.fixture
def staff(db):
    """Staff without any a2ui permission."""
    from django.contrib.auth import get_user_model

    return get_user_model().objects.create_user(
        "staffer", "staffer@example.com", "pw-staff-123", is_staff=True
    )


@pytest.fixture
def viewer(db):
    """Staff who may view sessions, consents, tokens and agents but run no action."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Permission

    user = get_user_model().objects.create_user(
        "viewer", "viewer@example.com", "pw-viewer-123", is_staff=True
    )
    user.user_permissions.set(Permission.objects.filter(
        content_type__app_label="a2ui", codename__startswith="view_"))
    return user


@pytest.fixture
def client_for(db):
    """``client_for(user)``: a test Client signed in as that user."""
    from django.test import Client

    def make(user):
        client = Client()
        client.force_login(user)
        return client

    return make
