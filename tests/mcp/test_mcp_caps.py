"""/mcp sessions are capped per credential and per address, and only an established session
gets an id (issue 23, item 1): one stream_mcp token opened ~10,000 sessions and every other
initialize on the process got 503; a refused initialize still issued a working
Mcp-Session-Id. Every error body of /mcp is JSON with its content type (item 11: the 413 was
plain text).
"""

import asyncio
import json

import pytest
from channels.db import database_sync_to_async

from a2ui import tokens
from tests.fuzz.mcp import INIT_BODY, MCP_HEADERS, PROTOCOL_VERSION, AsgiHttp

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def mcp(settings):
    from a2ui.mcp.app import MCPApp
    from a2ui.mcp.server import build_server

    settings.A2UI = {**getattr(settings, "A2UI", {}), "CAP_MCP_SESSIONS_PER_PERSON": 3,
                     "CAP_MCP_SESSIONS_PER_AGENT_KEY": 5, "CAP_PER_ADDRESS": 8}

    def build(**options):
        options.setdefault("max_request_body_size", 4096)
        return MCPApp(build_server(), settings.ALLOWED_HOSTS, **options)

    return build


def headers_of(credential, session_id=None):
    headers = {**MCP_HEADERS, "Authorization": f"Bearer {credential}"}
    if session_id:
        headers.update({"Mcp-Session-Id": session_id, "Mcp-Protocol-Version": PROTOCOL_VERSION})
    return headers


async def initialize(http, credential, params=None):
    body = dict(INIT_BODY, params=params) if params is not None else INIT_BODY
    return await http.request("POST", headers_of(credential), json.dumps(body).encode())


def assert_json_refusal(response, status):
    assert response.status == status, (response.status, response.text)
    assert response.headers["content-type"] == "application/json"
    assert "mcp-session-id" not in response.headers
    body = json.loads(response.text)
    assert body["jsonrpc"] == "2.0" and isinstance(body["error"]["message"], str)
    return body


@pytest.fixture
def person_token(user, agent):
    return tokens.issue_stream_token(user, agent, "stream_mcp").token


async def test_a_persons_sessions_meet_the_cap_and_an_agent_still_gets_in(
        mcp, person_token, agent_key, user, agent):
    app = mcp()
    http = AsgiHttp(app)
    try:
        opened = []
        for _ in range(3):
            response = await initialize(http, person_token)
            assert response.status == 200, response.text
            opened.append(response.headers["mcp-session-id"])
        # Another stream_mcp token of the same person and agent counts as the same person.
        second = (await database_sync_to_async(tokens.issue_stream_token)(
            user, agent, "stream_mcp")).token
        for credential in (person_token, second):
            body = assert_json_refusal(await initialize(http, credential), 429)
            assert body["error"]["data"] == {"reason": "cap_reached", "kind": "mcp",
                                             "per": "person", "limit": 3}
        assert app.manager.open_sessions() == 3
        # The agent's key is another credential: it still initializes.
        response = await initialize(http, agent_key)
        assert response.status == 200 and response.headers["mcp-session-id"]
        # A session that ends frees its place.
        response = await http.request("DELETE", headers_of(person_token, opened[0]))
        assert response.status == 200, response.text
        response = await initialize(http, person_token)
        assert response.status == 200, response.text
    finally:
        await app.runner.stop()


async def test_the_agent_key_cap(mcp, agent_key):
    app = mcp()
    http = AsgiHttp(app)
    try:
        for _ in range(5):
            assert (await initialize(http, agent_key)).status == 200
        body = assert_json_refusal(await initialize(http, agent_key), 429)
        assert body["error"]["data"]["per"] == "agent"
    finally:
        await app.runner.stop()


