"""Tier 2: ``subscriptions/listen`` (MCP 2026-07-28, SEP-2575) through Daphne, PostgreSQL and
Redis, driven by the official SDK's ``Client``: the listen stream on one process, the agent
pushing on another; a second person's stream neither gets the first person's URIs nor hears
of their changes."""

import asyncio
import json

import pytest
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ResourcesListChanged, ResourceUpdated

from a2ui.core.surfaces.catalog import BASIC_CATALOG_ID
from tests.live.client import init_session, open_user
from tests.live.mcpclient import mcp_client, mcp_session, raw
from tests.live.test_live_mcp import V09, issue

pytestmark = pytest.mark.django_db(transaction=True)
WAIT = 15


async def _next(sub):
    return await asyncio.wait_for(sub.__anext__(), WAIT)


async def test_listen_across_processes_per_person(two_servers, user, other_user, agent,
                                                  agent_key):
    a, b = two_servers
    ada = await open_user(a, await issue(user, agent))
    sid = await init_session(ada, capabilities=V09)
    bob = await open_user(a, await issue(other_user, agent))
    bob_sid = await init_session(bob, capabilities=V09)
    ada_mcp = await issue(user, agent, "stream_mcp")
    bob_mcp = await issue(other_user, agent, "stream_mcp")
    card = f"ui://sessions/{sid}/components/c1"
    bob_card = f"ui://sessions/{bob_sid}/components/b1"

    async with mcp_session(a, agent_key) as bot:  # the agent, on process a
        for session_id, cid in ((sid, "c1"), (bob_sid, "b1")):
            await bot.call_tool("render", {"session_id": session_id, "component_type": "card",
                                           "component_id": cid, "data": {"title": "Trip"}})

        async with mcp_client(b, ada_mcp) as host, mcp_client(b, bob_mcp) as other:
            assert host.protocol_version == "2026-07-28"
            caps = host.server_capabilities
            assert caps.resources.subscribe is True and caps.resources.list_changed is True
            assert not caps.tools.list_changed

            # Bob may not listen to Ada's URI: -32602 naming it, before any stream.
            with pytest.raises(MCPError) as refused:
                async with other.listen(resource_subscriptions=[bob_card, card]):
                    pass
            assert refused.value.code == -32602
            assert refused.value.error.data["path"] == "notifications.resourceSubscriptions[1]"
            with pytest.raises(MCPError) as malformed:
                async with other.listen(resource_subscriptions=["ui://sessions/x/client"]):
                    pass
            assert malformed.value.code == -32602

            async with host.listen(resources_list_changed=True, resource_subscriptions=[card],
                                   tools_list_changed=True) as sub, \
                    other.listen(resources_list_changed=True,
                                 resource_subscriptions=[bob_card]) as bob_sub:
                assert sub.honored.resource_subscriptions == [card]
                assert sub.honored.resources_list_changed is True
                assert not sub.honored.tools_list_changed  # never sent: not honoured

                # The agent updates Ada's card on process a: her stream on b hears of it.
                await bot.call_tool("update", {"session_id": sid, "component_id": "c1",
                                               "data": {"title": "Trip (updated)"}})
                assert await _next(sub) == ResourceUpdated(uri=card)
                assert "Trip (updated)" in (await host.read_resource(card)).contents[0].text
                # A new component: her list changed.
                await bot.call_tool("render", {"session_id": sid, "component_type": "alert",
                                               "component_id": "c2", "data": {"title": "New"}})
                assert await _next(sub) == ResourcesListChanged()
                # A new surface.
                await bot.call_tool("push_surfaces", {"session_id": sid, "messages": [
                    {"version": "v0.9", "createSurface": {
                        "surfaceId": "s1",
                        "catalogId": BASIC_CATALOG_ID}}]})
                assert await _next(sub) == ResourcesListChanged()
                # A new session of hers (a second web client, on process a).
                ada2 = await open_user(a, await issue(user, agent))
                sid2 = await init_session(ada2, capabilities=V09)
                assert await _next(sub) == ResourcesListChanged()
                listed = {str(r.uri) for r in (await host.list_resources()).resources}
                assert f"ui://sessions/{sid2}/client" in listed
                # ... which her stream now watches too.
                await bot.call_tool("render", {"session_id": sid2, "component_type": "card",
                                               "component_id": "d1", "data": {"title": "2"}})
                assert await _next(sub) == ResourcesListChanged()

                # Bob's stream heard none of Ada's changes: the first thing it gets is the
                # update of his own card.
                await bot.call_tool("update", {"session_id": bob_sid, "component_id": "b1",
                                               "data": {"title": "Bob's trip"}})
                assert await _next(bob_sub) == ResourceUpdated(uri=bob_card)
                # ... and Ada's stream did not hear of Bob's (her next event is her own).
                await bot.call_tool("update", {"session_id": sid, "component_id": "c1",
                                               "data": {"title": "again"}})
                assert await _next(sub) == ResourceUpdated(uri=card)
                await ada2.close()
    for socket in (ada, bob):
        await socket.close()


