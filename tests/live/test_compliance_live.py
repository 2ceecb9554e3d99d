"""Tier 2: operator actions in the admin of one Daphne process close sockets held by another.

The operator signs in to the admin over real HTTP (session cookie and CSRF token, as a browser
does) on server A and POSTs the admin action; the affected sockets live on server B, so the
close must travel through Redis. Each must close within a second of the action, with the close
code and reason the web client shows.
"""

import asyncio
import http.cookiejar
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest
from channels.db import database_sync_to_async

from a2ui import tokens
from a2ui.compliance import access
from a2ui.models import A2UIConsentRecord, A2UISessionLog, AuditEvent
from tests.live.client import TIMEOUT, init_session, open_agent, open_user

pytestmark = pytest.mark.django_db(transaction=True)

WITHIN = 1.0  # seconds between the admin's answer and the close frame


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


class AdminBrowser:
    """A signed-in admin user over real HTTP: cookies, CSRF token, form POSTs."""

    def __init__(self, server):
        self.base = server.url
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(self.jar), _NoRedirect()
        )

    def _open(self, path, data=None):
        body = urllib.parse.urlencode(data, doseq=True).encode() if data is not None else None
        req = urllib.request.Request(self.base + path, data=body)
        req.add_header("Referer", self.base + path)
        try:
            with self.opener.open(req, timeout=TIMEOUT) as resp:
                return resp.status, resp.headers, resp.read().decode(errors="replace")
        except urllib.error.HTTPError as exc:
            return exc.code, exc.headers, exc.read().decode(errors="replace")

    def csrf(self):
        return next(c.value for c in self.jar if c.name == "csrftoken")

    def login(self, username, password):
        status, _, _ = self._open("/admin/login/")
        assert status == 200
        status, headers, body = self._open("/admin/login/?next=/admin/", {
            "username": username, "password": password, "csrfmiddlewaretoken": self.csrf(),
            "next": "/admin/",
        })
        assert status == 302, body[:2000]
        return self

    def action(self, model, action, pks):
        status, headers, body = self._open(f"/admin/a2ui/{model}/", {
            "action": action, "_selected_action": [str(pk) for pk in pks],
            "csrfmiddlewaretoken": self.csrf(),
        })
        assert status == 302, body[:2000]
        return headers


async def act(admin, model, action, pks):
    """Run an admin action; return the time its response came back."""
    await asyncio.to_thread(admin.action, model, action, pks)
    return time.monotonic()


async def closed_by(client, done_at):
    """(close code, the reason the client can show, seconds after the action answered).

    Daphne does not pass close reasons on, so the reason also arrives just before the close
    frame as a ``ui.notify`` the web client shows; this takes whichever it got.
    """
    code, reason, before = await client.expect_close(timeout=TIMEOUT)
    after = time.monotonic() - done_at
    notices = [m["params"]["message"] for m in before if m.get("method") == "ui.notify"]
    return code, reason or (notices[-1] if notices else ""), after


@pytest.fixture
def operator(db):
    from django.contrib.auth import get_user_model


    group = access.ensure_compliance_group()[0]
    user = get_user_model().objects.create_user("officer", "o@example.com", "pw-officer-123",
                                                is_staff=True)
    user.groups.add(group)
    return user


async def sign_in(server, username="officer", password="pw-officer-123"):
    return await asyncio.to_thread(AdminBrowser(server).login, username, password)


async def test_terminate_closes_a_socket_in_another_process(two_servers, operator,
                                                            stream_token, agent_key):
    a, b = two_servers
    admin = await sign_in(a)
    agent = await open_agent(a, agent_key)
    user = await open_user(b, stream_token)
    sid = await init_session(user)
    await agent.recv_until(lambda m: m.get("method") == "session.opened")

    done = await act(admin, "a2uisessionlog", "terminate_sessions", [sid])
    code, reason, after = await closed_by(user, done)
    assert (code, reason) == (4010, "Session terminated by an operator")
    assert after < WITHIN
    note = await agent.recv_until(lambda m: m.get("method") == "session.closed")
    assert note["params"]["session_id"] == sid
    event = await database_sync_to_async(
        lambda: AuditEvent.objects.get(action="session.terminate"))()
    assert event.actor_label == "user:officer" and str(event.session_id) == sid
    await agent.close()


