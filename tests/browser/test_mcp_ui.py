"""The ``ui://`` component documents of /mcp (a2ui.mcp.render) in Chromium, inside a plain
``sandbox="allow-scripts"`` iframe of a small host page, as an MCP-UI host shows them: the
document's one script runs under its strict CSP (no violation). Agent markup never runs.

* A seed-002 host (answers no MCP-UI message): the document's ``ui-request-render-data`` goes
  unanswered, so a form submit posts seed 002's ``MCP_UI_ACTION``/``CALL_TOOL`` for the
  ``respond`` tool, a link posts ``NAVIGATE``, and the host's ``TOOL_RESULT`` reaches the
  document.
* A host of MCP-UI's protocol (as @mcp-ui/client 5.x's renderer answers: ``ui-message-received``
  then ``ui-message-response``): a submit posts ``{type: "tool", payload, messageId}`` and a link
  ``{type: "link"}``, never ``MCP_UI_ACTION``; the host's error is shown in the frame.

@mcp-ui/client 5.x itself, with the official MCP client against a live server, is
tests/browser/test_mcp_host.py."""

import json
import uuid

import pytest

from a2ui.mcp import render

pytestmark = [pytest.mark.browser]

HOST = """<!DOCTYPE html><html><body><iframe id="ui" sandbox="allow-scripts"></iframe>
<script>
window.received = [];
window.addEventListener('message', (event) => {
  const m = event.data;
  window.received.push(m);
  if (m && m.type === 'MCP_UI_ACTION') window.actionAt = performance.now();
  if (m && m.type === 'MCP_UI_ACTION' && m.action.type === 'CALL_TOOL') {
    event.source.postMessage({type: 'TOOL_RESULT', callbackId: m.action.callbackId,
                              result: {content: [{type: 'text', text: '{"ok": true}'}]}}, '*');
  }
});
</script></body></html>"""


# A host of MCP-UI's postMessage protocol, as @mcp-ui/client 5.x's HTMLResourceRenderer answers:
# render data for ui-request-render-data; for an action, ui-message-received at once, then
# ui-message-response with the handler's result (a respond whose value says "fail" is refused).
MCP_UI_HOST = """<!DOCTYPE html><html><body><iframe id="ui" sandbox="allow-scripts"></iframe>
<script>
window.received = [];
window.addEventListener('message', (event) => {
  const m = event.data, frame = event.source;
  window.received.push(m);
  const reply = (type, messageId, payload) => frame.postMessage({type, messageId, payload}, '*');
  if (m.type === 'ui-request-render-data') {
    reply('ui-lifecycle-iframe-render-data', m.messageId, {renderData: undefined});
  } else if (m.type !== 'ui-size-change') {
    reply('ui-message-received', m.messageId);
    setTimeout(() => {
      if (m.type === 'tool' && JSON.stringify(m.payload.params).includes('fail')) {
        reply('ui-message-response', m.messageId, {error: new Error('MCP error -32602: closed')});
      } else {
        reply('ui-message-response', m.messageId, {response: {content: [], isError: false}});
      }
    }, 50);
  }
});
</script></body></html>"""


# The same host, late: it takes no notice of the frame until window.awake (a page busy past the
# document's probe), so the document takes it for a seed 002 host first.
LATE_MCP_UI_HOST = MCP_UI_HOST.replace(
    "window.received.push(m);", "window.received.push(m);\n  if (!window.awake) return;")


def _host(browser, html):
    context = browser.new_context()
    page = context.new_page()
    errors = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.set_content(html)
    return context, page, errors


@pytest.fixture
def host(browser):
    context, page, errors = _host(browser, HOST)
    yield page, errors
    context.close()


@pytest.fixture
def late_mcp_ui_host(browser):
    context, page, errors = _host(browser, LATE_MCP_UI_HOST)
    yield page, errors
    context.close()


@pytest.fixture
def mcp_ui_host(browser):
    context, page, errors = _host(browser, MCP_UI_HOST)
    yield page, errors
    context.close()


def show(page, doc):
    page.evaluate("(doc) => { document.getElementById('ui').srcdoc = doc; }", doc)
    frame = page.frame_locator("#ui")
    frame.locator("body").wait_for()
    return frame