async def test_agent_listens_to_nothing_of_people_and_revocation_ends_streams(
        daphne_server, live_services, user, agent, agent_key):
    from channels.db import database_sync_to_async
    from channels_redis.pubsub import RedisPubSubChannelLayer

    from a2ui import tokens
    from a2ui.apps import default_channel_layers
    from a2ui.infra import groups
    from a2ui.push import revocation

    server = daphne_server()
    ada = await open_user(server, await issue(user, agent))
    sid = await init_session(ada, capabilities=V09)
    card = f"ui://sessions/{sid}/components/c1"
    token = await database_sync_to_async(tokens.issue_stream_token)(
        user, agent, "stream_mcp")
    # The servers' channel layer, to announce the revocation as the admin's process would.
    layer = RedisPubSubChannelLayer(**default_channel_layers(live_services)["default"]["CONFIG"])
    try:
        async with mcp_client(server, agent_key) as bot:
            # An agent key reads no person's resources: it may not listen to them either.
            with pytest.raises(MCPError) as refused:
                async with bot.listen(resource_subscriptions=[card]):
                    pass
            assert refused.value.code == -32602
            async with bot.listen(resources_list_changed=True) as sub:
                assert sub.honored.resources_list_changed is True
                await layer.group_send(groups.agent_key_group(agent),
                                       groups.close_event(4003, "revoked"))
                with pytest.raises(StopAsyncIteration):  # ended gracefully, nothing sent
                    await _next(sub)

        async with mcp_client(server, token.token) as host:
            async with host.listen(resource_subscriptions=[card]) as sub:
                await database_sync_to_async(revocation.revoke_tokens)([token.record.jti],
                                                                       None)
                await layer.group_send(groups.token_group(token.record.jti),
                                       groups.close_event(4003, "revoked"))
                with pytest.raises(StopAsyncIteration):
                    await _next(sub)
            with pytest.raises(Exception):  # noqa: B017 - the revoked token is refused (401)
                async with host.listen(resource_subscriptions=[card]):
                    pass
        # On the wire: a JSON error with HTTP 400, never a 500 (hostile strings included).
        for bad in (card, "ui://sessions/\ud800/client", "a2ui://\x00" * 3, "x" * 5000):
            status, _, text = await raw("POST", f"{server.url}/mcp", credential=agent_key,
                                        body=_listen_body([bad]), headers=MODERN)
            error = json.loads(text)["error"]
            assert status == 400 and error["code"] == -32602, (status, text)
            assert error["data"]["path"] == "notifications.resourceSubscriptions[0]"
        status, _, text = await raw("POST", f"{server.url}/mcp", credential=agent_key,
                                    body=_listen_body([card] * 300), headers=MODERN)
        assert status == 400 and json.loads(text)["error"]["code"] == -32602
    finally:
        await layer.flush()
        await ada.close()


MODERN = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen"}


def _listen_body(uris):
    return {"jsonrpc": "2.0", "id": 7, "method": "subscriptions/listen", "params": {
        "notifications": {"resourceSubscriptions": uris},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}}}}
