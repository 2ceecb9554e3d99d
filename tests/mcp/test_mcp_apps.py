"""MCP Apps through tool calls (issue 25): the person's tools link the session app
``ui://a2ui/session`` in the ext-apps 2.x shape, hosts are told apart by the MIME types of
their ``io.modelcontextprotocol/ui`` extension (HTML app or A2UI natively), ``show_session``
returns the session's view, and the app-only ``answer_request`` answers an agent's request once,
however often it is repeated. In-process, with the official SDK's client (``ClientSession``,
the handshake era) against the ASGI app; the agent asks on its WebSocket. (In Chromium through
ext-apps' AppBridge: tests/browser/test_mcp_host.py; the Inspector CLI's ``--app-info``:
tests/live/test_live_mcp_tools_npm.py.)
"""

import asyncio
import json

import httpx2
import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError

from a2ui import agents, tokens
from a2ui.core.surfaces.schema import BASIC_CATALOG_ID
from a2ui.mcp import negotiation, sessionapp, tools, uris
from a2ui.models import PendingRequest
from tests.mcp.asgiclient import StreamingASGI, build_app, sdk_session
from tests.surfaces.helpers import booking
from tests.wsutil import connect_agent, connect_user, init_session, recv_until, send

#: The tests that talk to /mcp (the sans-I/O ones need no database).
with_db = pytest.mark.django_db(transaction=True)

APP = "text/html;profile=mcp-app"
HTML_HOST = {uris.APPS_EXTENSION: {"mimeTypes": [APP]}}
NATIVE_HOST = {uris.APPS_EXTENSION: {"mimeTypes": [APP, "application/a2ui+json"]}}


@pytest.fixture
def mcp_token(user, agent):
    return tokens.issue_stream_token(user, agent, "stream_mcp").token


@pytest.fixture
async def host_app():
    app = build_app()
    yield app
    await app.runner.stop()


def test_negotiation_of_the_ui_form():
    assert negotiation.ui_form({}) is None
    assert negotiation.ui_form({"extensions": HTML_HOST}) == "html"
    assert negotiation.ui_form({"extensions": NATIVE_HOST}) == "a2ui"
    assert negotiation.ui_form({"extensions": {uris.APPS_EXTENSION: {
        "mimeTypes": [" Application/A2UI+JSON "]}}}) == "a2ui"
    # A declaration without (or with broken) mimeTypes is an MCP Apps host: the HTML app.
    for declared in ({}, {"mimeTypes": "application/a2ui+json"}, {"mimeTypes": [5]}, None):
        assert negotiation.ui_form({"extensions": {uris.APPS_EXTENSION: declared}}) == "html"
    # 2026-07-28: the capabilities come in the request's _meta; initialize's win.
    carried = {negotiation.CLIENT_CAPABILITIES_META: {"extensions": NATIVE_HOST}}
    assert negotiation.request_capabilities({}, carried) == {"extensions": NATIVE_HOST}
    assert negotiation.request_capabilities({"extensions": HTML_HOST}, carried) == {
        "extensions": HTML_HOST}
    assert negotiation.request_capabilities(None, {negotiation.CLIENT_CAPABILITIES_META: 5}) == {}


def test_tool_meta_in_the_ext_apps_shape():
    plain = {name: meta for name, _, _, meta in tools.person_tools(apps=False)}
    assert set(plain) == {"action", "error", "respond", "approve", "cancel", "show_session"}
    show = plain["show_session"]
    assert show["ui"] == {"resourceUri": uris.SESSION_APP, "visibility": ["model", "app"]}
    assert show["ui/resourceUri"] == uris.SESSION_APP  # the flat key ext-apps 2.x still reads
    assert plain["respond"] == {"ui": {"visibility": ["model", "app"]}}
    apps = {name: meta for name, _, _, meta in tools.person_tools(apps=True)}
    assert apps["session_view"]["ui"] == {"resourceUri": uris.SESSION_APP,
                                          "visibility": ["app"]}
    assert apps["answer_request"]["ui"] == {"visibility": ["app"]}
    assert uris.parse(uris.SESSION_APP) is None  # no session in it: not a session resource


