"""Tier 2: /mcp through a real Daphne (``manage.py a2ui_serve``), driven by the official SDK's
client: auth, Host/Origin, DELETE, the GET stream, SIGTERM, and the agent's tools reaching a
person's WebSocket (PostgreSQL, Redis)."""

import asyncio
import signal
import subprocess
import time

import pytest
from channels.db import database_sync_to_async
from mcp.shared.exceptions import MCPError

from a2ui import tokens
from a2ui.models import StreamToken
from tests.live.client import init_session, open_user
from tests.live.mcpclient import INIT_BODY, mcp_session, raw, result_json

pytestmark = pytest.mark.django_db(transaction=True)


def issue(user, agent, token_type=StreamToken.TYPE_STREAM_A2UI):
    return database_sync_to_async(
        lambda: tokens.issue_stream_token(user, agent, token_type).token)()


async def test_agent_initializes_lists_tools_and_renders_to_a_person(
        daphne_server, user, agent, agent_key):
    server = daphne_server()
    person = await open_user(server, await issue(user, agent))
    sid = await init_session(person)
    async with mcp_session(server, agent_key) as mcp:
        names = {t.name for t in (await mcp.list_tools()).tools}
        assert {"list_sessions", "render", "update", "progress", "navigate", "notify",
                "push_surfaces", "request_input", "confirm"} <= names
        listed = result_json(await mcp.call_tool("list_sessions", {}))
        assert sid in [s["session_id"] for s in listed["sessions"]]
        out = await mcp.call_tool("render", {
            "session_id": sid, "component_type": "card", "component_id": "c1",
            "data": {"title": "Hello <script>x</script>from MCP"}})
        assert not out.is_error and result_json(out)["component_id"] == "c1"
        pushed = await person.recv_until(lambda m: m.get("method") == "ui.render")
        assert pushed["params"]["component_id"] == "c1"
        assert "<script>" not in pushed["params"]["data"]["title"]
        await mcp.call_tool("notify", {"session_id": sid, "title": "Hi"})
        assert (await person.recv_until(lambda m: m.get("method") == "ui.notify"))["params"]["title"] == "Hi"

        # Bad input: -32602 with the argument's path, unknown tool, foreign session.
        with pytest.raises(MCPError) as bad:
            await mcp.call_tool("render", {"session_id": sid, "component_type": "card",
                                           "data": {"title": 5}})
        assert bad.value.code == -32602 and bad.value.data["path"] == "arguments.data.title"
        with pytest.raises(MCPError) as bad:
            await mcp.call_tool("render", {"component_type": "card", "data": {}})
        assert bad.value.code == -32602 and bad.value.data["path"] == "arguments.session_id"
        with pytest.raises(MCPError) as unknown:
            await mcp.call_tool("no_such_tool", {})
        assert unknown.value.code == -32602
        with pytest.raises(MCPError) as foreign:
            await mcp.call_tool("notify", {"session_id": "00000000-0000-0000-0000-000000000000",
                                           "title": "x"})
        assert foreign.value.code == -32000
    await person.close()


async def test_credentials_host_origin_and_delete(daphne_server, user, agent, agent_key):
    server = daphne_server()
    url = f"{server.url}/mcp"
    a2ui_token = await issue(user, agent)
    mcp_token = await issue(user, agent, StreamToken.TYPE_STREAM_MCP)
    for credential in (None, "nonsense", a2ui_token, "a2ui_ak_00_bad"):
        status, headers, _ = await raw("POST", url, credential=credential, body=INIT_BODY)
        assert status == 401, credential
        assert headers["www-authenticate"].startswith("Bearer")
    # A stream_mcp token opens nothing else: not the user socket, not the REST API.
    status, _, _ = await raw("GET", f"{server.url}/api/v4/consents",
                             headers={"Authorization": f"Bearer {mcp_token}"})
    assert status in (401, 403)
    person = await open_user(server, mcp_token)
    code, _, _ = await person.expect_close()
    assert code == 4006

    status, _, _ = await raw("POST", url, credential=agent_key, body=INIT_BODY,
                             headers={"Host": "evil.example"})
    assert status == 421
    status, _, _ = await raw("POST", url, credential=agent_key, body=INIT_BODY,
                             headers={"Origin": "http://evil.example"})
    assert status == 403

    status, headers, _ = await raw("POST", url, credential=mcp_token, body=INIT_BODY)
    assert status == 200
    session_id = headers["mcp-session-id"]
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    sess = {"mcp-session-id": session_id, "mcp-protocol-version": "2025-11-25"}
    # The session belongs to its credential: another one sees no such session.
    status, _, _ = await raw("POST", url, credential=agent_key, body=ping, headers=sess)
    assert status == 404
    status, _, _ = await raw("DELETE", url, credential=mcp_token, headers=sess)
    assert status == 200
    status, _, _ = await raw("POST", url, credential=mcp_token, body=ping, headers=sess)
    assert status == 404


async def test_daphne_exits_promptly_on_sigterm_after_mcp_was_used(
        daphne_server, user, agent, agent_key):
    """With an MCP session open (its GET stream) and a tool call waiting for the person."""
    server = daphne_server()
    person = await open_user(server, await issue(user, agent))
    sid = await init_session(person)
    asking = asyncio.Event()

    async def agent_waits_for_the_person():
        async with mcp_session(server, agent_key) as mcp:
            await mcp.call_tool("notify", {"session_id": sid, "title": "Hi"})
            waiting = asyncio.ensure_future(mcp.call_tool("request_input", {
                "session_id": sid, "input_type": "text", "prompt": "Name?"}))
            asking.set()
            await waiting

    client = asyncio.ensure_future(agent_waits_for_the_person())
    await asyncio.wait_for(asking.wait(), 20)
    await person.recv_until(lambda m: m.get("method") == "ui.request_input")
    started = time.monotonic()
    server.proc.send_signal(signal.SIGTERM)
    try:
        code = await asyncio.to_thread(server.proc.wait, 8)
    except subprocess.TimeoutExpired:
        code = "still running"
    seconds = time.monotonic() - started
    client.cancel()
    await asyncio.gather(client, return_exceptions=True)  # its streams ended with the server
    assert code in (0, -signal.SIGTERM), (code, server.log())
    assert seconds < 6, (seconds, server.log())
    # The adapter's on_stop ended the SDK's session manager (and its sessions) cleanly.
    assert "StreamableHTTP session manager shutting down" in server.log(), server.log()
