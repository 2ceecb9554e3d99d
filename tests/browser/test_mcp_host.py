"""/mcp end to end in Chromium against a live Daphne (PostgreSQL, Redis): small MCP host pages
served by the test connect to /mcp with a person's ``stream_mcp`` token and show a component or
an agent's open request:

* with the official TypeScript client (``@modelcontextprotocol/client``), as seed 002's ``ui://``
  ``text/html`` resource in a plain ``sandbox="allow-scripts"`` iframe: the form's
  ``MCP_UI_ACTION``/``CALL_TOOL`` becomes an MCP ``tools/call`` of ``respond``, and the agent on
  its WebSocket receives the ``user.respond``, as from the web client;
* as an MCP App (``text/html;profile=mcp-app``) through ``@modelcontextprotocol/ext-apps``'
  ``AppBridge``: the app's ``tools/call`` is forwarded by the bridge, the agent receives it;
* in ``@mcp-ui/client`` 5.x's ``UIResourceRenderer`` with the standard ``onUIAction`` (MCP-UI's
  ``tool`` / ``link`` actions, ``ui-message-response`` back to the frame) and in 7.x's
  ``AppRenderer`` (the MCP Apps variant through a sandbox proxy on another origin), both with
  the MCP TypeScript SDK's ``Client`` (``@modelcontextprotocol/sdk``) and React.

And an agent that speaks only MCP (the official Python SDK's ``mcp.client``) calls
``request_input``; the person answers in the web client; the tool result carries the answer.

The host scripts (tests/browser/mcp_host/host.mjs and mcp_ui_hosts.mjs, whose npm packages
tests/browser/mcp_host/package.json pins) are bundled with the repository's esbuild into a
temporary directory for the module (never committed)."""

import asyncio
import concurrent.futures
import re
import subprocess
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import TIMEOUT, open_client
from tests.live.conftest import ROOT, _require_live
from tests.live.mcpclient import mcp_session, result_json

pytestmark = [pytest.mark.browser, pytest.mark.live, pytest.mark.django_db(transaction=True)]

ESBUILD = ROOT / "node_modules" / ".bin" / "esbuild"
HOST_DIR = Path(__file__).parent / "mcp_host"  # its own package.json (make install: npm ci)
HOST_SOURCE = HOST_DIR / "host.mjs"
MCP_UI_SOURCE = HOST_DIR / "mcp_ui_hosts.mjs"
HOST_PACKAGES = ("@modelcontextprotocol", "mcp-ui-client-5", "mcp-ui-client-7", "react-dom")
SANDBOX_PATH = "/__test-mcp-sandbox/proxy.html"
# The MCP Apps sandbox proxy of an @mcp-ui/client 7.x host (AppRenderer's ``sandbox.url``), as
# the MCP Apps spec describes it: on an origin other than the host's, it says it is ready
# (``ui/notifications/sandbox-proxy-ready``), renders the HTML of
# ``ui/notifications/sandbox-resource-ready`` in an inner iframe and relays every other message
# both ways.
SANDBOX_PROXY = """<!DOCTYPE html><html><head><meta charset="utf-8"><style>
html,body{margin:0;height:100%}iframe{border:0;width:100%;height:100%;display:block}</style>
</head><body><script>
const inner = document.createElement('iframe');
document.body.appendChild(inner);
window.addEventListener('message', (event) => {
  const m = event.data;
  if (event.source === window.parent) {
    if (m && m.method === 'ui/notifications/sandbox-resource-ready') {
      inner.setAttribute('sandbox', m.params.sandbox || 'allow-scripts');
      inner.srcdoc = m.params.html;
    } else if (inner.contentWindow) {
      inner.contentWindow.postMessage(m, '*');
    }
  } else if (event.source === inner.contentWindow) {
    window.parent.postMessage(m, '*');
  }
});
window.parent.postMessage({jsonrpc: '2.0', method: 'ui/notifications/sandbox-proxy-ready',
                           params: {}}, '*');
</script></body></html>"""
HOST_PATH = "/__test-mcp-host/"
HOST_HTML = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>MCP host</title>
<script type="module" src="host.js"></script></head><body></body></html>"""
FIELDS = [{"name": "city", "type": "text", "label": "City"},
          {"name": "nights", "type": "number", "label": "Nights"}]


@pytest.fixture(scope="module")
def host_bundle():
    """The host scripts bundled: {"host.js": ..., "mcp_ui_hosts.js": ...}."""
    if not ESBUILD.exists() or not all((HOST_DIR / "node_modules" / name).exists()
                                       for name in HOST_PACKAGES):
        message = ("the MCP host pages need `make install` (node_modules/.bin/esbuild, and "
                   "tests/browser/mcp_host/node_modules: the MCP clients, ext-apps, "
                   "@mcp-ui/client 5.x and 7.x, React)")
        if _require_live():
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    with tempfile.TemporaryDirectory(prefix="a2ui-mcp-host-") as out:
        done = subprocess.run(
            [str(ESBUILD), str(HOST_SOURCE), str(MCP_UI_SOURCE), "--bundle", "--format=esm",
             "--platform=browser", "--log-level=error", '--define:process.env.NODE_ENV="production"',
             f"--outdir={out}"],
            cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        yield {path.name: path.read_text() for path in Path(out).glob("*.js")}


def _serve_host(context, server, bundle, script, ready):
    """A page of a host, served by the test on the server's origin (so /mcp is same-origin
    and the server's Origin check passes as for any host on an allowed name)."""

    def serve(route):
        name = route.request.url.rsplit("/", 1)[-1]
        if name in bundle:
            route.fulfill(status=200, content_type="text/javascript", body=bundle[name])
        else:
            route.fulfill(status=200, content_type="text/html",
                          body=HOST_HTML.replace("host.js", script))

    page = context.new_page()
    page.route(f"{server.url}{HOST_PATH}**", serve)
    page.goto(f"{server.url}{HOST_PATH}")
    page.wait_for_function(ready)
    return page


