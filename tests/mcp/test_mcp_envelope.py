"""POST bodies /mcp refuses before the SDK (a2ui.mcp.envelope), found by tests/fuzz/test_fuzz_mcp.py:
a request with an id that is not a string or an integer got 202 and never an answer, a batch
got pydantic's text as -32602, ids of 2**64 were echoed to clients that cannot match them."""

import json

import pytest

from a2ui.mcp import envelope
from tests.fuzz.mcp import INIT_BODY, MCP_HEADERS, PROTOCOL_VERSION, AsgiHttp

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize("body, code, data", [
    ('{"jsonrpc":"2.0","id":1.5,"method":"ping"}', -32600, {"reason": "id must be a string or an integer"}),
    ('{"jsonrpc":"2.0","id":true,"method":"ping"}', -32600, {"reason": "id must be a string or an integer"}),
    ('{"jsonrpc":"2.0","id":[],"method":"ping"}', -32600, {"reason": "id must be a string or an integer"}),
    ('{"jsonrpc":"2.0","id":null,"method":"ping"}', -32600,
     {"reason": "id must be a string or an integer (not null)"}),
    ('{"jsonrpc":"2.0","id":"a\\u0000b","method":"ping"}', -32600,
     {"reason": "id must not contain NUL (\\u0000)"}),
    ('[{"jsonrpc":"2.0","id":1,"method":"ping"}]', -32600,
     {"reason": "Batch requests are not supported"}),
    ('[]', -32600, {"reason": "Batch requests are not supported"}),
    ('{"jsonrpc":"2.0","id":-Infinity,"method":"ping"}', -32700, {}),
    ('{"jsonrpc":"2.0","id":7,"method":"ping","params":{"x":NaN}}', -32700, {}),
    ("NaN", -32700, {}),
    ('{"jsonrpc":"2.0","id":18446744073709551616,"method":"ping"}', -32602, {"path": "id"}),
    ('{"jsonrpc":"2.0","id":7,"method":"ping","params":{"x":1e400}}', -32602, {"path": "x"}),
    ('{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"notify","arguments":'
     '{"title":"\\ud800"}}}', -32602, {"path": "arguments.title"}),
    ('{"jsonrpc":"2.0","id":7,"method":"ping","params":{"\\ud800":1}}', -32602, {}),
    # A request carrying an error or a result was taken for a response (fuzz seed 1014).
    ('{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"x"},"method":"ping"}', -32600,
     {"reason": "a message is a request (method) or a response (result or error), not both"}),
    ('{"jsonrpc":"2.0","id":7,"result":{},"method":"tools/list"}', -32600, {}),
    ('{"jsonrpc":"2.0","id":7,"result":{},"error":{"code":1,"message":"x"}}', -32600, {}),
])
def test_refused_envelopes(body, code, data):
    error = envelope.check(body.encode())
    assert error is not None and error["error"]["code"] == code, error
    assert data.items() <= error["error"]["data"].items(), error
    json.dumps(error).encode("utf-8")  # answerable
    if code == -32602 and data.get("path") != "id":
        assert error["id"] == 7


@pytest.mark.parametrize("body", [
    '{"jsonrpc":"2.0","id":1,"method":"ping"}', '{"jsonrpc":"2.0","id":"x","method":"ping"}',
    '{"jsonrpc":"2.0","method":"notifications/initialized"}', "not json", "",
    '{"jsonrpc":"2.0","id":9007199254740991,"result":{}}',
    '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}',
])
def test_left_to_the_sdk(body):
    assert envelope.check(body.encode()) is None


async def test_the_app_answers_them_before_the_sdk(agent_key):
    from django.conf import settings

    from a2ui.mcp.app import MCPApp
    from a2ui.mcp.server import build_server

    app = MCPApp(build_server(), settings.ALLOWED_HOSTS, max_request_body_size=1_048_576)
    http = AsgiHttp(app)
    headers = {**MCP_HEADERS, "Authorization": f"Bearer {agent_key}"}
    try:
        response = await http.request("POST", headers, json.dumps(INIT_BODY).encode())
        headers["Mcp-Session-Id"] = response.headers["mcp-session-id"]
        headers["Mcp-Protocol-Version"] = PROTOCOL_VERSION
        for body in (b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}',
                     b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]',
                     b'{"jsonrpc":"2.0","id":18446744073709551616,"method":"ping"}',
                     b'{"jsonrpc":"2.0","id":-Infinity,"method":"ping"}'):
            response = await http.request("POST", headers, body)
            assert response.status == 400, (body, response.status, response.text)
            assert json.loads(response.text)["error"]["code"] in (-32700, -32600, -32602)
        response = await http.request("POST", headers, b'{"jsonrpc":"2.0","id":2,"method":"ping"}')
        assert response.status == 200 and '"result":{}' in response.text
        # Unauthenticated requests are still 401 first.
        response = await http.request("POST", MCP_HEADERS, b"[]")
        assert response.status == 401
    finally:
        await app.runner.stop()
