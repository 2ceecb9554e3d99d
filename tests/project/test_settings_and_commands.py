"""Settings defaults and start-up checks; the a2ui_agent management command."""

import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import override_settings

from a2ui import tokens
from a2ui.checks import check_a2ui_settings
from a2ui.conf import a2ui_settings
from a2ui.models import Agent, AuditEvent


def test_defaults_are_the_seed_limits():
    assert a2ui_settings.STREAM_TOKEN_EXPIRE_MINUTES == 30
    assert a2ui_settings.MAX_PAYLOAD_SIZE == 1048576
    assert a2ui_settings.RATE_LIMIT_PER_MINUTE == 60
    assert a2ui_settings.MAX_CONCURRENT_SESSIONS_PER_AGENT == 10
    assert a2ui_settings.SESSION_INACTIVITY_TIMEOUT_SECONDS == 3600
    assert a2ui_settings.CONFIRM_TIMEOUT_SECONDS == 30


@pytest.mark.parametrize("bad", [
    {"RATE_LIMIT_PER_MINUTE": 0},
    {"MAX_PAYLOAD_SIZE": "big"},
    {"STREAM_TOKEN_EXPIRE_MINUTES": -5},
    {"REQUIRED_CONSENTS": "data_collection"},
    {"NO_SUCH_SETTING": 1},
    {"METRICS_FLUSH_SECONDS": 0},
    {"HEALTH_CACHE_SECONDS": "1"},
    {"HEALTH_CHECK_TIMEOUT_SECONDS": -0.5},
])
def test_bad_settings_fail_the_checks(bad):
    with override_settings(A2UI=bad):
        errors = check_a2ui_settings(None)
    assert errors and all(e.id.startswith("a2ui.E") for e in errors)
    assert any(str(next(iter(bad))) in e.msg for e in errors)


def test_good_settings_pass():
    with override_settings(A2UI={"RATE_LIMIT_PER_MINUTE": 120}):
        assert check_a2ui_settings(None) == []
        assert a2ui_settings.RATE_LIMIT_PER_MINUTE == 120
    assert a2ui_settings.RATE_LIMIT_PER_MINUTE == 60


def test_env_token_lifetime(monkeypatch):
    import importlib

    import a2ui.conf as conf

    # The module's own objects are put back afterwards, not made again by a second reload:
    # every module holds the a2ui_settings it imported, which must keep following
    # override_settings (its receiver stays connected) in whatever test runs next.
    saved = dict(vars(conf))
    monkeypatch.setenv("STREAM_TOKEN_EXPIRE_MINUTES", "5")
    try:
        assert importlib.reload(conf).DEFAULTS["STREAM_TOKEN_EXPIRE_MINUTES"] == 5
    finally:
        monkeypatch.delenv("STREAM_TOKEN_EXPIRE_MINUTES")
        vars(conf).clear()
        vars(conf).update(saved)


@pytest.mark.django_db
def test_agent_command_create_list_revoke(user):
    out = io.StringIO()
    call_command("a2ui_agent", "create", "helper", "--owner", "alice", stdout=out)
    key = out.getvalue().strip().splitlines()[-1]
    assert key.startswith("a2ui_ak_")
    agent = Agent.objects.get(name="helper")
    assert agent.owner == user and key not in agent.key_hash
    assert tokens.verify_agent_key(key) == agent

    out = io.StringIO()
    call_command("a2ui_agent", "list", stdout=out)
    assert "helper" in out.getvalue() and key not in out.getvalue()

    call_command("a2ui_agent", "revoke", "helper", stdout=io.StringIO())
    with pytest.raises(tokens.TokenError):
        tokens.verify_agent_key(key)
    assert AuditEvent.objects.filter(action="agent.revoke").exists()


@pytest.mark.django_db
@pytest.mark.parametrize("args,message", [
    (["create", "bad name!"], "letters"),
    (["create", "x", "--owner", "nobody"], "No user"),
    (["revoke", "ghost"], "No agent"),
])
def test_agent_command_errors(args, message):
    with pytest.raises(CommandError, match=message):
        call_command("a2ui_agent", *args, stdout=io.StringIO())


@pytest.mark.django_db
def test_openapi_schema_and_docs(client):
    schema = client.get("/api/schema/")
    assert schema.status_code == 200
    assert b"/api/v4/stream-token" in schema.content
    assert client.get("/api/docs/").status_code == 200
