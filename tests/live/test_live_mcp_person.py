"""Tier 2: the person's side of /mcp (a ``stream_mcp`` token) across two Daphne processes: the
person's live UI as resources, catalog negotiation both ways seed 004 describes, subscriptions
notified after an agent push in the other process, and answers reaching the agent."""

import asyncio
import json

import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError

from a2ui.core.surfaces import validate_server_message
from a2ui.core.surfaces.catalog import BASIC_CATALOG_ID
from tests.live.client import init_session, open_agent, open_user
from tests.live.mcpclient import mcp_session, result_json
from tests.live.test_live_mcp import V09, issue
from tests.live.test_live_surfaces import booking

pytestmark = pytest.mark.django_db(transaction=True)
CLIENT_CAPS = {"clientCapabilities": V09}


async def test_person_reads_subscribes_and_answers_across_processes(
        two_servers, user, agent, agent_key):
    a, b = two_servers
    person = await open_user(a, await issue(user, agent))
    sid = await init_session(person, capabilities=V09)
    agent_socket = await open_agent(a, agent_key)
    mcp_token = await issue(user, agent, "stream_mcp")
    updates = asyncio.Queue()

    async def on_message(message):
        if not isinstance(message, Exception):
            await updates.put(message)

    async with mcp_session(a, agent_key) as bot:
        await bot.call_tool("render", {"session_id": sid, "component_type": "card",
                                       "component_id": "c1",
                                       "data": {"title": "Trip <b>plan</b>"}})
        await bot.call_tool("render", {"session_id": sid, "component_type": "form",
                                       "component_id": "f1", "data": {"fields": [
                                           {"name": "city", "type": "text"}]}})
        await bot.call_tool("push_surfaces", {"session_id": sid, "messages": booking()})

        # The seed's form: capabilities.a2ui read from the raw initialize request.
        async with mcp_session(b, mcp_token, raw_capabilities={"a2ui": CLIENT_CAPS},
                               message_handler=on_message) as host:
            listed = {str(r.uri): r for r in (await host.list_resources()).resources}
            surface = f"a2ui://sessions/{sid}/surfaces/s1"
            card = f"ui://sessions/{sid}/components/c1"
            assert surface in listed and card in listed, listed
            assert listed[surface].mime_type == "application/a2ui+json"
            assert listed[card].mime_type == "text/html"
            assert listed[f"ui://sessions/{sid}/client"].mime_type == "text/uri-list"
            read = (await host.read_resource(surface)).contents[0]
            messages = json.loads(read.text)
            assert messages[0]["createSurface"]["catalogId"] == BASIC_CATALOG_ID
            for message in messages:  # each a valid v0.9 server message, strictly
                validate_server_message(message, strict=True)
            page = (await host.read_resource(card)).contents[0].text
            assert "Content-Security-Policy" in page and "default-src 'none'" in page
            assert "<b>" not in page
            with pytest.raises(MCPError) as missing:
                await host.read_resource(f"ui://sessions/{sid}/components/nope")
            assert missing.value.code == -32002

            # Subscribed: an update by the agent in the other process is notified.
            await host.subscribe_resource(card)
            await bot.call_tool("update", {"session_id": sid, "component_id": "c1",
                                           "data": {"title": "Trip (updated)"}})
            note = await asyncio.wait_for(_next_updated(updates, card), 15)
            assert note == card
            assert "Trip (updated)" in (await host.read_resource(card)).contents[0].text
            # A new component in a watched session: the list changed.
            await bot.call_tool("render", {"session_id": sid, "component_type": "alert",
                                           "component_id": "c2", "data": {"title": "New"}})
            await asyncio.wait_for(_next_of(updates, types.ResourceListChangedNotification), 15)

            # The person's action reaches the agent's socket as from the web client.
            out = await host.call_tool("action", {
                "session_id": sid, "name": "book", "surfaceId": "s1",
                "sourceComponentId": "book", "context": {"name": "Ada"}})
            assert not out.is_error
            assert out.content[1].resource.mime_type == "application/a2ui+json"
            assert out.content[1].annotations.audience == ["user"]
            event = await agent_socket.recv_until(lambda m: m.get("method") == "a2ui.v09")
            assert event["params"]["messages"][0]["action"]["name"] == "book"

            # respond answers the agent's request_input, wherever the agent waits.
            asking = asyncio.ensure_future(bot.call_tool("request_input", {
                "session_id": sid, "input_type": "text", "prompt": "City?",
                "request_id": "q1"}))
            await person.recv_until(lambda m: m.get("method") == "ui.request_input")
            answered = await host.call_tool("respond", {"session_id": sid,
                                                        "request_id": "q1", "value": "Oslo"})
            assert result_json(answered) == {"ok": True}
            assert result_json(await asyncio.wait_for(asking, 15))["value"] == "Oslo"
            with pytest.raises(MCPError) as bad:
                await host.call_tool("respond", {"session_id": sid, "request_id": "q1",
                                                 "value": "again"})
            assert bad.value.code == -32602

    # The extensions form; and a host that declares nothing is not offered the surface.
    apps = {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}
    async with mcp_session(b, mcp_token, extensions={"a2ui": CLIENT_CAPS, **apps}) as host:
        uris = {str(r.uri): r.mime_type for r in (await host.list_resources()).resources}
        assert f"a2ui://sessions/{sid}/surfaces/s1" in uris
        # An MCP Apps host also gets each component as an app, with its CSP in _meta.ui.
        app = f"ui://sessions/{sid}/apps/c1"
        assert uris[app] == "text/html;profile=mcp-app"
        content = (await host.read_resource(app)).contents[0]
        assert content.mime_type == "text/html;profile=mcp-app"
        assert content.meta["ui"]["csp"]["connectDomains"] == []
        assert '"mode": "mcp-app"' in content.text
        respond = next(t for t in (await host.list_tools()).tools if t.name == "respond")
        assert respond.meta["ui"]["visibility"] == ["model", "app"]
    async with mcp_session(b, mcp_token) as host:
        uris = {str(r.uri) for r in (await host.list_resources()).resources}
        assert f"a2ui://sessions/{sid}/surfaces/s1" not in uris
        assert f"ui://sessions/{sid}/components/c1" in uris
        # Per-call _meta (stateless use) declares the catalogs for that call.
        read = await host.read_resource(f"a2ui://sessions/{sid}/surfaces/s1",
                                        meta={"a2ui": CLIENT_CAPS})
        assert read.contents[0].mime_type == "application/a2ui+json"
    await person.close()
    await agent_socket.close()


async def _next_of(queue, kind):
    while not isinstance(await queue.get(), kind):
        pass


async def _next_updated(queue, uri):
    while True:
        message = await queue.get()
        if isinstance(message, types.ResourceUpdatedNotification) and \
                str(message.params.uri) == uri:
            return uri
