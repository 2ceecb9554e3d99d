"""Every bad body gets a 4xx with a message, never a 500 (DRF alone lets deep nesting 500)."""

import pytest
from rest_framework.test import APIClient

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


def _asgi_request(path, body, headers):
    """A request as Daphne hands it over for a body streamed without a Content-Length (chunked
    transfer encoding): Django's test clients always send one."""
    import io

    from django.core.handlers.asgi import ASGIRequest

    scope = {"type": "http", "method": "POST", "path": path, "query_string": b"",
             "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
             "client": ("127.0.0.1", 1), "server": ("testserver", 80)}
    return ASGIRequest(scope, io.BytesIO(body))


def test_a_streamed_body_is_read_up_to_the_limit_on_drf_views(agent_key, session, settings):
    """DRF took a request without a Content-Length for one without a body (a JSON POST
    served as empty); Django's request.body reads it whole, however large."""
    from asgiref.sync import async_to_sync

    from a2ui.conf import a2ui_settings
    from a2ui.jsonrpc.views import SessionMessagesView

    view = SessionMessagesView.as_view()
    path = f"/api/v4/sessions/{session.session_id}/messages"
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {agent_key}"}
    limit = a2ui_settings.MAX_PAYLOAD_SIZE
    body = b'{"jsonrpc":"2.0","method":"ui.notify","params":{"title":"' + b"x" * limit + b'"}}'
    request = _asgi_request(path, body, headers)
    response = async_to_sync(view)(request, session_id=session.session_id)
    assert response.status_code == 413, response.data
    assert len(request.body) == limit + 1  # read no further
    ok = b'{"jsonrpc":"2.0","method":"ui.notify","params":{"title":"hello","level":"info"}}'
    response = async_to_sync(view)(_asgi_request(path, ok, headers),
                                   session_id=session.session_id)
    assert response.status_code == 202, response.data


def test_the_agui_run_answers_oversized_bodies_with_json_413(user, agent, settings):
    """POST /api/v4/agui/run: past DATA_UPLOAD_MAX_MEMORY_SIZE (Django's HTML 400 before), a
    form body past it read by the CSRF check of a signed-in person, and a body over the limit
    streamed without a Content-Length."""
    from asgiref.sync import async_to_sync
    from django.test import Client

    from a2ui import tokens
    from a2ui.agui1.view import run_view
    from a2ui.conf import a2ui_settings

    token = tokens.issue_stream_token(user, agent, "stream_agui").token
    auth = {"HTTP_AUTHORIZATION": f"Bearer {token}"}
    url = "/api/v4/agui/run"
    big = b'{"x":"' + b"x" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1) + b'"}'
    client = Client()
    response = client.post(url, big, content_type="application/json", **auth)
    assert response.status_code == 413 and response.json()["error"]["reason"] == \
        "payload_too_large", response.content[:200]
    signed_in = Client(enforce_csrf_checks=True)
    signed_in.force_login(user)
    signed_in.get("/admin/login/")  # the CSRF cookie: the check then reads the form body
    response = signed_in.post(url, b"a=" + b"x" * settings.DATA_UPLOAD_MAX_MEMORY_SIZE,
                              content_type="application/x-www-form-urlencoded")
    assert response.status_code == 413, response.content[:200]
    assert response["Content-Type"].startswith("application/json")
    limit = a2ui_settings.MAX_PAYLOAD_SIZE
    request = _asgi_request(url, b'{"x":"' + b"x" * limit + b'"}', {
        "Content-Type": "application/json", "Authorization": f"Bearer {token}"})
    response = async_to_sync(run_view)(request)
    assert response.status_code == 413, response.content[:200]
    assert len(request.body) == limit + 1
