"""Tier 2: an MCP host sees and answers an agent's ``request_input`` / ``confirm`` across two
Daphne processes (issue 24, item 2): the person's MCP host on process a (a ``stream_mcp``
token), the agent's request through its MCP tools on process b. The host hears
``notifications/resources/list_changed`` (``resources/subscribe`` on the handshake era,
``subscriptions/listen`` on 2026-07-28), reads ``a2ui://sessions/<id>/requests/<request_id>``,
answers with ``respond`` / ``approve`` (a bad answer is refused first and changes nothing), and
the agent's tool call returns the answer."""

import asyncio
import json

import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ResourcesListChanged

from tests.live.client import init_session, open_user
from tests.live.mcpclient import mcp_client, mcp_session, result_json
from tests.live.test_live_mcp import issue

pytestmark = pytest.mark.django_db(transaction=True)
WAIT = 15


async def _next_of(queue, kind):
    async def find():
        while not isinstance(await queue.get(), kind):
            pass
    await asyncio.wait_for(find(), WAIT)


async def test_a_host_on_one_process_answers_request_input_asked_on_the_other(
        two_servers, user, agent, agent_key):
    a, b = two_servers
    person = await open_user(a, await issue(user, agent))
    sid = await init_session(person)
    mcp_token = await issue(user, agent, "stream_mcp")
    notes = asyncio.Queue()

    async def on_message(message):
        if not isinstance(message, Exception):
            await notes.put(message)

    uri = f"a2ui://sessions/{sid}/requests/r1"
    async with mcp_session(a, mcp_token, message_handler=on_message) as host, \
            mcp_session(b, agent_key) as bot:
        await host.subscribe_resource(f"ui://sessions/{sid}/client")  # watches the session
        asking = asyncio.ensure_future(bot.call_tool("request_input", {
            "session_id": sid, "input_type": "text", "prompt": "Your name?",
            "request_id": "r1"}))
        try:
            await _next_of(notes, types.ResourceListChangedNotification)
            listed = {str(r.uri) for r in (await host.list_resources()).resources}
            assert uri in listed and f"ui://sessions/{sid}/requests/r1" in listed
            read = json.loads((await host.read_resource(uri)).contents[0].text)
            assert read["params"]["prompt"] == "Your name?"
            assert read["answer_with"]["tool"] == "respond"

            with pytest.raises(MCPError) as wrong:  # approve answers a confirm only
                await host.call_tool("approve", {"session_id": sid, "request_id": "r1",
                                                 "approved": True})
            assert wrong.value.code == -32602
            assert not asking.done()
            assert json.loads((await host.read_resource(uri)).contents[0].text)["status"] \
                == "pending"

            answered = await host.call_tool("respond", {"session_id": sid, "request_id": "r1",
                                                        "value": "Ada"})
            assert answered.structured_content == {"ok": True}
            out = result_json(await asyncio.wait_for(asking, WAIT))
            assert out["value"] == "Ada" and out["status"] == "answered"
            await _next_of(notes, types.ResourceListChangedNotification)
            with pytest.raises(MCPError) as gone:
                await host.read_resource(uri)
            assert gone.value.code == -32002
        finally:
            if not asking.done():
                asking.cancel()
    await person.close()


async def test_a_listening_host_approves_a_confirm_asked_on_the_other_process(
        two_servers, user, agent, agent_key):
    a, b = two_servers
    person = await open_user(a, await issue(user, agent))
    sid = await init_session(person)
    mcp_token = await issue(user, agent, "stream_mcp")

    async with mcp_client(a, mcp_token) as host, mcp_session(b, agent_key) as bot:
        async with host.listen(resources_list_changed=True) as sub:
            asking = asyncio.ensure_future(bot.call_tool("confirm", {
                "session_id": sid, "title": "Deploy?", "request_id": "c1"}))
            try:
                assert await asyncio.wait_for(sub.__anext__(), WAIT) == ResourcesListChanged()
                uri = f"a2ui://sessions/{sid}/requests/c1"
                read = json.loads((await host.read_resource(uri)).contents[0].text)
                assert read["kind"] == "confirm" and read["answer_with"]["tool"] == "approve"
                await host.call_tool("approve", {"session_id": sid, "request_id": "c1",
                                                 "approved": False, "reason": "not today"})
                out = result_json(await asyncio.wait_for(asking, WAIT))
                assert (out["approved"], out["reason"]) == (False, "not today"), out
                assert await asyncio.wait_for(sub.__anext__(), WAIT) == ResourcesListChanged()
            finally:
                if not asking.done():
                    asking.cancel()
    await person.close()
