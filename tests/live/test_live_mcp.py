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
from a2ui.core.surfaces.catalog import BASIC_CATALOG_ID
from tests.live.client import init_session, open_user
from tests.live.mcpclient import INIT_BODY, mcp_session, raw, result_json

pytestmark = pytest.mark.django_db(transaction=True)
V09 = {"v0.9": {"supportedCatalogIds": [BASIC_CATALOG_ID]}}


def issue(user, agent, token_type="stream_a2ui"):
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
    mcp_token = await issue(user, agent, "stream_mcp")
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
    # Past A2UI['MAX_PAYLOAD_SIZE'] (1 MiB): 413 before the body is parsed.
    big = {**ping, "params": {"pad": "x" * (1024 * 1024 + 1)}}
    status, _, _ = await raw("POST", url, credential=mcp_token, body=big, headers=sess)
    assert status == 413
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


async def test_request_input_and_confirm_wait_for_the_person(
        daphne_server, user, agent, agent_key):
    server = daphne_server()
    person = await open_user(server, await issue(user, agent))
    sid = await init_session(person, capabilities=V09)
    progress = []

    async def on_progress(value, total, message):
        progress.append((value, message))

    async with mcp_session(server, agent_key) as mcp:
        asking = asyncio.ensure_future(mcp.call_tool("request_input", {
            "session_id": sid, "input_type": "text", "prompt": "Your name?",
            "request_id": "r1"}, progress_callback=on_progress))
        shown = await person.recv_until(lambda m: m.get("method") == "ui.request_input")
        assert shown["params"]["request_id"] == "r1"
        reply = await person.call("user.respond", {"request_id": "r1", "value": "Ada"}, "a1")
        assert reply["result"] == {"ok": True}
        result = await asyncio.wait_for(asking, 20)
        assert not result.is_error
        assert result_json(result) == {"request_id": "r1", "status": "answered", "value": "Ada"}
        assert progress and "waiting for the person" in progress[0][1]

        # confirm: answered, then a timeout (a tool error carrying the seed's outcome).
        asking = asyncio.ensure_future(mcp.call_tool("confirm", {
            "session_id": sid, "title": "Delete?", "request_id": "c1"}))
        await person.recv_until(lambda m: m.get("method") == "ui.confirm")
        await person.call("user.approve", {"request_id": "c1", "approved": True}, "a2")
        assert result_json(await asyncio.wait_for(asking, 20))["approved"] is True
        late = await mcp.call_tool("confirm", {"session_id": sid, "title": "Quick?",
                                               "timeout_seconds": 1})
        assert late.is_error
        assert result_json(late)["approved"] is False and result_json(late)["reason"] == "timeout"
        late = await mcp.call_tool("request_input", {"session_id": sid, "input_type": "text",
                                                     "prompt": "Quick?", "timeout_seconds": 1})
        assert late.is_error and result_json(late)["status"] == "timed_out"

        # A cancelled call withdraws its request: the person's client is told it closed.
        asking = asyncio.ensure_future(mcp.call_tool("request_input", {
            "session_id": sid, "input_type": "text", "prompt": "Cancel me",
            "request_id": "r2"}))
        await person.recv_until(lambda m: m.get("method") == "ui.request_input"
                                and m["params"]["request_id"] == "r2")
        asking.cancel()
        closed = await person.recv_until(
            lambda m: m.get("method") == "a2ui.request_closed"
            and m["params"]["request_id"] == "r2")
        assert closed["params"]["status"] == "timed_out"

        # v0.9 surfaces: a valid batch is delivered; an invalid one is -32602.
        out = await mcp.call_tool("push_surfaces", {"session_id": sid, "messages": [
            {"version": "v0.9", "createSurface": {
                "surfaceId": "s1",
                "catalogId": BASIC_CATALOG_ID}}]})
        assert not out.is_error and result_json(out)["delivered"] == 1
        with pytest.raises(MCPError) as bad:
            await mcp.call_tool("push_surfaces", {"session_id": sid, "messages": [{"x": 1}]})
        assert bad.value.code == -32602


async def test_an_mcp_session_lives_in_its_process(two_servers, user, agent, agent_key):
    """The SDK's session state is per process: when that process dies, the client's session id
    is unknown elsewhere (404, the spec's "initialize again"), and a new session works."""
    a, b = two_servers
    person = await open_user(a, await issue(user, agent))
    sid = await init_session(person)
    status, headers, _ = await raw("POST", f"{a.url}/mcp", credential=agent_key, body=INIT_BODY)
    assert status == 200
    sess = {"mcp-session-id": headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
    a.kill()
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    status, _, _ = await raw("POST", f"{b.url}/mcp", credential=agent_key, body=ping,
                             headers=sess)
    assert status == 404
    async with mcp_session(b, agent_key) as mcp:  # a new session, same data
        listed = result_json(await mcp.call_tool("list_sessions", {}))
        assert sid in [s["session_id"] for s in listed["sessions"]]
