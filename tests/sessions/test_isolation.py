"""Seed 000 section 8.3 as a matrix: every credential kind against every endpoint kind."""

import json

import pytest
from channels.db import database_sync_to_async
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from a2ui import tokens
from tests.wsutil import connect_agent, connect_user, recv

pytestmark = pytest.mark.django_db(transaction=True)

SEED_REQUEST = {"token_type": "stream_a2ui"}


@pytest.fixture
def creds(user, agent, agent_key):
    return {
        "stream": tokens.issue_stream_token(user, agent).token,
        "drf": Token.objects.create(user=user).key,
        "agent": agent_key,
    }


def test_seed_exchange_with_session_cookie(user, agent):
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(user)
    client.get("/admin/login/")  # any GET sets the CSRF cookie
    csrf = client.cookies.get("csrftoken")
    response = client.post(
        "/api/v4/stream-token", SEED_REQUEST, format="json",
        HTTP_X_CSRFTOKEN=csrf.value if csrf else "",
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert set(body) == {"token", "expires_at", "token_type"}
    assert body["token_type"] == "stream_a2ui" and body["token"].startswith("eyJ")
    assert tokens.verify_stream_token(body["token"]).user == user


def test_seed_exchange_with_drf_token(creds):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {creds['drf']}")
    response = client.post("/api/v4/stream-token", SEED_REQUEST, format="json")
    assert response.status_code == 201


@pytest.mark.parametrize("kind,expected", [("stream", 401), ("agent", 403), ("none", 401)])
def test_stream_token_endpoint_refuses(creds, kind, expected):
    client = APIClient()
    if kind != "none":
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {creds[kind]}")
    response = client.post("/api/v4/stream-token", SEED_REQUEST, format="json")
    assert response.status_code == expected
    assert "detail" in response.json()


@pytest.mark.parametrize("kind,expected", [("stream", 401), ("drf", 403), ("none", 401),
                                           ("agent", 404)])
def test_messages_endpoint_credentials(creds, kind, expected):
    client = APIClient()
    if kind != "none":
        scheme = "Token" if kind == "drf" else "Bearer"
        client.credentials(HTTP_AUTHORIZATION=f"{scheme} {creds[kind]}")
    response = client.post(
        "/api/v4/sessions/00000000-0000-0000-0000-000000000001/messages",
        {"jsonrpc": "2.0", "method": "ui.notify", "params": {"level": "info", "title": "x"}},
        format="json",
    )
    # An agent key passes authentication and then finds no such session (404).
    assert response.status_code == expected, response.content


def test_stream_token_in_query_string_refused_by_rest(creds):
    response = APIClient().post(f"/api/v4/stream-token?token={creds['stream']}",
                                SEED_REQUEST, format="json")
    assert response.status_code == 401


def test_bad_token_requests(user):
    client = APIClient()
    client.force_authenticate(user)
    assert client.post("/api/v4/stream-token", {"token_type": "other"},
                       format="json").status_code == 400
    assert client.post("/api/v4/stream-token", {}, format="json").status_code == 400
    assert client.post("/api/v4/stream-token", {"token_type": "stream_a2ui", "agent_id": "nope"},
                       format="json").status_code == 400


async def _user_socket_refuses(raw):
    comm = await connect_user(raw)
    reply = await recv(comm)
    assert reply["error"]["code"] == -32006
    assert (await comm.receive_output())["code"] == 4006


@pytest.mark.parametrize("kind", ["drf", "agent", "garbage", "empty"])
async def test_user_socket_refuses_other_credentials(creds, kind):
    raw = {"garbage": "eyJhbGciOi.x.y", "empty": ""}.get(kind, creds.get(kind))
    await _user_socket_refuses(raw)


async def test_user_socket_refuses_cookie_only(user):
    from channels.testing import WebsocketCommunicator
    from django.test import Client

    from a2ui_project.asgi import application

    client = Client()
    await database_sync_to_async(client.force_login)(user)
    cookie = f"sessionid={client.cookies['sessionid'].value}".encode()
    comm = WebsocketCommunicator(application, "/ws/v4/a2ui", headers=[(b"cookie", cookie)])
    await comm.connect()
    assert (await recv(comm))["error"]["code"] == -32006


async def test_user_socket_refuses_expired_and_revoked(user, agent):
    from datetime import timedelta

    from django.utils import timezone

    expired = await database_sync_to_async(tokens.issue_stream_token)(user, agent)
    revoked = await database_sync_to_async(tokens.issue_stream_token)(user, agent)

    def age():
        expired.record.expires_at = timezone.now() - timedelta(seconds=1)
        expired.record.save()
        revoked.record.revoked_at = timezone.now()
        revoked.record.save()

    await database_sync_to_async(age)()
    for issued in (expired, revoked):
        await _user_socket_refuses(issued.token)


@pytest.mark.parametrize("kind", ["stream", "drf", "none", "revoked"])
async def test_agent_socket_refuses(creds, agent, kind):
    if kind == "revoked":
        from a2ui.sessions import agents

        await database_sync_to_async(agents.revoke)(agent)
        comm = await connect_agent(creds["agent"])
    else:
        comm = await connect_agent(creds.get(kind))
    reply = json.loads(await comm.receive_from())
    assert reply["error"]["code"] == -32006
