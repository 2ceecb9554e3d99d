"""While the process shuts down (SIGTERM: ``health.draining()``), the edge answers what arrives
503 ``draining`` without reaching the application (a2ui.serving._Draining, EdgeChannel): a
request on a new connection once its head is in, a WebSocket handshake, a new request on a
kept-alive connection; the liveness probe goes on to the application. The live test is
tests/live/test_live_draining.py."""

import json

import pytest

from a2ui import edge, serving
from a2ui.infra import health
from tests.serving.test_serving import _connect, _edge, _factory

DRAINING = {"status": "fail", "checks": {"serving": {"status": "fail", "error": "draining"}}}


@pytest.fixture
def draining():
    health.start_draining()
    yield
    health.reset()


def _answer(transport):
    head, _, body = transport.value().partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    return lines[0], dict(line.split(b": ", 1) for line in lines[1:]), body


def test_the_head_and_the_path_of_a_request():
    assert not edge.head_complete(b"GET / HTTP/1.1\r\nHost: x\r\n")
    assert edge.head_complete(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    assert edge.head_complete(b"x" * (edge.HEAD_LIMIT + 1))  # answered without its end
    assert edge.request_path(b"GET /a2ui/healthz?x=1 HTTP/1.1\r\n\r\n") == "/a2ui/healthz"
    assert edge.request_path(b"garbage\r\n\r\n") == ""


@pytest.mark.parametrize("head", [
    b"GET /api/v4/requests HTTP/1.1\r\nHost: x\r\n\r\n",
    b"GET /ws/v4/a2ui/agent HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
])
def test_a_new_connection_gets_503_draining_once_its_head_is_in(draining, head):
    factory, _clock = _factory(_edge())
    protocol, transport = _connect(factory)
    assert isinstance(protocol, serving._Draining)
    protocol.dataReceived(head[:10])
    assert transport.value() == b""  # not before the head is in
    protocol.dataReceived(head[10:])
    status, headers, body = _answer(transport)
    assert status == b"HTTP/1.1 503 Service Unavailable" and headers[b"Retry-After"] == b"1"
    assert json.loads(body) == DRAINING and transport.disconnecting
    assert factory.edge.limiter is not None and factory.server.connections == {}


def test_the_liveness_probe_goes_on_while_draining(draining, monkeypatch):
    factory, _clock = _factory(_edge())
    monkeypatch.setattr(factory, "liveness_paths", lambda: {"/a2ui/healthz"})
    protocol, transport = _connect(factory)
    transport.protocol = protocol
    protocol.dataReceived(b"GET /a2ui/healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    assert isinstance(transport.protocol, serving.EdgeProtocol)  # the request as any other
    assert not transport.value().startswith(b"HTTP/1.1 503")


def test_a_new_request_on_a_kept_alive_connection_gets_503_draining(monkeypatch):
    factory, _clock = _factory(_edge())
    monkeypatch.setattr(factory, "liveness_paths", lambda: {"/a2ui/healthz"})
    protocol, transport = _connect(factory)
    protocol.dataReceived(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi")
    assert transport.value().startswith(b"HTTP/1.1 200")
    transport.clear()
    health.start_draining()
    try:
        protocol.dataReceived(b"POST / HTTP/1.1\r\nHost: x\r\n")
        assert transport.value() == b""
        protocol.dataReceived(b"Content-Length: 2\r\n\r\nhi")
        status, _headers, body = _answer(transport)
        assert status.startswith(b"HTTP/1.1 503") and json.loads(body) == DRAINING
    finally:
        health.reset()


async def test_stopping_imports_nothing_of_mcp_when_this_process_never_served_it(monkeypatch):
    """Importing the MCP SDK at shutdown held the event loop for a second or more of the grace
    (nothing was answered meanwhile)."""
    import sys

    from a2ui.mcp import adapter

    monkeypatch.delitem(sys.modules, "a2ui.mcp.listen", raising=False)
    monkeypatch.setattr(adapter, "_app", None)
    await adapter.stop()
    assert "a2ui.mcp.listen" not in sys.modules