def test_a_form_posts_call_tool_respond_and_reads_the_result(host):
    page, errors = host
    sid = uuid.uuid4()
    doc = render.document(sid, {"component_id": "f1", "component_type": "form", "data": {
        "title": "<img src=x onerror=\"parent.postMessage('pwned','*')\">",
        "fields": [{"name": "city", "type": "text", "label": "City"},
                   {"name": "n", "type": "number"}, {"name": "ok", "type": "checkbox"}]}})
    frame = show(page, doc)
    frame.locator("input[name=city]").fill("Oslo")
    frame.locator("input[name=n]").fill("3")
    frame.locator("input[name=ok]").check()
    frame.locator("button[data-a2ui-submit]").click()
    frame.locator("#a2ui-status", has_text="Sent.").wait_for()
    received = page.evaluate("window.received")
    calls = [m for m in received if isinstance(m, dict) and m.get("type") == "MCP_UI_ACTION"]
    assert len(calls) == 1, received
    action = calls[0]["action"]
    assert action["type"] == "CALL_TOOL" and action["toolName"] == "respond"
    assert action["args"] == {"session_id": str(sid), "request_id": "f1",
                              "value": {"city": "Oslo", "n": 3, "ok": True}}
    assert "pwned" not in json.dumps(received)
    assert not [e for e in errors if "Content Security Policy" in e], errors


def test_a_card_link_posts_navigate(host):
    page, errors = host
    started = page.evaluate("performance.now()")
    doc = render.document(uuid.uuid4(), {"component_id": "c1", "component_type": "card", "data": {
        "title": "Docs", "actions": [{"label": "Open", "action": "navigate",
                                      "url": "https://example.com/docs"}]}})
    frame = show(page, doc)
    frame.locator("button", has_text="Open").click()  # before the probe's second is up
    page.wait_for_function("window.received.some((m) => m.type === 'MCP_UI_ACTION')")
    received = page.evaluate("window.received")
    assert [m for m in received if m["type"] != "ui-request-render-data"] == [
        {"type": "MCP_UI_ACTION", "action": {
            "type": "NAVIGATE", "url": "https://example.com/docs", "target": "_blank"}}]
    assert [m["messageId"] for m in received if m["type"] == "ui-request-render-data"] == [
        "a2ui-probe-0", "a2ui-probe-150", "a2ui-probe-450"]
    # The action waited for the host's silence (a second), then went out once.
    assert page.evaluate("window.actionAt") - started >= 900
    assert not [e for e in errors if "Content Security Policy" in e], errors


def test_an_mcp_ui_host_gets_tool_and_link_actions_and_its_error_is_shown(mcp_ui_host):
    page, errors = mcp_ui_host
    sid = uuid.uuid4()
    doc = render.document(sid, {"component_id": "f1", "component_type": "form", "data": {
        "fields": [{"name": "city", "type": "text", "label": "City"}]}})
    frame = show(page, doc)
    frame.locator("input[name=city]").fill("Oslo")
    frame.locator("button[data-a2ui-submit]").click()
    frame.locator("#a2ui-status", has_text="Sent.").wait_for()
    frame.locator("input[name=city]").fill("fail")
    frame.locator("button[data-a2ui-submit]").click()
    frame.locator("#a2ui-status", has_text="Not sent: MCP error -32602: closed").wait_for()
    received = page.evaluate("window.received")
    tools = [m for m in received if m.get("type") == "tool"]
    assert [m["payload"] for m in tools] == [
        {"toolName": "respond", "params": {"session_id": str(sid), "request_id": "f1",
                                           "value": {"city": city}}} for city in ("Oslo", "fail")]
    assert len({m["messageId"] for m in tools}) == 2 and all(m["messageId"] for m in tools)
    assert not [m for m in received if m.get("type") in ("MCP_UI_ACTION", "TOOL_RESULT")]
    assert received[0] == {"type": "ui-request-render-data", "messageId": "a2ui-probe-0"}
    # Answered at once: the document asked no more, and tells the host its height.
    assert [m["type"] for m in received].count("ui-request-render-data") == 1
    size = next(m for m in received if m.get("type") == "ui-size-change")
    assert 0 < size["payload"]["height"] < 400

    card = render.document(sid, {"component_id": "c1", "component_type": "card", "data": {
        "title": "Docs", "actions": [{"label": "Open", "action": "navigate",
                                      "url": "https://example.com/docs"}]}})
    page.evaluate("window.received = []")
    frame = show(page, card)
    frame.locator("button", has_text="Open").click()
    page.wait_for_function("window.received.some((m) => m.type === 'link')")
    [link] = [m for m in page.evaluate("window.received") if m.get("type") == "link"]
    assert link["payload"] == {"url": "https://example.com/docs"} and link["messageId"]
    assert not [e for e in errors if "Content Security Policy" in e], errors


