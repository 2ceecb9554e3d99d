"""The official MCP SDK's client (``mcp.client.streamable_http``) against a live Daphne."""

import contextlib
import json

import httpx2
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


class RawCapabilities(httpx2.AsyncHTTPTransport):
    """Adds top-level ``capabilities`` keys to the ``initialize`` request on the wire (the
    SDK's client model has no place for seed 004's ``capabilities.a2ui``)."""

    def __init__(self, extra):
        super().__init__()
        self.extra = extra

    async def handle_async_request(self, request):
        if request.method == "POST":
            body = json.loads(await request.aread() or b"null")
            if isinstance(body, dict) and body.get("method") == "initialize":
                body["params"]["capabilities"].update(self.extra)
                content = json.dumps(body).encode()
                headers = dict(request.headers)
                headers["content-length"] = str(len(content))
                request = httpx2.Request(request.method, request.url, headers=headers,
                                         content=content)
        return await super().handle_async_request(request)


@contextlib.asynccontextmanager
async def mcp_session(server, credential, *, extensions=None, message_handler=None,
                      initialize=True, raw_capabilities=None):
    """An initialized ``ClientSession`` on ``server``'s /mcp with ``Bearer credential``."""
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {credential}"},
                                  timeout=httpx2.Timeout(30.0, read=60.0))
    if raw_capabilities is not None:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {credential}"},
                                  timeout=httpx2.Timeout(30.0, read=60.0),
                                  transport=RawCapabilities(raw_capabilities))
    async with http, streamable_http_client(f"{server.url}/mcp", http_client=http) as (r, w):
        kwargs = {"read_timeout_seconds": 60}
        if extensions is not None:
            kwargs["extensions"] = extensions
        if message_handler is not None:
            kwargs["message_handler"] = message_handler
        async with ClientSession(r, w, **kwargs) as session:
            if initialize:
                await session.initialize()
            yield session


@contextlib.asynccontextmanager
async def mcp_client(server, credential, *, mode="auto"):
    """The SDK's ``Client`` on ``server``'s /mcp with ``Bearer credential``; ``mode="auto"``
    discovers the server's revision (``server/discover``: 2026-07-28 on this SDK)."""
    from mcp.client.client import Client

    http = create_mcp_http_client(headers={"Authorization": f"Bearer {credential}"},
                                  timeout=httpx2.Timeout(30.0, read=60.0))
    async with http, Client(streamable_http_client(f"{server.url}/mcp", http_client=http),
                            mode=mode, read_timeout_seconds=60) as client:
        yield client


def result_json(result):
    """The JSON of a tool result's first text content."""
    return json.loads(result.content[0].text)


INIT_BODY = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "clientInfo": {"name": "raw", "version": "1"},
               "capabilities": {}},
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream",
               "Content-Type": "application/json"}


async def raw(method, url, *, credential=None, body=None, headers=None):
    """One plain HTTP request to /mcp: (status, headers, text)."""
    sent = dict(MCP_HEADERS)
    if credential:
        sent["Authorization"] = f"Bearer {credential}"
    sent.update(headers or {})
    async with httpx2.AsyncClient(timeout=15) as http:
        response = await http.request(method, url, headers=sent,
                                      content=json.dumps(body) if body is not None else None)
        return response.status_code, response.headers, response.text