@pytest.fixture
def host_page(context, server, host_bundle):
    return _serve_host(context, server, host_bundle, "host.js", "window.mcpHost !== undefined")


@pytest.fixture
def mcp_ui_page(context, server, host_bundle):
    """The @mcp-ui/client hosts' page, and the MCP Apps sandbox proxy @mcp-ui/client 7.x's
    AppRenderer loads, on an origin of its own (``localhost`` where the host is on
    ``127.0.0.1``), as its ``sandbox.url`` asks."""
    page = _serve_host(context, server, host_bundle, "mcp_ui_hosts.js",
                       "window.mcpUiHost !== undefined")
    page.sandbox_url = f"{server.url.replace('127.0.0.1', 'localhost')}{SANDBOX_PATH}"
    assert urlsplit(page.sandbox_url).netloc != urlsplit(server.url).netloc
    page.route(page.sandbox_url, lambda route: route.fulfill(
        status=200, content_type="text/html", body=SANDBOX_PROXY))
    return page


def mcp_token(person, agent):
    from a2ui import tokens

    return tokens.issue_stream_token(person, agent.record, "stream_mcp").token


def test_mcp_ui_iframe_form_click_reaches_the_agent(page, host_page, person, agent):
    sid = open_client(page)
    agent.call("render", sid, "form", {"title": "Trip <b>plan</b>", "fields": FIELDS},
               component_id="f1")
    expect(page.locator('[data-component-id="f1"]')).to_be_visible()
    uri = f"ui://sessions/{sid}/components/f1"
    mounted = host_page.evaluate("([t, u]) => mcpHost.mountMcpUi(t, u)",
                                 [mcp_token(person, agent), uri])
    assert mounted == {"mimeType": "text/html"}
    assert host_page.locator("#ui").get_attribute("sandbox") == "allow-scripts"
    frame = host_page.frame_locator("#ui")
    expect(frame.get_by_role("heading")).to_have_text("Trip plan")  # sanitized at the push
    expect(frame.locator("b")).to_have_count(0)
    frame.get_by_label("City").fill("Oslo")
    frame.get_by_label("Nights").fill("3")
    frame.get_by_role("button", name="Submit").click()
    expect(frame.locator("#a2ui-status")).to_have_text("Sent.")

    got = agent.wait_note("user.respond", lambda p: p.get("request_id") == "f1")
    assert got["session_id"] == sid
    assert got["value"] == {"city": "Oslo", "nights": 3}
    log = host_page.evaluate("window.hostLog")
    # This host speaks seed 002 and MCP-UI's "tool" alike but answers no MCP-UI probe: the
    # document asked (ui-request-render-data), then sent seed 002's one action, not both.
    messages = [e["message"] for e in log if "message" in e]
    calls = [m for m in messages if m["type"] != "ui-request-render-data"]
    assert [m["type"] for m in calls] == ["MCP_UI_ACTION"]
    assert messages[0]["type"] == "ui-request-render-data"
    assert calls[0]["action"]["type"] == "CALL_TOOL" and calls[0]["action"]["toolName"] == "respond"
    result = next(e["toolResult"] for e in log if "toolResult" in e)
    assert result["callbackId"] == calls[0]["action"]["callbackId"]
    assert not result["result"].get("isError")
    assert not page.watch.errors and not host_page.evaluate("window.__cspViolations")


