"""What a host project gets by adding the app: working defaults, or a check naming the fix."""

import pytest
from django.contrib.auth import get_user_model
from django.test import override_settings
from rest_framework.test import APIClient

import a2ui.urls  # noqa: F401  (the views are built under the project's settings, as in a server)
from a2ui.apps import default_channel_layers
from a2ui.checks import check_host_project, check_login_url

APPS = [
    "django.contrib.auth", "django.contrib.contenttypes", "django.contrib.sessions",
    "django.contrib.staticfiles", "rest_framework", "channels", "a2ui",
]


def test_the_example_project_passes():
    assert check_host_project(None) == []
    assert check_login_url(None) == []


def test_missing_apps_are_named():
    with override_settings(INSTALLED_APPS=["django.contrib.auth", "django.contrib.contenttypes",
                                           "django.contrib.staticfiles", "a2ui"]):
        errors = check_host_project(None)
    named = {e.msg.split("'")[1] for e in errors if e.id == "a2ui.E010"}
    assert named == {"django.contrib.sessions", "rest_framework", "channels"}


@pytest.mark.parametrize("layers", [{}, {"other": {}}, None])
def test_channel_layers_without_default(layers):
    with override_settings(CHANNEL_LAYERS=layers):
        assert [e.id for e in check_host_project(None)] == ["a2ui.E011"]


def test_default_channel_layers():
    assert default_channel_layers(None)["default"]["BACKEND"] == (
        "channels.layers.InMemoryChannelLayer")
    redis = default_channel_layers("redis://127.0.0.1:6379/3")["default"]
    assert redis["BACKEND"] == "channels_redis.pubsub.RedisPubSubChannelLayer"
    assert redis["CONFIG"]["hosts"][0]["address"] == "redis://127.0.0.1:6379/3"


def test_static_serving_needs_staticfiles():
    apps = [a for a in APPS if a != "django.contrib.staticfiles"]
    with override_settings(INSTALLED_APPS=apps):
        assert [e.id for e in check_host_project(None)] == ["a2ui.E012"]
    with override_settings(INSTALLED_APPS=apps, A2UI={"SERVE_STATIC": False}):
        assert check_host_project(None) == []


# (The example project serves /accounts/login/ itself: a path no project here has.)
@pytest.mark.parametrize("login_url", ["/no-such/login/", "no-such-url-name"])
def test_login_url_must_resolve(login_url):
    with override_settings(LOGIN_URL=login_url):
        errors = check_login_url(None)
    assert [e.id for e in errors] == ["a2ui.E013"]
    assert "LOGIN_URL" in errors[0].msg


@pytest.mark.django_db
def test_agent_key_works_whatever_rest_framework_says(agent_and_key):
    """A project whose REST_FRAMEWORK names only session auth still takes agent keys."""
    _, key = agent_and_key
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    with override_settings(REST_FRAMEWORK={
        "DEFAULT_AUTHENTICATION_CLASSES": ["rest_framework.authentication.SessionAuthentication"],
    }):
        # (DRF reloads its settings on setting_changed, on entry and on exit)
        resp = client.post("/api/v4/sessions/00000000-0000-4000-8000-000000000000/messages",
                           {"jsonrpc": "2.0", "method": "ui.notify",
                            "params": {"session_id": "x", "title": "t"}}, format="json")
    # authenticated as the agent, so the answer is about the body, not 401/403
    assert resp.status_code == 400, resp.content
    assert b"-32602" in resp.content


def test_schema_class_must_be_spectacular_s():
    with override_settings(REST_FRAMEWORK={}):
        assert [e.id for e in check_host_project(None)] == ["a2ui.W014"]


@pytest.mark.django_db
def test_schema_and_docs_are_served_by_the_app_urls(client):
    get_user_model().objects.create_user("carol", password="pw-carol-123")
    assert client.get("/api/schema/").status_code == 200
    assert client.get("/api/docs/").status_code == 200


PG = "django.db.backends.postgresql"


@pytest.mark.parametrize("db, warned", [
    ({"ENGINE": PG, "CONN_MAX_AGE": 0, "OPTIONS": {"pool": {"max_size": 10}}}, True),
    ({"ENGINE": PG, "CONN_MAX_AGE": 0, "OPTIONS": {"pool": True}}, True),
    ({"ENGINE": PG, "CONN_MAX_AGE": 60}, True),
    ({"ENGINE": PG, "CONN_MAX_AGE": None}, True),
    ({"ENGINE": PG, "CONN_MAX_AGE": 0, "OPTIONS": {"pool": {}},
      "CONN_HEALTH_CHECKS": True}, False),
    ({"ENGINE": PG, "CONN_MAX_AGE": 60, "CONN_HEALTH_CHECKS": True}, False),
    ({"ENGINE": PG, "CONN_MAX_AGE": 0}, False),  # a new connection per request
    ({"ENGINE": "django.db.backends.sqlite3", "CONN_MAX_AGE": 60}, False),
])
def test_kept_postgresql_connections_need_health_checks(db, warned):
    """a2ui.W020: a kept connection the server closed would fail a request (issue 23)."""
    from a2ui.checks import database_warnings

    found = database_warnings({"default": db})
    assert [w.id for w in found] == (["a2ui.W020"] if warned else [])
    if warned:
        assert "CONN_HEALTH_CHECKS" in found[0].hint


def test_the_example_project_checks_its_pooled_connections():
    from django.conf import settings

    from a2ui.checks import check_database_connections

    assert check_database_connections(None) == []
    db = settings.DATABASES["default"]
    if db["ENGINE"] == PG:
        assert db["CONN_HEALTH_CHECKS"] is True


def test_the_service_unavailable_middleware_is_asked_for(settings):
    from a2ui.checks import check_database_connections

    settings.MIDDLEWARE = [m for m in settings.MIDDLEWARE
                           if m != "a2ui.middleware.ServiceUnavailableMiddleware"]
    assert [w.id for w in check_database_connections(None)] == ["a2ui.W021"]
