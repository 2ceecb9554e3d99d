"""What a host project gets by adding the app: working defaults, or a check naming the fix."""

import pytest
from django.contrib.auth import get_user_model
from django.test import override_settings
from rest_framework.test import APIClient

import a2ui.urls  # noqa: F401  (the views are built under the project's settings, as in a server)
from a2ui.apps import default_channel_layers
from a2ui.checks import check_host_project, check_login_url
from a2ui.tokens import create_agent

APPS = [
    "django.contrib.auth", "django.contrib.contenttypes", "django.contrib.sessions",
    "django.contrib.staticfiles", "rest_framework", "channels", "drf_spectacular", "a2ui",
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
    assert redis["BACKEND"] == "a2ui.layer.PubSubChannelLayer"  # channels-redis's, lean queues
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


def test_a_project_without_drf_spectacular_is_told_where_the_api_docs_went():
    """The README's endpoint table promises /api/schema/ and /api/docs/: a project that left
    drf_spectacular out is told so, with the two lines that serve them."""
    with override_settings(INSTALLED_APPS=[a for a in APPS if a != "drf_spectacular"]):
        (warning,) = check_host_project(None)
    assert warning.id == "a2ui.W015"
    assert "/api/schema/" in warning.msg and "/api/docs/" in warning.msg
    assert "'drf_spectacular'" in warning.hint and "DEFAULT_SCHEMA_CLASS" in warning.hint


def test_deploy_hints_speak_of_the_host_projects_settings(settings):
    from a2ui.checks import check_shared_state

    settings.DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}}
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    settings.A2UI = {**getattr(settings, "A2UI", {}), "REDIS_URL": None}
    hints = {w.id: w.hint for w in check_shared_state(None)}
    assert "DATABASES['default']" in hints["a2ui.W040"]
    assert "A2UI['REDIS_URL']" in hints["a2ui.W041"] and "CHANNEL_LAYERS" in hints["a2ui.W041"]
    assert 'A2UI = {"REDIS_URL"' in hints["a2ui.W042"]
    for hint in hints.values():  # not the example project's environment
        assert "example project" not in hint and "DATABASE_URL" not in hint


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


@pytest.mark.django_db
def test_several_agents_without_a_default_are_named(settings):
    from a2ui.checks import check_default_agent

    settings.A2UI = {**getattr(settings, "A2UI", {}), "DEFAULT_AGENT": None}
    assert check_default_agent(None, databases=["default"]) == []  # none: nothing to choose
    create_agent("support")
    assert check_default_agent(None, databases=["default"]) == []  # one: it is the default
    create_agent("sales")
    [warning] = check_default_agent(None, databases=["default"])
    assert warning.id == "a2ui.W030" and "'sales'" in warning.msg and "'support'" in warning.msg
    assert check_default_agent(None) == []  # without --database the check reads nothing
    settings.A2UI = {**settings.A2UI, "DEFAULT_AGENT": "support"}
    assert check_default_agent(None, databases=["default"]) == []
    settings.A2UI = {**settings.A2UI, "DEFAULT_AGENT": "gone"}
    assert [w.id for w in check_default_agent(None, databases=["default"])] == ["a2ui.W031"]


@pytest.mark.django_db
def test_a_person_is_not_shown_a_developers_words(user, caplog):

    create_agent("support")
    create_agent("sales")
    client = APIClient()
    client.force_authenticate(user)
    response = client.post("/api/v4/stream-token", {"token_type": "stream_a2ui"},
                           format="json")
    assert response.status_code == 400
    text = " ".join(response.json()["agent_id"])
    assert "No assistant is available" in text and "DEFAULT_AGENT" not in text
    assert any("DEFAULT_AGENT" in r.getMessage() for r in caplog.records)  # for the operators


def test_deploy_checks_name_what_several_processes_cannot_share(settings):
    from a2ui.checks import check_shared_state

    settings.DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}}
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    settings.A2UI = {**getattr(settings, "A2UI", {}), "REDIS_URL": None}
    assert [w.id for w in check_shared_state(None)] == ["a2ui.W040", "a2ui.W041", "a2ui.W042"]
    settings.DATABASES = {"default": {"ENGINE": "django.db.backends.postgresql", "NAME": "x"}}
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels_redis.core.RedisChannelLayer"}}
    settings.A2UI = {**settings.A2UI, "REDIS_URL": "redis://127.0.0.1:6379/0"}
    assert check_shared_state(None) == []


def test_the_example_project_asks_for_a_secret_key_under_deploy(monkeypatch):
    from a2ui_project.checks import check_secret_key

    monkeypatch.delenv("DJANGO_SECRET_KEY", raising=False)
    assert [w.id for w in check_secret_key(None)] == ["a2ui_project.W001"]
    monkeypatch.setenv("DJANGO_SECRET_KEY", "x" * 60)
    assert check_secret_key(None) == []


@pytest.mark.django_db
@override_settings(LOGIN_URL="a2ui_web:login")
def test_the_apps_login_admits_people_who_are_not_staff(client):
    get_user_model().objects.create_user("ada", password="ada-pw-1234")  # not staff
    page = client.get("/a2ui/")
    assert page.status_code == 302 and page["Location"].startswith("/a2ui/login/")
    form = client.get(page["Location"])
    assert form.status_code == 200 and b'name="username"' in form.content
    assert "Content-Security-Policy" in form  # the client page's policy
    wrong = client.post("/a2ui/login/", {"username": "ada", "password": "nope"})
    assert wrong.status_code == 200 and b"a2ui-login-error" in wrong.content
    done = client.post("/a2ui/login/", {"username": "ada", "password": "ada-pw-1234",
                                        "next": "/a2ui/?agent=x"})
    assert done.status_code == 302 and done["Location"] == "/a2ui/?agent=x"
    assert client.get("/a2ui/").status_code == 200
    away = client.post("/a2ui/login/", {"username": "ada", "password": "ada-pw-1234",
                                        "next": "https://evil.example/"})
    assert away["Location"] == "/a2ui/"  # no open redirect: back to the client
    out = client.post("/a2ui/logout/")
    assert out.status_code == 302 and out["Location"] == "/a2ui/login/"
    assert client.get("/a2ui/").status_code == 302


@pytest.mark.parametrize("value", [0, -1, "0.25", True])
def test_replay_flush_interval_must_be_a_positive_number(settings, value):
    from a2ui.checks import check_a2ui_settings

    settings.A2UI = {**getattr(settings, "A2UI", {}), "REPLAY_FLUSH_SECONDS": value}
    assert "a2ui.E004" in [e.id for e in check_a2ui_settings(None)]
