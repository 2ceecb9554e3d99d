"""Every bad body gets a 4xx with a message, never a 500 (DRF alone lets deep nesting 500)."""

import pytest
from rest_framework.test import APIClient

from a2ui.models import A2UISessionLog

# Some bodies reach the async services (another thread, another connection): transactional.
pytestmark = pytest.mark.django_db(transaction=True)

BODIES = [
    b"", b"{", b"[]", b"null", b"123", b'"x"', b"\xff\xfe", b'{"a":' * 2000, b"[" * 100000,
    b'{"jsonrpc":"2.0"}', b'[{"jsonrpc":"2.0","method":"ui.notify"}]',
    b'{"jsonrpc":"2.0","method":"ui.notify","params":[]}',
]
PATHS = [
    "/api/v4/stream-token",
    "/api/v4/sessions/{sid}/messages",
    "/api/v4/sessions/{sid}/surfaces",
    "/api/v4/sessions/{sid}/agui",
    "/api/v4/sessions/not-a-uuid/messages",
    "/api/v4/consents/revoke",
]


@pytest.fixture
def session(user, agent):
    return A2UISessionLog.objects.create(agent=agent, user=user, state="active")


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("body", BODIES, ids=range(len(BODIES)))
def test_bad_bodies_are_4xx(body, path, user, agent_key, session):
    client = APIClient()
    if "sessions" in path:
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {agent_key}")
    else:
        client.force_authenticate(user)
    response = client.post(path.format(sid=session.session_id), body,
                           content_type="application/json")
    assert 400 <= response.status_code < 500, (response.status_code, response.content[:200])


def test_body_over_the_payload_limit_is_413(agent_key, session):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {agent_key}")
    body = b'{"jsonrpc":"2.0","method":"ui.notify","params":{"title":"' + b"x" * 1048576 + b'"}}'
    response = client.post(f"/api/v4/sessions/{session.session_id}/messages", body,
                           content_type="application/json")
    assert response.status_code == 413 and "MAX_PAYLOAD_SIZE" in response.json()["detail"]


def test_body_over_djangos_upload_limit_is_413_too(agent_key, session, settings):
    """Past DATA_UPLOAD_MAX_MEMORY_SIZE Django refuses the body before the JSON parser runs."""
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {agent_key}")
    body = b'{"jsonrpc":"2.0","method":"ui.notify","params":{"title":"' + b"x" * (
        settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1) + b'"}}'
    response = client.post(f"/api/v4/sessions/{session.session_id}/messages", body,
                           content_type="application/json")
    assert response.status_code == 413 and "MAX_PAYLOAD_SIZE" in response.json()["detail"]