def test_mcp_app_through_app_bridge_click_reaches_the_agent(page, host_page, person, agent):
    sid = open_client(page)
    agent.call("render", sid, "form", {"title": "Booking", "fields": FIELDS}, component_id="f2")
    agent.call("render", sid, "card", {"title": "Docs", "actions": [
        {"label": "Open", "action": "navigate", "url": "https://example.com/docs"}]},
        component_id="c1")
    uri = f"ui://sessions/{sid}/apps/f2"
    mounted = host_page.evaluate("([t, u]) => mcpHost.mountApp(t, u)",
                                 [mcp_token(person, agent), uri])
    assert mounted["mimeType"] == "text/html;profile=mcp-app"
    assert mounted["meta"]["ui"]["csp"]["connectDomains"] == []
    assert [uri, "text/html;profile=mcp-app"] in mounted["listed"]  # the host declared apps
    host_page.wait_for_function("window.hostLog.some((e) => 'appInitialized' in e)")
    frame = host_page.frame_locator("#ui")
    frame.get_by_label("City").fill("Bergen")
    frame.get_by_label("Nights").fill("2")
    frame.get_by_role("button", name="Submit").click()
    expect(frame.locator("#a2ui-status")).to_have_text("Sent.")
    got = agent.wait_note("user.respond", lambda p: p.get("request_id") == "f2")
    assert got["session_id"] == sid and got["value"] == {"city": "Bergen", "nights": 2}
    assert not host_page.evaluate("window.__cspViolations")


def test_mcp_app_link_goes_through_the_bridge(host_page, page, person, agent):
    sid = open_client(page)
    agent.call("render", sid, "card", {"title": "Docs", "actions": [
        {"label": "Open", "action": "navigate", "url": "https://example.com/docs"}]},
        component_id="c1")
    host_page.evaluate("([t, u]) => mcpHost.mountApp(t, u)",
                       [mcp_token(person, agent), f"ui://sessions/{sid}/apps/c1"])
    host_page.wait_for_function("window.hostLog.some((e) => 'appInitialized' in e)")
    host_page.frame_locator("#ui").get_by_role("button", name="Open").click()
    host_page.wait_for_function("window.hostLog.some((e) => 'openLink' in e)")
    links = [e["openLink"] for e in host_page.evaluate("window.hostLog") if "openLink" in e]
    assert links == ["https://example.com/docs"]


def _mcp_call(server, key, name, arguments):
    """One tool call by an MCP-only agent (the official Python SDK's client), in a thread of
    its own: (result, progress messages)."""

    async def run():
        progress = []

        async def on_progress(value, total, message):
            progress.append(message)

        async with mcp_session(server, key) as mcp:
            result = await mcp.call_tool(name, arguments, progress_callback=on_progress)
        return result, progress

    pool = concurrent.futures.ThreadPoolExecutor(1)
    future = pool.submit(asyncio.run, run())
    pool.shutdown(wait=False)
    return future


def test_request_input_through_mcp_is_answered_in_the_web_client(page, server, agent):
    sid = open_client(page)
    asking = _mcp_call(server, agent.key, "request_input", {
        "session_id": sid, "input_type": "text", "prompt": "Which city?", "request_id": "q1"})
    dialog = page.get_by_role("dialog", name="Which city?")
    expect(dialog).to_be_visible()
    dialog.get_by_role("textbox", name="Which city?").fill("Trondheim")
    dialog.get_by_role("button", name="Send").click()
    result, progress = asking.result(TIMEOUT * 2)
    assert not result.is_error
    assert result_json(result) == {"request_id": "q1", "status": "answered",
                                   "value": "Trondheim"}
    assert progress and "waiting for the person" in progress[0]
    expect(dialog).to_have_count(0)


