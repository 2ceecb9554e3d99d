"""The adapter registry (a2ui.core.adapters): one line of settings per protocol."""

import sys
import types

import pytest

from a2ui.core import adapters
from a2ui.core.adapters import Adapter


def _module(name, adapter):
    module = types.ModuleType(name)
    module.ADAPTER = adapter
    sys.modules[name] = module
    return name


def test_the_shipped_protocols_are_registered_and_routed():
    names = [a.name for a in adapters.registered()]
    assert names[:2] == ["jsonrpc", "v09"]
    routes = {str(r.pattern) for r in adapters.websocket_urls()}
    assert {"ws/v4/a2ui", "ws/v4/a2ui/agent", "ws/v09/a2ui"} <= routes
    assert any("surfaces/stream" in str(r.pattern) for r in adapters.http_urls())


def test_a_new_protocol_is_one_registration(settings):
    async def app(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"mounted"})

    started = []
    name = _module("tests_fake_protocol", Adapter(
        name="fake", asgi_mounts=lambda: [("/fake", lambda: app)],
        on_start=lambda: started.append(True)))
    settings.A2UI = {"ADAPTERS": ["a2ui.jsonrpc.adapter", name]}
    try:
        assert [a.name for a in adapters.registered()] == ["jsonrpc", "fake"]
        assert adapters.get("fake").asgi_mounts()[0][0] == "/fake"
        assert adapters.get("v09") is None
    finally:
        del sys.modules[name]


async def test_asgi_mounts_take_their_prefix_and_leave_the_rest_to_django():
    from a2ui.asgi import _Mounts

    seen = []

    async def django(scope, receive, send):
        seen.append(("django", scope["path"]))

    async def mounted(scope, receive, send):
        seen.append(("mounted", scope["path"]))

    app = _Mounts(django, [("/mcp", lambda: mounted)])
    for path in ("/mcp", "/mcp/x", "/mcpx", "/api/v4/"):
        await app({"type": "http", "path": path}, None, None)
    assert seen == [("mounted", "/mcp"), ("mounted", "/mcp/x"), ("django", "/mcpx"),
                    ("django", "/api/v4/")]


def test_bad_registrations_are_refused(settings):
    name = _module("tests_not_an_adapter", object())
    settings.A2UI = {"ADAPTERS": [name]}
    try:
        with pytest.raises(TypeError):
            adapters.registered()
    finally:
        del sys.modules[name]
    settings.A2UI = {"ADAPTERS": ["a2ui.v09.adapter", "a2ui.v09.adapter"]}
    with pytest.raises(ValueError):
        adapters.registered()


def test_memory_empties_the_caches_the_adapters_declare(settings):
    from a2ui.agui import mapping
    from a2ui.infra import memory
    from a2ui.jsonrpc import events

    events._cache["k"] = "text"
    mapping._cache["k"] = ["text"]
    emptied = []
    name = _module("tests_cache_protocol", Adapter(
        name="cached", caches=lambda: (("a cache", lambda: emptied.append(True)),)))
    settings.A2UI = {"ADAPTERS": [*_shipped(), name]}
    try:
        names = [n for n, _ in adapters.caches()]
        assert len(names) == 3 and names[-1] == "a cache"
        memory.forget_caches()
        assert emptied == [True] and not events._cache and not mapping._cache
    finally:
        del sys.modules[name]


def _shipped():
    from a2ui.conf import DEFAULTS

    return DEFAULTS["ADAPTERS"]


def test_the_stream_token_types_are_the_served_protocols(settings, user, agent):
    from rest_framework.test import APIClient

    from a2ui import tokens

    assert tokens.stream_token_types() == ("stream_a2ui", "stream_mcp", "stream_agui")
    issued = tokens.issue_stream_token(user, agent, "stream_mcp")
    assert tokens.peek_any_stream_token(issued.token) == "stream_mcp"
    settings.A2UI = {"ADAPTERS": [p for p in _shipped() if p != "a2ui.mcp.adapter"]}
    assert tokens.stream_token_types() == ("stream_a2ui", "stream_agui")
    with pytest.raises(tokens.TokenError):
        tokens.issue_stream_token(user, agent, "stream_mcp")
    assert tokens.peek_any_stream_token(issued.token) is None  # MCP is not served
    client = APIClient()
    client.force_authenticate(user)
    reply = client.post("/api/v4/stream-token", {"token_type": "stream_mcp"}, format="json")
    assert reply.status_code == 400 and "token_type" in reply.json()
    reply = client.post("/api/v4/stream-token", {"token_type": "stream_agui"}, format="json")
    assert reply.status_code == 201
