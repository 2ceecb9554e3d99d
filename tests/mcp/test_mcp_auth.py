"""/mcp credentials (typed and isolated, seed 000 section 8.3) and Host/Origin settings."""

import pytest
from django.test import Client

from a2ui import tokens
from a2ui.mcp.app import authenticate, host_allowed, transport_security
from a2ui.middleware import resolve

pytestmark = pytest.mark.django_db


def test_only_agent_keys_and_stream_mcp_tokens_open_mcp(user, agent, agent_key):
    assert authenticate(agent_key).kind == "agent"
    mcp = tokens.issue_stream_token(user, agent, "stream_mcp")
    who = authenticate(mcp.token)
    assert who.kind == "person" and who.token.jti == mcp.record.jti and who.agent == agent
    a2ui = tokens.issue_stream_token(user, agent)
    for raw in (None, "", "x", a2ui.token, agent_key + "x", mcp.token + "x"):
        with pytest.raises(tokens.TokenError):
            authenticate(raw)
    mcp.record.revoked_at = mcp.record.issued_at
    mcp.record.save()
    with pytest.raises(tokens.TokenError):
        authenticate(mcp.token)


def test_stream_mcp_tokens_open_nothing_else(user, agent):
    mcp = tokens.issue_stream_token(user, agent, "stream_mcp").token
    assert tokens.peek_any_stream_token(mcp) == "stream_mcp"
    with pytest.raises(tokens.TokenError):
        tokens.verify_stream_token(mcp)  # the A2UI sockets' and SSE's check
    auth = resolve({"query_string": f"token={mcp}".encode(), "headers": []})
    assert auth.token is None and auth.error
    client = Client()
    response = client.get("/api/v4/consents", HTTP_AUTHORIZATION=f"Bearer {mcp}")
    assert response.status_code == 401


def test_the_stream_token_endpoint_issues_stream_mcp(user, agent):
    client = Client()
    client.force_login(user)
    response = client.post("/api/v4/stream-token",
                           {"token_type": "stream_mcp", "agent_id": agent.name},
                           content_type="application/json")
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["token_type"] == "stream_mcp"
    assert authenticate(body["token"]).kind == "person"


def test_transport_security_from_allowed_hosts():
    exact = transport_security(["localhost", "127.0.0.1", "a2ui.example.com"])
    assert exact.enable_dns_rebinding_protection
    assert "a2ui.example.com:*" in exact.allowed_hosts
    assert "https://a2ui.example.com" in exact.allowed_origins
    assert not transport_security(["*"]).enable_dns_rebinding_protection
    assert not transport_security([".example.com"]).enable_dns_rebinding_protection

    def scope(host, origin=None):
        headers = [(b"host", host.encode())]
        if origin:
            headers.append((b"origin", origin.encode()))
        return {"headers": headers}

    allowed = [".example.com"]
    assert host_allowed(scope("a.example.com:8000"), allowed)
    assert host_allowed(scope("a.example.com", "https://b.example.com"), allowed)
    assert not host_allowed(scope("evil.test"), allowed)
    assert not host_allowed(scope("a.example.com", "https://evil.test"), allowed)
    assert not host_allowed(scope(""), allowed)


async def test_an_escaping_exception_is_internal_error_without_its_text():
    """The SDK would answer code 0 with the exception's text; LastResort answers -32603."""
    from mcp.shared.exceptions import MCPError
    from pydantic import BaseModel, ValidationError

    from a2ui.mcp.server import LastResort

    class Ctx:
        method = "tools/call"

    async def broken(ctx):
        raise KeyError("password=hunter2")

    with pytest.raises(MCPError) as caught:
        await LastResort()(Ctx(), broken)
    assert caught.value.error.code == -32603 and "hunter2" not in str(caught.value.error)

    class Model(BaseModel):
        x: int

    async def invalid(ctx):
        Model(x="no")

    with pytest.raises(ValidationError):  # left to the SDK: -32602
        await LastResort()(Ctx(), invalid)

    async def refused(ctx):
        raise MCPError(-32602, "bad")

    with pytest.raises(MCPError) as caught:
        await LastResort()(Ctx(), refused)
    assert caught.value.error.code == -32602
