"""Tier 2: a process told to stop (SIGTERM) answers what arrives during its shutdown grace with
503 ``draining`` (docs/operations.md, "Stopping and restarting"), never a refused connection or
a hang: HTTP requests on new connections, a new request on a kept-alive connection, WebSocket
handshakes; the liveness probe still answers 200 (the process is alive). The grace is held
open by an agent socket that does not answer the close frame."""

import http.client
import json
import signal
import socket
import time

import pytest
import websockets
from websockets.exceptions import InvalidStatus

pytestmark = pytest.mark.django_db(transaction=True)
DRAINING = {"status": "fail", "checks": {"serving": {"status": "fail", "error": "draining"}}}


def silent_agent_socket(port, key):
    """An agent WebSocket that never reads: it holds the 2 s grace."""
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall((f"GET /ws/v4/a2ui/agent HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
               f"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
               f"Sec-WebSocket-Version: 13\r\nAuthorization: Bearer {key}\r\n\r\n").encode())
    s.settimeout(10)
    assert s.recv(4096).startswith(b"HTTP/1.1 101")
    return s


def get(conn, path):
    started = time.monotonic()
    conn.request("GET", path, headers={"Host": "127.0.0.1"})
    response = conn.getresponse()
    return response.status, response.getheaders(), response.read(), time.monotonic() - started


async def test_requests_during_the_shutdown_grace_get_503_draining(daphne_server, agent_key):
    server = daphne_server()
    held = silent_agent_socket(server.port, agent_key)
    kept = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    assert get(kept, "/a2ui/healthz")[0] == 200  # a kept-alive connection, made before
    server.proc.send_signal(signal.SIGTERM)
    time.sleep(0.3)
    try:
        for path in ("/a2ui/readyz", "/api/v4/requests", "/"):
            fresh = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
            status, headers, body, took = get(fresh, path)
            assert status == 503, (path, status, body)
            assert json.loads(body) == DRAINING
            assert dict(headers)["Retry-After"] == "1" and took < 1
        for conn in (kept, http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)):
            status, _, body, _ = get(conn, "/a2ui/healthz")  # alive: not to be killed for it
            assert (status, json.loads(body)["status"]) == (200, "ok")
        status, _, body, _ = get(kept, "/api/v4/requests")  # kept alive, then drained
        assert (status, json.loads(body)) == (503, DRAINING)
        with pytest.raises(InvalidStatus) as refused:
            await websockets.connect(f"{server.ws_url}/ws/v4/a2ui/agent", open_timeout=5,
                                     additional_headers={"Authorization": f"Bearer {agent_key}"})
        assert refused.value.response.status_code == 503
        assert server.alive  # all of it within the grace
    finally:
        held.close()
    assert server.proc.wait(10) == 0
