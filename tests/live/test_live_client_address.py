"""Tier 2: the client's address behind a proxy (a2ui.edge.forwarded_client; docs/operations.md,
"Behind a proxy"). Under ``a2ui_serve --proxy-headers`` the address is read from the right of
X-Forwarded-For past the trusted proxies (EDGE_TRUSTED_PROXIES: loopback here, so this test's
own connections from 127.0.0.1 are the proxy's), never the leftmost entry a client wrote: a
forged ``127.0.0.1`` opens no /a2ui/metrics, chooses no caps address, and the access log names
the address the caps and the metrics check use. A peer that is not a trusted proxy (127.0.0.2)
is itself the client, whatever it sends."""

import asyncio
import socket

import pytest
from channels.db import database_sync_to_async

from a2ui import tokens
from tests.live.mcpclient import INIT_BODY, raw

pytestmark = pytest.mark.django_db(transaction=True)


def get(port, path, headers, source="127.0.0.1"):
    """The status line of a GET from ``source`` with ``headers`` (a list of pairs)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((source, 0))
        sock.settimeout(10)
        sock.connect(("127.0.0.1", port))
        head = "".join(f"{name}: {value}\r\n" for name, value in headers)
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n{head}"
                     "\r\n".encode())
        return sock.recv(200).split(b"\r\n")[0].decode()


async def test_a_forged_forwarded_for_opens_no_metrics_and_names_no_address(
        daphne_server):
    server = daphne_server("--proxy-headers", A2UI_PROMETHEUS="1")
    port = server.port

    def status(headers, source="127.0.0.1"):
        return get(port, "/a2ui/metrics", headers, source).split(" ")[1]

    # nginx's $proxy_add_x_forwarded_for: what the client sent, then the client's address.
    assert await asyncio.to_thread(
        status, [("X-Forwarded-For", "127.0.0.1, 198.51.100.7")]) == "403"
    assert await asyncio.to_thread(
        status, [("X-Forwarded-For", "127.0.0.1"), ("X-Forwarded-For", "198.51.100.7")]) == "403"
    # A scrape from the proxy's host itself, and through a second trusted hop.
    assert await asyncio.to_thread(status, [("X-Forwarded-For", "127.0.0.1")]) == "200"
    assert await asyncio.to_thread(status, [("X-Forwarded-For", "198.51.100.7, ::1")]) == "403"
    # From a peer that is not a trusted proxy, what it wrote is not read.
    await asyncio.to_thread(get, port, "/a2ui/healthz",
                            [("X-Forwarded-For", "203.0.113.99")], "127.0.0.2")
    await asyncio.to_thread(get, port, "/a2ui/healthz",
                            [("X-Forwarded-For", "203.0.113.55, 198.51.100.44")])
    await asyncio.sleep(0.3)
    log = server.log()
    assert "198.51.100.44" in log and "127.0.0.2" in log, log[-2000:]
    assert "203.0.113.99" not in log and "203.0.113.55" not in log, log[-2000:]


async def test_a_client_cannot_choose_its_caps_address(daphne_server, user, agent):
    server = daphne_server("--proxy-headers", A2UI_CAP_PER_ADDRESS="2")
    person = (await database_sync_to_async(tokens.issue_stream_token)(
        user, agent, "stream_mcp")).token

    async def initialize(forwarded_for):
        status, _, text = await raw("POST", f"{server.url}/mcp", credential=person,
                                    body=INIT_BODY,
                                    headers={"X-Forwarded-For": forwarded_for})
        return status, text

    for forged in ("10.9.9.1", "10.9.9.2"):
        status, text = await initialize(f"{forged}, 198.51.100.7")
        assert status == 200, text
    status, text = await initialize("10.9.9.3, 198.51.100.7")  # a third made-up address
    assert status == 429 and '"per":"address"' in text.replace(" ", ""), text
    status, text = await initialize("198.51.100.8")  # another client of the proxy
    assert status == 200, text


async def test_a_socket_cannot_choose_its_caps_address(daphne_server, user, agent):
    """The WebSocket handshake (replayed by Daphne to its WebSocket protocol) carries the
    same one address."""
    from tests.live.client import Client, init_session

    server = daphne_server("--proxy-headers", A2UI_CAP_PER_ADDRESS="2")
    token = (await database_sync_to_async(tokens.issue_stream_token)(user, agent)).token
    url = f"{server.ws_url}/ws/v4/a2ui?token={token}"
    held = [await Client.open(url, {"X-Forwarded-For": f"10.9.9.{i}, 198.51.100.7"})
            for i in (1, 2)]
    third = await Client.open(url, {"X-Forwarded-For": "10.9.9.3, 198.51.100.7"})
    error = await third.recv()
    assert error["error"]["code"] == -32001 and error["error"]["data"]["per"] == "address"
    other = await Client.open(url, {"X-Forwarded-For": "198.51.100.8"})
    assert await init_session(other)  # another client of the proxy: its own places
    for client in (*held, third, other):
        await client.ws.close()
