"""The server's edge on real sockets (a2ui.serving.Edge, docs/operations.md "The edge"): slow
clients are closed by their deadlines, an address beyond its cap is refused while another is
served, and the server keeps answering through the flood. Loopback only, bounded counts and
time (127.0.0.2 is a second source address)."""

import asyncio
import re

import pytest

from tests.live import slowclients
from tests.live.client import Client, init_session

pytestmark = pytest.mark.django_db(transaction=True)

SLACK = 3.0  # seconds past a deadline the close may take on a loaded 2-core machine


def _edge_lines(log):
    return [line for line in log.splitlines() if "a2ui edge:" in line]


async def test_slowloris_is_closed_by_the_head_deadline_while_others_are_served(
        daphne_server, stream_token):
    server = daphne_server("--header-timeout", "2", "--body-timeout", "3",
                           "--keepalive-timeout", "3", "--max-connections-per-address", "100")
    kinds = ["silent", "request-line", "headers", "websocket"] * 10 + ["body", "chunked",
                                                                        "keepalive"] * 3
    clients = [slowclients.SlowClient(server.port, kind) for kind in kinds]
    flood = asyncio.create_task(asyncio.to_thread(slowclients.drive, clients, 15))

    # Meanwhile a person opens a session and a page loads, from the same address.
    await asyncio.sleep(0.5)
    person = await Client.open(f"{server.ws_url}/ws/v4/a2ui?token={stream_token}")
    assert await init_session(person)
    status = await asyncio.to_thread(slowclients.answered, server.port)
    assert status.startswith(b"HTTP/1.1 "), status
    assert not status.startswith(b"HTTP/1.1 5"), status
    await flood

    deadlines = {"head": 2, "body": 3, "keepalive": 3}
    late = [(c.kind, c.closed_after) for c in clients
            if c.closed_after is None or c.closed_after > deadlines[c.deadline] + SLACK]
    early = [(c.kind, round(c.closed_after, 2)) for c in clients
             if c.closed_after is not None and c.closed_after < deadlines[c.deadline] - 0.5]
    assert not late and not early, (late, early, server.log()[-3000:])
    # a trickled head or body is closed without an answer; the keep-alive one had its answer
    assert all(c.received == b"" for c in clients if c.kind != "keepalive")
    assert all(c.received.startswith(b"HTTP/1.1 ") for c in clients if c.kind == "keepalive")

    # the person's socket, opened before the deadlines, outlived them
    assert person.ws.state.name == "OPEN"
    await person.close()

    log = server.log()
    assert "Traceback" not in log, log[-3000:]
    lines = _edge_lines(log)
    assert len(lines) == 1, lines  # dozens of closes, one WARNING line for the address
    assert re.search(r"from 127\.0\.0\.1: (no complete request head|the request body)", lines[0])


async def test_an_address_beyond_its_cap_is_refused_and_another_is_served(daphne_server):
    """127.0.0.2 holds its 30 connections: its 31st is refused at once, while 127.0.0.3 is
    served, and so is 127.0.0.1 beyond 30 (loopback is a trusted proxy's address by default:
    A2UI['EDGE_TRUSTED_PROXIES'])."""
    server = daphne_server("--header-timeout", "4", "--max-connections-per-address", "30")
    held = [slowclients.SlowClient(server.port, "silent", source="127.0.0.2") for _ in range(30)]
    held += [slowclients.SlowClient(server.port, "silent") for _ in range(40)]
    try:
        assert await asyncio.to_thread(slowclients.refused, server.port, "127.0.0.2")
        for source in ("127.0.0.3", "127.0.0.1"):
            status = await asyncio.to_thread(slowclients.answered, server.port, source)
            assert status.startswith(b"HTTP/1.1 "), (source, status)
            assert not status.startswith(b"HTTP/1.1 5"), (source, status)
    finally:
        # the deadline closes them; their places are given back
        await asyncio.to_thread(slowclients.drive, held, 4 + SLACK)
    assert all(c.closed_after is not None for c in held)
    status = await asyncio.to_thread(slowclients.answered, server.port, "127.0.0.2")
    assert status.startswith(b"HTTP/1.1 ") and not status.startswith(b"HTTP/1.1 5"), status

    lines = [line for line in _edge_lines(server.log()) if "127.0.0.2" in line]
    assert len(lines) == 1, lines  # the 30 closes that followed are held back
    assert "refused a connection from 127.0.0.2: it holds 30 connections" in lines[0], lines
    assert not [line for line in _edge_lines(server.log()) if "127.0.0.3" in line]


async def test_the_process_cap_refuses_every_address(daphne_server):
    server = daphne_server("--header-timeout", "4", "--max-connections", "20",
                           "--max-connections-per-address", "0")
    # from a trusted proxy; the process's count settles first (the readiness probe's close)
    held = await asyncio.to_thread(slowclients.hold, server.port, 20)
    try:
        assert await asyncio.to_thread(slowclients.refused, server.port, "127.0.0.2")
    finally:
        await asyncio.to_thread(slowclients.drive, held, 4 + SLACK)
    status = await asyncio.to_thread(slowclients.answered, server.port, "127.0.0.2")
    assert status.startswith(b"HTTP/1.1 ") and not status.startswith(b"HTTP/1.1 5"), status
    assert any("the process holds 20 connections" in line for line in _edge_lines(server.log()))


async def test_a_100_kb_header_is_answered_431_not_dropped(daphne_server):
    import socket

    server = daphne_server()

    def send():
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
            sock.sendall(b"POST /api/v4/stream-token HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                         b"Idempotency-Key: " + b"k" * 100_000 + b"\r\n\r\n")
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
            return answer

    answer = await asyncio.to_thread(send)
    assert answer.startswith(b"HTTP/1.1 431 "), answer[:200]
    assert b'"headers_too_large"' in answer
