"""Tier 2: caps shared by two Daphne processes through Redis (a2ui.infra.caps; issue 23):
one person's MCP sessions on both processes count in one cap, a refusal is JSON with no
session id on either, a session ended on one frees a place for the other, the leases of a
killed process expire by themselves, and SIGTERM with many sessions open stops promptly."""

import asyncio
import json
import signal
import subprocess
import time

import pytest
from channels.db import database_sync_to_async

from a2ui import tokens
from tests.live.mcpclient import INIT_BODY, raw

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def small_caps(monkeypatch):
    """Read by each server process at start (a2ui.conf)."""
    monkeypatch.setenv("A2UI_CAP_MCP_SESSIONS_PER_PERSON", "4")
    monkeypatch.setenv("A2UI_CAP_MCP_SESSIONS_PER_AGENT_KEY", "150")
    monkeypatch.setenv("A2UI_CAP_LEASE_SECONDS", "3")


async def initialize(server, credential):
    status, headers, text = await raw("POST", f"{server.url}/mcp", credential=credential,
                                      body=INIT_BODY)
    return status, headers.get("mcp-session-id"), headers.get("content-type"), text


async def test_two_processes_share_one_cap(small_caps, daphne_server, user, agent, agent_key):
    a, b = daphne_server(), daphne_server()
    person = (await database_sync_to_async(tokens.issue_stream_token)(
        user, agent, "stream_mcp")).token
    opened = {}
    for server in (a, b, a, b):
        status, session_id, _, text = await initialize(server, person)
        assert status == 200 and session_id, text
        opened.setdefault(server.name, []).append(session_id)
    for server in (a, b):
        status, session_id, content_type, text = await initialize(server, person)
        assert status == 429 and session_id is None, text
        assert content_type == "application/json"
        assert json.loads(text)["error"]["data"] == {
            "reason": "cap_reached", "kind": "mcp", "per": "person", "limit": 4}
    # The agent's key is another credential.
    status, session_id, _, text = await initialize(b, agent_key)
    assert status == 200 and session_id, text
    # A session ended on A frees a place on B.
    status, _, _ = await raw("DELETE", f"{a.url}/mcp", credential=person,
                             headers={"Mcp-Session-Id": opened["A"][0],
                                      "Mcp-Protocol-Version": "2025-11-25"})
    assert status == 200
    status, session_id, _, text = await initialize(b, person)
    assert status == 200 and session_id, text
    assert (await initialize(b, person))[0] == 429
    # A process killed with a session open: its lease expires (CAP_LEASE_SECONDS) while B's
    # leases, refreshed, stay.
    a.kill()
    await asyncio.sleep(4.5)
    status, session_id, _, text = await initialize(b, person)
    assert status == 200 and session_id, text
    assert (await initialize(b, person))[0] == 429


async def test_sigterm_with_many_sessions_open_stops_promptly(small_caps, daphne_server,
                                                              agent_key):
    server = daphne_server()
    semaphore = asyncio.Semaphore(20)

    async def one():
        async with semaphore:
            return await initialize(server, agent_key)

    results = await asyncio.gather(*[one() for _ in range(150)])
    assert all(status == 200 for status, *_ in results), {r[0] for r in results}
    assert (await initialize(server, agent_key))[0] == 429
    started = time.monotonic()
    server.proc.send_signal(signal.SIGTERM)
    try:
        code = await asyncio.to_thread(server.proc.wait, 15)
    except subprocess.TimeoutExpired:
        code = "still running"
    seconds = time.monotonic() - started
    print(f"SIGTERM with 150 MCP sessions open: stopped in {seconds:.2f} s")
    assert code in (0, -signal.SIGTERM), (code, server.log())
    assert seconds < 6, (seconds, server.log()[-3000:])
