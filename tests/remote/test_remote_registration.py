"""Registering remote agents (a2ui_agent create --agui-url/--a2a-url, the admin, A2UI['AGENTS']):
header values sealed once and never shown, logged or exported; URLs checked against
A2UI['REMOTE_AGENT_HOSTS'] before anything is stored."""

import io
import logging

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from a2ui.models import Agent, AuditEvent
from a2ui.remote import secrets
from a2ui.remote.models import RemoteAgent

pytestmark = pytest.mark.django_db

SECRET = "sk-live-0123456789abcdef"


def run(*args):
    out = io.StringIO()
    call_command("a2ui_agent", *args, stdout=out)
    return out.getvalue()


@pytest.fixture
def hosts(settings):
    settings.A2UI = {**getattr(settings, "A2UI", {}),
                     "REMOTE_AGENT_HOSTS": ["agents.example.com", "127.0.0.1:8123"]}


def test_an_agui_agent_is_registered_with_sealed_headers(hosts, caplog):
    caplog.set_level(logging.DEBUG)
    said = run("create", "helper", "--agui-url", "https://agents.example.com/agui",
               "--header", f"Authorization: Bearer {SECRET}", "--header", "X-Team: ui")
    assert SECRET not in said and "Authorization, X-Team" in said
    remote = RemoteAgent.objects.select_related("agent").get(agent__name="helper")
    assert (remote.kind, remote.url) == ("agui", "https://agents.example.com/agui")
    assert remote.header_names == ["Authorization", "X-Team"]
    assert SECRET not in remote.sealed_headers
    assert secrets.unseal(remote.sealed_headers) == {"Authorization": f"Bearer {SECRET}",
                                                     "X-Team": "ui"}
    listed = run("list")
    assert "agui=https://agents.example.com/agui" in listed and SECRET not in listed
    audit = AuditEvent.objects.get(action="remote_agent.register")
    assert audit.details["headers"] == ["Authorization", "X-Team"]
    assert SECRET not in str(audit.details) and SECRET not in caplog.text
    # Replaced headers are sealed again; removed ones are gone.
    run("remote", "helper", "--header", "Authorization: Bearer other")
    remote.refresh_from_db()
    assert secrets.unseal(remote.sealed_headers) == {"Authorization": "Bearer other"}
    run("remote", "helper", "--no-headers")
    remote.refresh_from_db()
    assert remote.sealed_headers == "" and remote.header_names == []


@pytest.mark.parametrize("url, why", [
    ("https://evil.example.com/", "not in A2UI"),
    ("http://127.0.0.1:8124/", "not in A2UI"),
    ("file:///etc/passwd", "only http"),
    ("https://user:pw@agents.example.com/", "user info"),
])
def test_a_url_off_the_list_is_refused_and_nothing_is_stored(hosts, url, why):
    with pytest.raises(CommandError, match=why):
        run("create", "bad", "--agui-url", url)
    assert not Agent.objects.filter(name="bad").exists()


@pytest.mark.parametrize("header, why", [
    ("no colon", "Name: value"), ("Host: x", "transport's own"),
    ("X-A: a\r\nX-B: b", "control characters"), ("Bad Name: x", "Not a header name"),
])
def test_bad_headers_are_refused_without_echoing_the_value(hosts, header, why):
    with pytest.raises(CommandError, match=why) as caught:
        run("create", "bad", "--agui-url", "https://agents.example.com/", "--header", header)
    assert "a\r\nX-B" not in str(caught.value)
    assert not Agent.objects.filter(name="bad").exists()


def test_a_changed_secret_key_fails_clearly_and_a_fallback_still_opens(settings):
    sealed = secrets.seal({"A": "b"})
    old = settings.SECRET_KEY
    settings.SECRET_KEY = "another-key-" + "x" * 40
    with pytest.raises(secrets.SealError, match="set them again"):
        secrets.unseal(sealed)
    settings.SECRET_KEY_FALLBACKS = [old]
    assert secrets.unseal(sealed) == {"A": "b"}


def test_in_process_agents_are_registered_by_sync(settings):
    settings.A2UI = {"AGENTS": {"shop": "tests.remote.agents:echo",
                                "desk": {"app": "tests.remote.agents:shop", "path": "/agent"}}}
    assert "shop, desk" in run("sync")
    shop = RemoteAgent.objects.get(agent__name="shop")
    assert (shop.kind, shop.in_process, shop.url) == ("agui", "tests.remote.agents:echo", "")
    assert RemoteAgent.objects.get(agent__name="desk").config == {"path": "/agent"}
    run("sync")  # idempotent
    assert RemoteAgent.objects.count() == 2


def test_the_admin_gives_an_agent_its_transport_and_never_shows_a_header_value(
        client, superuser, hosts):
    from django.urls import reverse

    from a2ui import tokens

    agent, _ = tokens.create_agent("helper")
    client.force_login(superuser)
    url = reverse("admin:a2ui_agent_change", args=[agent.pk])
    form = {"name": "helper", "display_name": "", "icon_url": "", "owner": "",
            "max_concurrent_sessions": "", "remote-TOTAL_FORMS": "1",
            "remote-INITIAL_FORMS": "0", "remote-MIN_NUM_FORMS": "0",
            "remote-MAX_NUM_FORMS": "1", "remote-0-agent": str(agent.pk),
            "remote-0-kind": "agui", "remote-0-max_concurrent_runs": "",
            "remote-0-headers": f"Authorization: Bearer {SECRET}\nX-Team: ui"}
    refused = client.post(url, {**form, "remote-0-url": "https://evil.example.com/"})
    assert refused.status_code == 200 and "not in A2UI" in refused.content.decode()
    assert not RemoteAgent.objects.exists()
    done = client.post(url, {**form, "remote-0-url": "https://agents.example.com/agui"})
    assert done.status_code == 302, done.content.decode()[:2000]
    remote = RemoteAgent.objects.get(agent=agent)
    assert remote.header_names == ["Authorization", "X-Team"]
    assert secrets.unseal(remote.sealed_headers)["Authorization"] == f"Bearer {SECRET}"
    page = client.get(url).content.decode()
    assert "Authorization" in page and SECRET not in page
    change = AuditEvent.objects.get(action="remote_agent.change")
    assert change.actor == superuser and change.details["headers"] == ["Authorization",
                                                                        "X-Team"]
    assert SECRET not in str(change.details)
    # Saved again with the headers field empty: the headers are kept.
    again = {**form, "remote-INITIAL_FORMS": "1", "remote-0-headers": "",
             "remote-0-url": "https://agents.example.com/agui"}
    response = client.post(url, again)
    assert response.status_code == 302, [str(e) for e in response.context["errors"]] + [
        str(f.errors) for f in response.context["inline_admin_formsets"][0].formset]
    remote.refresh_from_db()
    assert remote.header_names == ["Authorization", "X-Team"]


def test_the_demo_registers_its_pydantic_ai_agent_in_process():
    from a2ui.management.commands.a2ui_demo import Command

    assert Command()._ensure_framework_agent("pydantic-ai") == "pydantic-helper"
    remote = RemoteAgent.objects.get(agent__name="pydantic-helper")
    assert (remote.kind, remote.in_process) == ("agui", "a2ui.demo_agents:app")
    from a2ui.remote.agui import inprocess

    assert inprocess.is_asgi(inprocess.load(remote.in_process))