def test_a_request_input_form_in_the_host_answers_the_agent(page, host_page, person, agent):
    """An agent's open request_input as ``ui://sessions/<id>/requests/<rid>`` in a plain
    sandboxed iframe: its Send posts CALL_TOOL ``respond`` with the field's value; the agent's
    call returns it and the web client's prompt closes."""
    sid = open_client(page)
    asking = agent.start("request_input", sid, "number", "How many nights?",
                         validation={"min": 1, "max": 30, "required": True})
    dialog = page.get_by_role("dialog", name="How many nights?")
    expect(dialog).to_be_visible()
    rid = agent.run(_open_request(sid))["request_id"]
    uri = f"ui://sessions/{sid}/requests/{rid}"
    mounted = host_page.evaluate("([t, u]) => mcpHost.mountMcpUi(t, u)",
                                 [mcp_token(person, agent), uri])
    assert mounted == {"mimeType": "text/html"}
    frame = host_page.frame_locator("#ui")
    frame.get_by_label("How many nights?").fill("4")
    frame.get_by_role("button", name="Send").click()
    expect(frame.locator("#a2ui-status")).to_have_text("Sent.")
    assert asking.result(TIMEOUT) == 4
    expect(dialog).to_have_count(0)
    calls = [e["message"] for e in host_page.evaluate("window.hostLog")
             if "message" in e and e["message"]["type"] == "MCP_UI_ACTION"]
    assert len(calls) == 1 and calls[0]["action"]["toolName"] == "respond"
    assert calls[0]["action"]["args"]["value"] == 4
    assert not page.watch.errors and not host_page.evaluate("window.__cspViolations")


def test_a_confirm_as_an_mcp_app_approves(page, host_page, person, agent):
    sid = open_client(page)
    asking = agent.start("confirm", sid, "Deploy now?", severity="warning")
    expect(page.get_by_role("dialog")).to_be_visible()
    rid = agent.run(_open_request(sid))["request_id"]
    mounted = host_page.evaluate("([t, u]) => mcpHost.mountApp(t, u)",
                                 [mcp_token(person, agent),
                                  f"ui://sessions/{sid}/request-apps/{rid}"])
    assert mounted["mimeType"] == "text/html;profile=mcp-app"
    assert [f"ui://sessions/{sid}/request-apps/{rid}", "text/html;profile=mcp-app"] \
        in mounted["listed"]
    host_page.wait_for_function("window.hostLog.some((e) => 'appInitialized' in e)")
    frame = host_page.frame_locator("#ui")
    frame.get_by_label("Reason (optional)").fill("green")
    frame.get_by_role("button", name="Approve").click()
    expect(frame.locator("#a2ui-status")).to_have_text("Sent.")
    assert asking.result(TIMEOUT) == {"approved": True, "reason": "green"}
    assert not host_page.evaluate("window.__cspViolations")


def _host_log(page, key):
    return [e[key] for e in page.evaluate("window.hostLog") if key in e]