def test_the_app_document_and_its_meta():
    page = sessionapp.document()
    assert f"script-src '{sessionapp.APP_SCRIPT_HASH}'" in page and "img-src 'none'" in page
    assert page.count("<script>") == 1 and "ui/initialize" in page and "session_view" in page
    meta = sessionapp.resource_meta()["ui"]
    assert meta["csp"] == {"connectDomains": [], "resourceDomains": [], "frameDomains": [],
                           "baseUriDomains": []}
    assert meta["permissions"] == {}


def test_the_view_escapes_and_keys_its_items():
    requests = [{"kind": "input", "params": {"request_id": "q<1>", "input_type": "select",
                                             "prompt": "City <b>?", "options": ["A&B", "C"]}},
                {"kind": "confirm", "params": {"request_id": "c1", "title": "Go?",
                                               "severity": "critical"}}]
    components = [{"component_id": "img", "component_type": "image",
                   "data": {"url": "https://img.example.com/a.png", "alt": "<x>"}},
                  {"component_id": "f1", "component_type": "form",
                   "data": {"title": "Trip", "fields": [{"name": "n", "type": "number"}]}}]
    found = sessionapp.view("s", components, requests, 2)
    assert [i["key"] for i in found["items"]] == ["r:q<1>", "r:c1", "c:img", "c:f1"]
    html = "".join(i["html"] for i in found["items"])
    assert "<b>" not in html and "<x>" not in html and "&lt;b&gt;" in html
    assert "<img" not in html  # the app's CSP loads no image: its text and a link
    assert 'data-a2ui-url="https://img.example.com/a.png"' in html
    assert 'data-a2ui-field="number"' in html and 'data-a2ui-send="approve"' in html
    assert found["requests"][0] == {"request_id": "q<1>", "kind": "input",
                                    "prompt": "City <b>?", "input_type": "select",
                                    "answer_with": "respond", "options": ["A&B", "C"]}
    assert found["refresh_ms"] == 2000
    assert "items" not in sessionapp.view("s", components, requests, 2, html=False)
    assert "<section" not in sessionapp.summary(found)


@with_db
async def test_tools_list_links_the_session_app_for_each_kind_of_host(host_app, mcp_token):
    async with sdk_session(host_app, mcp_token) as host:  # no MCP Apps: no app-only tools
        listed = {t.name: t for t in (await host.list_tools()).tools}
        assert "session_view" not in listed and "answer_request" not in listed
        assert listed["show_session"].meta["ui"]["resourceUri"] == uris.SESSION_APP
    async with sdk_session(host_app, mcp_token, extensions=HTML_HOST) as host:
        listed = {t.name: t for t in (await host.list_tools()).tools}
        assert listed["session_view"].meta["ui"]["visibility"] == ["app"]
        assert listed["answer_request"].meta["ui"]["visibility"] == ["app"]
        model = {n for n, t in listed.items() if "model" in t.meta["ui"]["visibility"]}
        assert model == {"action", "error", "respond", "approve", "cancel", "show_session"}
        read = await host.read_resource(uris.SESSION_APP)
        content = read.contents[0]
        assert content.mime_type == APP and content.text == sessionapp.document()
        assert content.meta == sessionapp.resource_meta()
        listed_uris = {str(r.uri) for r in (await host.list_resources()).resources}
        assert uris.SESSION_APP not in listed_uris  # found through the tool (SEP-1865 allows)
    async with sdk_session(host_app, mcp_token, extensions=NATIVE_HOST) as host:
        content = (await host.read_resource(uris.SESSION_APP)).contents[0]
        assert content.mime_type == "application/a2ui+json" and json.loads(content.text) == []