async def test_revoked_token_closes_its_sockets_and_is_refused(two_servers, operator, user,
                                                               agent):
    a, b = two_servers
    admin = await sign_in(a)
    issued = await database_sync_to_async(tokens.issue_stream_token)(user, agent)
    ws = await open_user(b, issued.token)
    sid = await init_session(ws)

    done = await act(admin, "streamtoken", "revoke_tokens", [issued.record.jti])
    code, reason, after = await closed_by(ws, done)
    assert (code, reason) == (4011, "Stream token revoked")
    assert after < WITHIN
    again = await open_user(b, issued.token)
    refused = await again.recv()
    assert refused["error"]["code"] == -32006
    assert refused["error"]["data"]["reason"] == "Stream token revoked."
    assert (await again.expect_close())[0] == 4006
    state = await database_sync_to_async(lambda: A2UISessionLog.objects.get(pk=sid).state)()
    assert state == "closed"
    actor = await database_sync_to_async(
        lambda: AuditEvent.objects.get(action="token.revoke").actor_label)()
    assert actor == "user:officer"


async def test_revoked_agent_loses_its_sockets_and_sessions(two_servers, operator, agent,
                                                           agent_key, stream_token):
    a, b = two_servers
    admin = await sign_in(a)
    agent_ws = await open_agent(b, agent_key)
    user = await open_user(b, stream_token)
    await init_session(user)

    done = await act(admin, "agent", "revoke_agents", [agent.pk])
    code, _, after = await closed_by(agent_ws, done)
    assert code == 4011 and after < WITHIN
    code, reason, after = await closed_by(user, done)
    assert (code, reason) == (4011, "Agent revoked") and after < WITHIN
    refused = await open_agent(b, agent_key)
    assert (await refused.recv())["error"]["code"] == -32006


@pytest.fixture
def consent_servers(daphne_server, request):
    """Two servers whose settings require the data_collection consent."""
    from tests.live import conftest as live

    env = dict(live.live_env(request.getfixturevalue("live_services")),
               DJANGO_SETTINGS_MODULE="tests.live.compliance_settings")
    servers = request.node._live_servers  # the factory's list: stopped at teardown too
    started = []
    for name in ("C", "D"):
        server = live.DaphneServer(env, name=name)
        servers.append(server)
        started.append(server.wait_ready())
    return started


async def test_consent_revoked_in_the_admin_gates_another_process(consent_servers, operator,
                                                                   stream_token, agent_key,
                                                                   user):
    a, b = consent_servers
    admin = await sign_in(a)
    agent = await open_agent(a, agent_key)
    ws = await open_user(b, stream_token)
    sid = await init_session(ws)
    prompt = await ws.recv_until(lambda m: m.get("method") == "a2ui.consent_required")
    assert prompt["params"]["consent_types"][0]["type"] == "data_collection"
    granted = await ws.call("user.consent", {"consent_type": "data_collection",
                                             "granted": True}, "g")
    assert granted["result"]["missing"] == []
    await agent.recv_until(lambda m: m.get("method") == "consent.changed")
    await agent.send({"jsonrpc": "2.0", "method": "ui.request_input", "params": {
        "session_id": sid, "request_id": "r1", "input_type": "text", "prompt": "Name?"}})
    await ws.recv_until(lambda m: m.get("method") == "ui.request_input")

    record = await database_sync_to_async(A2UIConsentRecord.objects.get)(user=user)
    await act(admin, "a2uiconsentrecord", "revoke_consents", [record.pk])
    note = await agent.recv_until(lambda m: m.get("method") == "consent.changed"
                                  and not m["params"]["granted"])
    assert note["params"] == {"session_id": sid, "consent_type": "data_collection",
                              "granted": False}
    await asyncio.sleep(0.2)  # the event reaches server B's socket through Redis
    refused = await ws.call("user.respond", {"request_id": "r1", "value": "Ada"}, "ans")
    assert refused["error"]["code"] == -32010
    assert refused["error"]["data"] == {"consent_types": ["data_collection"]}
    err = await agent.call("ui.confirm", {"session_id": sid, "request_id": "k",
                                          "title": "Sure?"}, "conf")
    assert err["error"]["code"] == -32010
    actor = await database_sync_to_async(
        lambda: AuditEvent.objects.get(action="consent.revoke").actor_label)()
    assert actor == "user:officer"
    await ws.close()
    await agent.close()