def test_mcp_ui_client_5_renderer_answers_a_request_input(page, mcp_ui_page, person, agent):
    """@mcp-ui/client 5.x's UIResourceRenderer with the standard onUIAction: the request's form
    sends one ``tool`` action (``respond``, with a ``messageId``), the handler's
    ``client.callTool`` answers the agent, the frame leaves "Sending..." on the renderer's
    ``ui-message-response``; a second Send is refused by the server and the frame says why."""
    sid = open_client(page)
    asking = agent.start("request_input", sid, "number", "How many nights?",
                         validation={"min": 1, "max": 30, "required": True})
    dialog = page.get_by_role("dialog", name="How many nights?")
    expect(dialog).to_be_visible()
    rid = agent.run(_open_request(sid))["request_id"]
    uri = f"ui://sessions/{sid}/requests/{rid}"
    mounted = mcp_ui_page.evaluate("([t, u]) => mcpUiHost.mountMcpUi5(t, u)",
                                   [mcp_token(person, agent), uri])
    assert mounted == {"mimeType": "text/html"}
    assert mcp_ui_page.locator("#ui").get_attribute("sandbox") == "allow-scripts"
    # The renderer's autoResizeIframe follows the document's ui-size-change.
    expect(mcp_ui_page.locator("#ui")).to_have_attribute("style", re.compile(r"height: \d+px"))
    frame = mcp_ui_page.frame_locator("#ui")
    frame.get_by_label("How many nights?").fill("4")
    frame.get_by_role("button", name="Send").click()
    expect(frame.locator("#a2ui-status")).to_have_text("Sent.")
    assert asking.result(TIMEOUT) == 4
    expect(dialog).to_have_count(0)
    [action] = _host_log(mcp_ui_page, "action")  # the handler saw this action and nothing else
    assert action["type"] == "tool" and action["messageId"]
    assert action["payload"] == {"toolName": "respond", "params": {
        "session_id": sid, "request_id": rid, "value": 4}}
    assert not _host_log(mcp_ui_page, "toolResult")[0].get("isError")

    frame.get_by_role("button", name="Send").click()  # the request is closed now
    expect(frame.locator("#a2ui-status")).to_contain_text("Not sent: ")
    [error] = _host_log(mcp_ui_page, "toolError")
    assert "-32602" in error
    expect(frame.locator("#a2ui-status")).to_contain_text(error)
    assert [a["type"] for a in _host_log(mcp_ui_page, "action")] == ["tool", "tool"]
    assert not page.watch.errors and not mcp_ui_page.evaluate("window.__cspViolations")


def _form_and_card(page, person, agent, form_id, card_id):
    """A session with a form (FIELDS) and a card whose button links to example.com/docs; its
    id and a person's MCP token."""
    sid = open_client(page)
    agent.call("render", sid, "form", {"title": "Trip", "fields": FIELDS}, component_id=form_id)
    agent.call("render", sid, "card", {"title": "Docs", "actions": [
        {"label": "Open", "action": "navigate", "url": "https://example.com/docs"}]},
        component_id=card_id)
    return sid, mcp_token(person, agent)


def test_mcp_ui_client_5_renderer_form_and_link(page, mcp_ui_page, person, agent):
    """A form component in @mcp-ui/client 5.x's renderer reaches the agent once as
    ``user.respond``; a card's link is a ``link`` action."""
    sid, token = _form_and_card(page, person, agent, "f5", "c5")
    mcp_ui_page.evaluate("([t, u]) => mcpUiHost.mountMcpUi5(t, u)",
                         [token, f"ui://sessions/{sid}/components/f5"])
    frame = mcp_ui_page.frame_locator("#ui")
    # The renderer answered the document's probe: each action goes out in its form alone (a
    # host that answers only after the probe's second is test_mcp_ui_client_5_host_answering_late_...).
    expect(frame.locator("html")).to_have_attribute("data-a2ui-host", "mcp-ui")
    frame.get_by_label("City").fill("Oslo")
    frame.get_by_label("Nights").fill("3")
    frame.get_by_role("button", name="Submit").click()
    expect(frame.locator("#a2ui-status")).to_have_text("Sent.")
    got = agent.wait_note("user.respond", lambda p: p.get("request_id") == "f5")
    assert got["session_id"] == sid and got["value"] == {"city": "Oslo", "nights": 3}

    mcp_ui_page.evaluate("([t, u]) => mcpUiHost.mountMcpUi5(t, u, 'card')",
                         [token, f"ui://sessions/{sid}/components/c5"])
    card = mcp_ui_page.frame_locator("#card")
    expect(card.locator("html")).to_have_attribute("data-a2ui-host", "mcp-ui")
    card.get_by_role("button", name="Open").click()
    mcp_ui_page.wait_for_function("window.hostLog.some((e) => 'openLink' in e)")
    assert _host_log(mcp_ui_page, "openLink") == ["https://example.com/docs"]
    assert [a["type"] for a in _host_log(mcp_ui_page, "action")] == ["tool", "link"]
    assert len([p for m, p in list(agent.notes) if m == "user.respond"
                and p.get("request_id") == "f5"]) == 1