@with_db
async def test_agents_do_not_read_the_session_app(host_app, agent_key):
    async with sdk_session(host_app, agent_key) as bot:
        with pytest.raises(MCPError) as refused:
            await bot.read_resource(uris.SESSION_APP)
        assert refused.value.code == -32002


@with_db
async def test_show_session_and_an_answer_that_reaches_the_agent_once(
        host_app, stream_token, mcp_token, agent, agent_key):
    person = await connect_user(stream_token)
    sid = await init_session(person)
    bot = await connect_agent(agent_key)
    try:
        await agents.arender(agent, sid, "card", {"title": "Plan <b>A</b>"}, component_id="c1")
        await send(bot, {"jsonrpc": "2.0", "id": 1, "method": "ui.request_input", "params": {
            "session_id": sid, "request_id": "q1", "input_type": "text", "prompt": "City?"}})
        async with sdk_session(host_app, mcp_token, extensions=HTML_HOST) as host:
            for _ in range(50):  # the agent's socket stores the request: wait for it
                if await PendingRequest.objects.filter(request_id="q1").aexists():
                    break
                await asyncio.sleep(0.05)
            shown = await host.call_tool("show_session", {})  # the most recent live session
            assert not shown.is_error
            view = shown.structured_content
            assert view["session_id"] == sid
            assert [r["request_id"] for r in view["requests"]] == ["q1"]
            assert [c["component_id"] for c in view["components"]] == ["c1"]
            assert [i["key"] for i in view["items"]] == ["r:q1", "c:c1"]
            assert "City?" in shown.content[0].text and "<section" not in shown.content[0].text
            assert all(isinstance(c, types.TextContent) for c in shown.content)

            # Bad answers: the protocol's errors, nothing taken.
            with pytest.raises(MCPError) as unknown:
                await host.call_tool("answer_request", {"session_id": sid,
                                                        "request_id": "nope", "value": "x"})
            assert unknown.value.error.data["path"] == "arguments.request_id"
            with pytest.raises(MCPError) as no_value:
                await host.call_tool("answer_request", {"session_id": sid, "request_id": "q1"})
            assert no_value.value.error.data["path"] == "arguments.value"
            with pytest.raises(MCPError) as wrong_kind:  # q1 is no confirm
                await host.call_tool("answer_request", {"session_id": sid, "request_id": "q1",
                                                        "approved": True})
            assert wrong_kind.value.code == -32602

            first = await host.call_tool("answer_request", {"session_id": sid,
                                                            "request_id": "q1", "value": "Oslo"})
            assert first.structured_content == {"ok": True, "request_id": "q1",
                                                "status": "answered"}
            again = await host.call_tool("answer_request", {"session_id": sid,
                                                            "request_id": "q1", "value": "Oslo"})
            assert not again.is_error and again.structured_content["replayed"] is True
            other = await host.call_tool("answer_request", {"session_id": sid,
                                                            "request_id": "q1", "value": "Rome"})
            assert other.is_error and other.structured_content["status"] == "answered"

            answered = await recv_until(bot, lambda m: m.get("id") == 1)
            assert answered == {"jsonrpc": "2.0", "id": 1, "result": "Oslo"}, answered
            assert await bot.receive_nothing(timeout=0.3)  # one answer, nothing after it
            after = (await host.call_tool("session_view", {"session_id": sid})).structured_content
            assert after["requests"] == [] and [i["key"] for i in after["items"]] == ["c:c1"]
    finally:
        await bot.disconnect()
        await person.disconnect()