def test_an_mcp_ui_host_that_answers_late_gets_the_action_again_in_its_form(late_mcp_ui_host):
    """Silent past the probe's second, the host is taken for seed 002's: the submit goes out as
    MCP_UI_ACTION. Its MCP-UI answer to that (ui-message-received) ends the guess, and the tool
    call it has not answered is sent again as MCP-UI's ``tool``, under the same id; the host's
    answer to that one is the frame's."""
    page, errors = late_mcp_ui_host
    sid = uuid.uuid4()
    doc = render.document(sid, {"component_id": "f1", "component_type": "form", "data": {
        "fields": [{"name": "city", "type": "text", "label": "City"}]}})
    frame = show(page, doc)
    frame.locator("html[data-a2ui-host=seed]").wait_for(state="attached")
    page.evaluate("window.awake = true")
    frame.locator("input[name=city]").fill("Oslo")
    frame.locator("button[data-a2ui-submit]").click()
    frame.locator("#a2ui-status", has_text="Sent.").wait_for()
    frame.locator("html[data-a2ui-host=mcp-ui]").wait_for(state="attached")
    received = page.evaluate("window.received")
    seed, tool = [m for m in received if m.get("type") in ("MCP_UI_ACTION", "tool")]
    assert seed["action"]["type"] == "CALL_TOOL"
    assert tool == {"type": "tool", "messageId": seed["action"]["callbackId"], "payload": {
        "toolName": "respond", "params": seed["action"]["args"]}}
    assert seed["action"]["args"]["value"] == {"city": "Oslo"}
    # From then on the frame speaks MCP-UI: the host gets its height, and a second submit is
    # one tool call.
    page.wait_for_function("window.received.some((m) => m.type === 'ui-size-change')")
    page.evaluate("window.received = []")
    frame.locator("button[data-a2ui-submit]").click()
    page.wait_for_function("window.received.some((m) => m.type === 'tool')")
    frame.locator("#a2ui-status", has_text="Sent.").wait_for()
    assert [m["type"] for m in page.evaluate("window.received")
            if m.get("type") in ("MCP_UI_ACTION", "tool")] == ["tool"]
    assert not [e for e in errors if "Content Security Policy" in e], errors


def test_a_seed_host_answer_ends_the_guess(host):
    """A seed 002 host that answered (TOOL_RESULT) is one: a later MCP-UI-looking message
    neither changes the document's dialect nor sends an action again."""
    page, errors = host
    doc = render.document(uuid.uuid4(), {"component_id": "f1", "component_type": "form",
                                         "data": {"fields": [{"name": "city", "type": "text"}]}})
    frame = show(page, doc)
    frame.locator("input[name=city]").fill("Oslo")
    frame.locator("button[data-a2ui-submit]").click()
    frame.locator("#a2ui-status", has_text="Sent.").wait_for()
    page.evaluate("""() => document.getElementById('ui').contentWindow.postMessage(
        {type: 'ui-message-received', messageId: 'x'}, '*')""")
    page.wait_for_timeout(300)
    assert frame.locator("html").get_attribute("data-a2ui-host") == "seed"
    received = page.evaluate("window.received")
    assert [m["type"] for m in received if m.get("type") in ("MCP_UI_ACTION", "tool")] == [
        "MCP_UI_ACTION"]