async def test_the_address_cap_counts_every_credential(mcp, settings, person_token, agent_key):
    settings.A2UI = {**settings.A2UI, "CAP_PER_ADDRESS": 4}
    app = mcp()
    http = AsgiHttp(app)
    try:
        for _ in range(3):
            assert (await initialize(http, person_token)).status == 200
        assert (await initialize(http, agent_key)).status == 200
        body = assert_json_refusal(await initialize(http, agent_key), 429)
        assert body["error"]["data"] == {"reason": "cap_reached", "kind": "mcp",
                                         "per": "address", "limit": 4}
    finally:
        await app.runner.stop()


@pytest.mark.parametrize("params", [
    {"protocolVersion": 123, "clientInfo": {"name": "x", "version": "1"}, "capabilities": {}},
    {"clientInfo": 5},
    {},
])
async def test_a_refused_initialize_leaves_no_session(mcp, person_token, params):
    app = mcp()
    http = AsgiHttp(app)
    try:
        for _ in range(5):  # more than the cap: a refusal holds no place either
            body = assert_json_refusal(await initialize(http, person_token, params), 400)
            assert body["id"] == 1 and body["error"]["code"] == -32602
        assert app.manager.open_sessions() == 0
        assert (await initialize(http, person_token)).status == 200
    finally:
        await app.runner.stop()


async def test_no_session_without_an_initialize_result(mcp, person_token):
    """Any session-less POST that does not establish a session: nothing kept, no id."""
    app = mcp()
    http = AsgiHttp(app)
    headers = headers_of(person_token)
    try:
        cases = [
            (b'{"jsonrpc":"2.0","method":"notifications/initialized"}', headers, 400),
            (b'{"jsonrpc":"2.0","id":3,"method":"tools/list"}', headers, 400),
            (json.dumps(INIT_BODY).encode(), {**headers, "Accept": "text/html"}, 406),
            (json.dumps(INIT_BODY).encode(), {**headers, "Content-Type": "text/plain"}, 400),
        ]
        for body, sent, status in cases * 2:
            assert_json_refusal(await http.request("POST", sent, body), status)
        assert app.manager.open_sessions() == 0
        for _ in range(3):
            assert (await initialize(http, person_token)).status == 200
    finally:
        await app.runner.stop()


async def test_error_bodies_are_json(mcp, person_token):
    app = mcp(max_request_body_size=400)
    http = AsgiHttp(app)
    try:
        body = assert_json_refusal(
            await http.request("POST", headers_of(person_token), b"x" * 1000), 413)
        assert body["error"]["message"] == "Request body too large"
        response = await initialize(http, person_token)
        sid = response.headers["mcp-session-id"]
        for sent in ({**headers_of(person_token, sid), "Content-Type": "text/plain"},):
            assert_json_refusal(await http.request(
                "POST", sent, b'{"jsonrpc":"2.0","id":2,"method":"ping"}'), 400)
        assert_json_refusal(await http.request("POST", headers_of(person_token, sid),
                                               b"y" * 1000), 413)
    finally:
        await app.runner.stop()


async def test_idle_sessions_end_and_free_their_place(mcp, person_token):
    app = mcp(session_idle_timeout=0.3)
    http = AsgiHttp(app)
    try:
        sids = [(await initialize(http, person_token)).headers["mcp-session-id"]
                for _ in range(3)]
        assert_json_refusal(await initialize(http, person_token), 429)
        await asyncio.sleep(0.8)
        assert app.manager.open_sessions() == 0
        response = await http.request("POST", headers_of(person_token, sids[0]),
                                      b'{"jsonrpc":"2.0","id":2,"method":"ping"}')
        assert response.status == 404
        assert (await initialize(http, person_token)).status == 200
    finally:
        await app.runner.stop()


async def test_the_adapter_applies_the_settings(settings):
    from a2ui.mcp import adapter

    settings.A2UI = {**getattr(settings, "A2UI", {}), "MCP_SESSION_IDLE_SECONDS": 42,
                     "MCP_MAX_SESSIONS_PER_PROCESS": 7}
    saved, adapter._app = adapter._app, None
    try:
        manager = adapter.build_app().manager
        assert manager.session_idle_timeout == 42 and manager.max_sessions == 7
    finally:
        adapter._app = saved
