"""Tier 2: the health probes on a real Daphne (``manage.py a2ui_serve``): readiness goes 503 when
the process's own Redis is killed or hangs, and back to 200 when it answers again, while liveness
stays 200; SIGTERM makes readiness 503 while the process drains its sockets
(docs/operations.md, "Health and readiness probes")."""

import base64
import json
import os
import signal
import socket
import time
import urllib.error
import urllib.request

import pytest

pytestmark = pytest.mark.django_db(transaction=True)

#: Readiness is cached 1 s and each check gives up after 0.5 s (the defaults): a change shows
#: within about 1.5 s; this leaves room for a loaded machine.
WITHIN = 5.0


def get(server, path):
    """``(status, body as JSON, seconds)`` of a GET, as a probe sends it (Host 127.0.0.1)."""
    started = time.monotonic()
    try:
        with urllib.request.urlopen(server.url + path, timeout=5) as response:
            status, body = response.status, response.read()
    except urllib.error.HTTPError as exc:
        status, body = exc.code, exc.read()
    return status, json.loads(body), time.monotonic() - started


def until(server, path, status, within=WITHIN):
    """Probe every 50 ms until ``path`` answers ``status``; its body and each probe's time."""
    deadline = time.monotonic() + within
    seen, times = None, []
    while time.monotonic() < deadline:
        got, body, took = get(server, path)
        times.append(took)
        if got == status:
            return body, times
        seen = (got, body)
        time.sleep(0.05)
    raise AssertionError(f"{path} did not answer {status} within {within} s; last {seen}")


def test_readiness_follows_the_processes_own_redis(own_redis_servers):
    redis_server, start = own_redis_servers
    server = start()
    body, _ = until(server, "/a2ui/readyz", 200, within=15)
    assert set(body["checks"]) == {"serving", "database", "redis", "channel_layer"}

    redis_server.stop()  # killed: connections refused
    body, _ = until(server, "/a2ui/readyz", 503)
    checks = body["checks"]
    assert checks["database"]["status"] == "ok"
    assert checks["redis"]["status"] == checks["channel_layer"]["status"] == "fail", checks
    assert str(redis_server.port) not in json.dumps(body)
    assert get(server, "/a2ui/healthz")[0] == 200

    redis_server.start()
    until(server, "/a2ui/readyz", 200)

    os.kill(redis_server.proc.pid, signal.SIGSTOP)  # hung: accepts, never answers
    try:
        body, times = until(server, "/a2ui/readyz", 503)
        assert body["checks"]["redis"]["error"] == "TimeoutError", body
        assert max(times) < 2.0, times  # bounded by the check's timeout, not Redis's
        assert get(server, "/a2ui/healthz")[0] == 200
    finally:
        os.kill(redis_server.proc.pid, signal.SIGCONT)
    until(server, "/a2ui/readyz", 200)


def open_silent_websocket(server, token):
    """A session socket that never reads again: the server's close frame goes unanswered, so
    its shutdown waits the whole grace (a2ui.serving.SHUTDOWN_GRACE) before it exits."""
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=5)
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall((f"GET /ws/v4/a2ui?token={token} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                  f"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                  "Sec-WebSocket-Version: 13\r\n\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(4096)
        assert chunk, head
        head += chunk
    assert head.startswith(b"HTTP/1.1 101"), head
    return sock


def test_sigterm_makes_readiness_503_while_draining(daphne_server, stream_token):
    server = daphne_server()
    until(server, "/a2ui/readyz", 200, within=15)
    sock = open_silent_websocket(server, stream_token)
    try:
        server.proc.send_signal(signal.SIGTERM)
        body, _ = until(server, "/a2ui/readyz", 503, within=1.5)
        assert body == {"status": "fail", "checks": {
            "serving": {"status": "fail", "error": "draining"}}}
        assert get(server, "/a2ui/healthz")[0] == 200  # alive: not to be killed for it
        assert server.proc.wait(10) == 0
    finally:
        sock.close()