def test_mcp_ui_client_7_app_renderer_answers_a_request_input(page, mcp_ui_page, person, agent):
    """@mcp-ui/client 7.x's AppRenderer (no text/html renderer there) shows the MCP Apps
    variant through a sandbox proxy on its own origin; the app's ``tools/call`` of ``respond``
    goes through the renderer's client and the agent's request_input returns the answer."""
    sid = open_client(page)
    asking = agent.start("request_input", sid, "text", "Which city?")
    dialog = page.get_by_role("dialog", name="Which city?")
    expect(dialog).to_be_visible()
    rid = agent.run(_open_request(sid))["request_id"]
    mcp_ui_page.evaluate("([t, u, s]) => mcpUiHost.mountMcpUi7(t, u, s)",
                         [mcp_token(person, agent), f"ui://sessions/{sid}/request-apps/{rid}",
                          mcp_ui_page.sandbox_url])
    proxy = mcp_ui_page.locator("#root iframe")
    frame = proxy.content_frame.frame_locator("iframe")
    frame.get_by_label("Which city?").fill("Tromsø")
    frame.get_by_role("button", name="Send").click()
    expect(frame.locator("#a2ui-status")).to_have_text("Sent.")
    assert asking.result(TIMEOUT) == "Tromsø"
    expect(dialog).to_have_count(0)
    # The app's ui/notifications/size-changed sized the frame (AppFrame starts it at 600px).
    expect(proxy).to_have_attribute("style", re.compile(r"height: (?!600px)\d+px"))
    frame.get_by_role("button", name="Send").click()  # the request is closed now
    expect(frame.locator("#a2ui-status")).to_contain_text("Not sent: ")
    expect(frame.locator("#a2ui-status")).to_have_text(
        "Not sent: MCP error -32602: Request already answered")
    assert not _host_log(mcp_ui_page, "error")
    assert not page.watch.errors and not mcp_ui_page.evaluate("window.__cspViolations")


async def _open_request(sid):
    """The session's one open request (its params), as the services hold it."""
    from a2ui.requests import pending

    [request] = await pending.aopen_requests(sid)
    return request["params"]


def test_a_tool_call_shows_the_session_app_whose_button_answers_the_agent_once(
        page, host_page, person, agent):
    """An MCP Apps host calls ``show_session`` (tools/call), renders the app its
    ``_meta.ui.resourceUri`` names through AppBridge (tool input and result sent to it), the
    app follows the session (``session_view``, app-only) and shows the agent's
    ``request_input`` when it opens; a double click on Send and the host's retry of the same
    call answer the agent once."""
    sid = open_client(page)
    agent.call("render", sid, "card", {"title": "Trip <b>notes</b>"}, component_id="c1")
    token = mcp_token(person, agent)
    shown = host_page.evaluate("([t]) => mcpHost.runTool(t, 'show_session', {})", [token])
    assert shown["uri"] == "ui://a2ui/session"
    assert shown["toolMeta"]["ui"] == {"resourceUri": "ui://a2ui/session",
                                       "visibility": ["model", "app"]}
    assert shown["mimeType"] == "text/html;profile=mcp-app"
    assert shown["meta"]["ui"]["csp"]["connectDomains"] == []
    assert set(shown["appOnly"]) == {"session_view", "answer_request"}
    assert "show_session" in shown["modelTools"] and "respond" in shown["modelTools"]
    assert not shown["result"]["isError"] and shown["result"]["structuredContent"]["session_id"] == sid
    frame = host_page.frame_locator("#ui")
    expect(frame.get_by_role("heading", name="Trip notes")).to_be_visible()  # sanitized

    asking = agent.start("request_input", sid, "text", "Which city?")
    field = frame.get_by_label("Which city?")  # the app reads the session again: it appears
    field.fill("Trondheim")
    frame.get_by_role("button", name="Send").dblclick()
    expect(frame.locator("[data-a2ui-request] .a2ui-status")).to_have_text("Sent.")
    assert asking.result(TIMEOUT) == "Trondheim"
    expect(page.get_by_role("dialog", name="Which city?")).to_have_count(0)

    replayed = host_page.evaluate("mcpHost.replayLastAppCall()")
    assert replayed["name"] == "answer_request" and not replayed["isError"]
    assert replayed["structuredContent"]["replayed"] is True
    agent.call("notify", sid, "done")  # a round trip: a second answer would be here by now
    assert not [n for n in agent.notes if n[0] == "user.respond"]  # no second answer
    log = host_page.evaluate("window.hostLog")
    answers = [e for e in log if e.get("appCall") == "answer_request"]
    assert len(answers) == 1 and answers[0]["arguments"]["value"] == "Trondheim"
    assert any(e.get("appCall") == "session_view" for e in log)
    assert not [e for e in log if "refusedAppCall" in e]
    assert not page.watch.errors and not host_page.evaluate("window.__cspViolations")