@with_db
async def test_a_confirm_answered_from_the_app(host_app, stream_token, mcp_token, agent):
    person = await connect_user(stream_token)
    sid = await init_session(person)
    asking = asyncio.ensure_future(agents.aconfirm(agent, sid, "Deploy?", request_id="d1"))
    try:
        async with sdk_session(host_app, mcp_token, extensions=HTML_HOST) as host:
            for _ in range(50):
                if (await host.call_tool("session_view", {"session_id": sid})
                        ).structured_content["requests"]:
                    break
                await asyncio.sleep(0.05)
            args = {"session_id": sid, "request_id": "d1", "approved": True, "reason": "go"}
            both = await asyncio.gather(*(host.call_tool("answer_request", args)
                                          for _ in range(2)))  # two clicks at once
            assert not any(r.is_error for r in both)
            assert sorted(bool(r.structured_content.get("replayed")) for r in both) == [
                False, True]
            assert await asyncio.wait_for(asking, 5) == {"approved": True, "reason": "go"}
    finally:
        if not asking.done():
            asking.cancel()
        await person.disconnect()


@pytest.fixture
def other_token(other_user, agent):
    return tokens.issue_stream_token(other_user, agent).token


@pytest.fixture
def other_token_mcp(other_user, agent):
    return tokens.issue_stream_token(other_user, agent, "stream_mcp").token


@with_db
async def test_show_session_without_a_session_or_for_anothers(host_app, mcp_token, other_token,
                                                               other_token_mcp):
    async with sdk_session(host_app, mcp_token) as host:
        none = await host.call_tool("show_session", {})
        assert none.is_error and none.structured_content["status"] == "no_session"
        assert none.structured_content["client_url"].endswith("/a2ui/")
        theirs = await connect_user(other_token)
        try:
            other_sid = await init_session(theirs)
            async with sdk_session(host_app, other_token_mcp) as them:  # no MCP Apps: no markup
                view = (await them.call_tool("show_session", {})).structured_content
                assert view["session_id"] == other_sid and "items" not in view
            with pytest.raises(MCPError) as foreign:
                await host.call_tool("show_session", {"session_id": other_sid})
            assert foreign.value.code == -32000
            with pytest.raises(MCPError) as bad:
                await host.call_tool("show_session", {"session_id": 5})
            assert bad.value.error.data["path"] == "arguments.session_id"
        finally:
            await theirs.disconnect()


@with_db
async def test_a_native_a2ui_host_gets_the_surfaces(host_app, stream_token, mcp_token, agent):
    person = await connect_user(stream_token)
    sid = await init_session(person)
    try:
        await agents.asurfaces(agent, sid, booking("s1"))
        async with sdk_session(host_app, mcp_token, extensions=NATIVE_HOST) as host:
            shown = await host.call_tool("show_session", {"session_id": sid})
            [embedded] = [c for c in shown.content if isinstance(c, types.EmbeddedResource)]
            assert embedded.resource.mime_type == "application/a2ui+json"
            assert str(embedded.resource.uri) == f"a2ui://sessions/{sid}/surfaces/s1"
            messages = json.loads(embedded.resource.text)
            assert messages[0]["createSurface"]["surfaceId"] == "s1"
            assert "items" not in shown.structured_content  # no markup for a native host
            listed = {str(r.uri) for r in (await host.list_resources()).resources}
            assert f"a2ui://sessions/{sid}/surfaces/s1" in listed  # the basic catalog
        async with sdk_session(host_app, mcp_token, extensions=HTML_HOST) as host:
            shown = await host.call_tool("show_session", {"session_id": sid})
            assert not [c for c in shown.content if isinstance(c, types.EmbeddedResource)]
            assert "items" in shown.structured_content
    finally:
        await person.disconnect()


