"""The MCP Apps extension (``io.modelcontextprotocol/ui``) is advertised in ``initialize`` on
every protocol version a client may ask for (docs/protocol-mcp.md): the SDK shaped the answer
by the 2025 schemas, which have no ``capabilities.extensions``, and dropped it."""

import json

import pytest

from a2ui.mcp import uris
from tests.fuzz.mcp import INIT_BODY, messages
from tests.mcp.test_mcp_pending import Agent

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
async def test_initialize_advertises_the_ui_extension(agent_key, version):
    mcp = Agent(agent_key)
    body = {**INIT_BODY, "params": {**INIT_BODY["params"], "protocolVersion": version}}
    response = await mcp.http.request("POST", mcp.headers, json.dumps(body).encode())
    result = next(m for m in messages(response.text) if m.get("id") == INIT_BODY["id"])["result"]
    assert result["protocolVersion"] == version
    assert result["capabilities"]["extensions"] == {
        uris.APPS_EXTENSION: {"mimeTypes": [uris.APP_MIME, uris.A2UI_MIME]}}
    assert result["capabilities"]["resources"] == {"listChanged": True, "subscribe": True}