# A host that answers late (its page busy past the probe's second: a long render, a slow
# machine), made exact: the page holds every message the frame posts until the test lets them
# through, in order, to the renderer. The frame's probe goes unanswered, it takes the host for
# seed 002's and sends its first action as MCP_UI_ACTION; the renderer, once it gets the
# messages, answers the probe (and hands that action to onUIAction, which ignores it); from that
# answer on the frame speaks MCP-UI and sends the action again in its MCP-UI form.
HOLD = """() => {
  window.held = [];
  window.addEventListener('message', (event) => {
    if (window.held && event.isTrusted) { event.stopImmediatePropagation(); window.held.push(event); }
  }, true);
}"""
RELEASE = """() => {
  const held = window.held;
  window.held = null;
  for (const e of held) {
    window.dispatchEvent(new MessageEvent('message', {data: e.data, origin: e.origin, source: e.source}));
  }
}"""
HELD_ACTION = "window.held.some((e) => e.data && e.data.type === 'MCP_UI_ACTION')"


def test_mcp_ui_client_5_host_answering_late_gets_each_action_in_its_form(
        page, mcp_ui_page, person, agent):
    sid, token = _form_and_card(page, person, agent, "fb", "cb")
    mcp_ui_page.evaluate(HOLD)
    mcp_ui_page.evaluate("([t, u]) => mcpUiHost.mountMcpUi5(t, u)",
                         [token, f"ui://sessions/{sid}/components/fb"])
    frame = mcp_ui_page.frame_locator("#ui")
    expect(frame.locator("html")).to_have_attribute("data-a2ui-host", "seed")  # the guess
    frame.get_by_label("City").fill("Oslo")
    frame.get_by_label("Nights").fill("3")
    frame.get_by_role("button", name="Submit").click()
    mcp_ui_page.wait_for_function(HELD_ACTION)
    expect(frame.locator("#a2ui-status")).to_have_text("Sending...")
    mcp_ui_page.evaluate(RELEASE)
    expect(frame.locator("#a2ui-status")).to_have_text("Sent.")
    expect(frame.locator("html")).to_have_attribute("data-a2ui-host", "mcp-ui")
    got = agent.wait_note("user.respond", lambda p: p.get("request_id") == "fb")
    assert got["session_id"] == sid and got["value"] == {"city": "Oslo", "nights": 3}
    seed, tool = _host_log(mcp_ui_page, "action")
    assert seed["type"] == "MCP_UI_ACTION" and seed["action"]["type"] == "CALL_TOOL"
    assert tool["type"] == "tool" and tool["messageId"] == seed["action"]["callbackId"]
    assert tool["payload"] == {"toolName": "respond", "params": seed["action"]["args"]}

    mcp_ui_page.evaluate("window.hostLog.length = 0")
    mcp_ui_page.evaluate(HOLD)
    mcp_ui_page.evaluate("([t, u]) => mcpUiHost.mountMcpUi5(t, u, 'card')",
                         [token, f"ui://sessions/{sid}/components/cb"])
    card = mcp_ui_page.frame_locator("#card")
    expect(card.locator("html")).to_have_attribute("data-a2ui-host", "seed")
    card.get_by_role("button", name="Open").click()
    mcp_ui_page.wait_for_function(HELD_ACTION)
    mcp_ui_page.evaluate(RELEASE)
    mcp_ui_page.wait_for_function("window.hostLog.some((e) => 'openLink' in e)")
    expect(card.locator("html")).to_have_attribute("data-a2ui-host", "mcp-ui")
    assert _host_log(mcp_ui_page, "openLink") == ["https://example.com/docs"]
    assert [a["type"] for a in _host_log(mcp_ui_page, "action")] == ["MCP_UI_ACTION", "link"]
    assert len([p for m, p in list(agent.notes) if m == "user.respond"
                and p.get("request_id") == "fb"]) == 1
    assert not page.watch.errors