@with_db
async def test_a_native_a2ui_host_sees_and_answers_what_the_agent_rendered_and_asked(
        host_app, stream_token, mcp_token, agent, agent_key):
    """Seed 000's components and requests reach a host that renders A2UI natively as the
    basic-catalog surfaces a v0.9 client gets (a2ui.core.surfaces.translate); its person's
    action on a request's surface answers the agent."""
    person = await connect_user(stream_token)
    sid = await init_session(person)
    bot = await connect_agent(agent_key)
    try:
        await agents.arender(agent, sid, "card", {"title": "Plan A"}, component_id="c1")
        await send(bot, {"jsonrpc": "2.0", "id": 1, "method": "ui.request_input", "params": {
            "session_id": sid, "request_id": "q1", "input_type": "text", "prompt": "City?"}})
        for _ in range(50):
            if await PendingRequest.objects.filter(request_id="q1").aexists():
                break
            await asyncio.sleep(0.05)
        async with sdk_session(host_app, mcp_token, extensions=NATIVE_HOST) as host:
            shown = await host.call_tool("show_session", {"session_id": sid})
            embedded = {str(c.resource.uri): json.loads(c.resource.text) for c in shown.content
                        if isinstance(c, types.EmbeddedResource)}
            card = embedded[f"a2ui://sessions/{sid}/surfaces/a2ui-component-c1"]
            asked = embedded[f"a2ui://sessions/{sid}/surfaces/a2ui-request-q1"]
            assert card[0]["createSurface"]["catalogId"] == BASIC_CATALOG_ID
            assert "Plan A" in json.dumps(card) and "City?" in json.dumps(asked)
            button = next(c["id"] for m in asked for c in m.get("updateComponents", {}).get(
                "components", []) if c["component"] == "Button")
            answered = await host.call_tool("action", {
                "session_id": sid, "name": "respond", "surfaceId": "a2ui-request-q1",
                "sourceComponentId": button, "context": {"value": "Oslo"}})
            assert not answered.is_error, answered
            assert await recv_until(bot, lambda m: m.get("id") == 1, timeout=5) == {
                "jsonrpc": "2.0", "id": 1, "result": "Oslo"}
            # an HTML app host is shown the same session as markup, not as surfaces
        async with sdk_session(host_app, mcp_token, extensions=HTML_HOST) as host:
            shown = await host.call_tool("show_session", {"session_id": sid})
            assert not [c for c in shown.content if isinstance(c, types.EmbeddedResource)]
    finally:
        await bot.disconnect()
        await person.disconnect()


async def _stateless(app, credential, rpc_id, method, params, capabilities):
    """One self-contained 2026-07-28 POST (its capabilities in the envelope): its result."""
    body = {"jsonrpc": "2.0", "id": rpc_id, "method": method, "params": {**params, "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "host", "version": "1"},
        negotiation.CLIENT_CAPABILITIES_META: capabilities}}}
    async with httpx2.AsyncClient(transport=StreamingASGI(app), base_url="http://localhost",
                                  timeout=10) as http:
        headers = {"Authorization": f"Bearer {credential}", "Mcp-Method": method,
                   "Mcp-Protocol-Version": "2026-07-28",
                   "Accept": "application/json, text/event-stream"}
        if "uri" in params:
            headers["Mcp-Name"] = params["uri"]
        response = await http.post("/mcp", json=body, headers=headers)
        text = (await response.aread()).decode()
    assert response.status_code == 200, text
    line = next(x for x in text.splitlines() if x.startswith("{") or x.startswith("data: {"))
    return json.loads(line.removeprefix("data: "))["result"]


@with_db
async def test_the_2026_revision_reads_the_capabilities_of_each_request(host_app, mcp_token):
    """No initialize on 2026-07-28: each request's envelope says what the host renders."""
    plain = await _stateless(host_app, mcp_token, 1, "tools/list", {}, {})
    assert "answer_request" not in {t["name"] for t in plain["tools"]}
    native = {"extensions": NATIVE_HOST}
    listed = await _stateless(host_app, mcp_token, 2, "tools/list", {}, native)
    assert {t["name"]: t["_meta"]["ui"]["visibility"] for t in listed["tools"]}[
        "answer_request"] == ["app"]
    read = await _stateless(host_app, mcp_token, 3, "resources/read",
                            {"uri": uris.SESSION_APP}, native)
    assert read["contents"][0]["mimeType"] == "application/a2ui+json"
    read = await _stateless(host_app, mcp_token, 4, "resources/read",
                            {"uri": uris.SESSION_APP}, {"extensions": HTML_HOST})
    assert read["contents"][0]["mimeType"] == APP
