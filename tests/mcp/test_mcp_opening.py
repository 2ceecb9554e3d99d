"""a2ui.mcp.opening (sans-I/O): whether the answer to a session-less POST established an MCP
session, read as it streams; what is answered instead when it did not."""

import json

from a2ui.mcp.opening import OPENED, REFUSED, UNDECIDED, Opening

SSE = [(b"content-type", b"text/event-stream"), (b"mcp-session-id", b"abc")]
JSON = [(b"content-type", b"application/json"), (b"mcp-session-id", b"abc")]


def opening(status, headers):
    found = Opening()
    found.start({"status": status, "headers": headers})
    return found


def test_an_initialize_result_opens_whatever_came_before_it():
    found = opening(200, SSE)
    assert found.chunk(b"id: 1-x\r\nretry: 1000\r\ndata: \r\n\r\n", True) == UNDECIDED  # priming
    assert found.chunk(b": ping\r\n\r\nevent: message\r\ndata: {\"jsonrpc\":\"2.0\",", True) \
        == UNDECIDED  # cut mid-event
    assert found.chunk(b"\"id\":1,\"result\":{}}\r\n\r\n", True) == OPENED


def test_an_error_refuses_with_the_sdks_error_and_no_session():
    found = opening(200, SSE)
    error = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "Invalid"}}
    assert found.chunk(b"event: message\ndata: " + json.dumps(error).encode() + b"\n\n",
                       True) == REFUSED
    assert found.refusal() == (400, error)
    found = opening(200, JSON)
    assert found.chunk(json.dumps(error).encode(), False) == REFUSED


def test_no_result_is_a_refusal():
    found = opening(202, JSON)  # a notification without a session
    assert found.chunk(b"", False) == REFUSED
    status, body = found.refusal()
    assert status == 400 and body["error"]["code"] == -32600
    found = opening(200, SSE)
    assert found.chunk(b"data: not json\n\n", True) == UNDECIDED
    assert found.chunk(b"", False) == REFUSED


def test_an_http_error_keeps_its_status_as_json():
    found = opening(406, JSON)
    sdk = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Not Acceptable"}}
    assert found.chunk(json.dumps(sdk).encode(), False) == REFUSED
    assert found.refusal() == (406, sdk)
    found = opening(400, [(b"content-length", b"27")])
    assert found.chunk(b"Invalid Content-Type header", False) == REFUSED
    status, body = found.refusal()
    assert status == 400 and body["error"] == {"code": -32600,
                                               "message": "Invalid Content-Type header"}
