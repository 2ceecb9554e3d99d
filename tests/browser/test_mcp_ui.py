"""The ``ui://`` component documents of /mcp (a2ui.mcp.render) in Chromium, inside a plain
``sandbox="allow-scripts"`` iframe of a small host page, as an MCP-UI host shows them: the
document's one script runs under its strict CSP (no violation), a form submit posts seed 002's
``MCP_UI_ACTION``/``CALL_TOOL`` for the ``respond`` tool, a link posts ``NAVIGATE``, and the
host's ``TOOL_RESULT`` reaches the document. Agent markup never runs."""

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
  if (m && m.type === 'MCP_UI_ACTION' && m.action.type === 'CALL_TOOL') {
    event.source.postMessage({type: 'TOOL_RESULT', callbackId: m.action.callbackId,
                              result: {content: [{type: 'text', text: '{"ok": true}'}]}}, '*');
  }
});
</script></body></html>"""


@pytest.fixture
def host(browser):
    context = browser.new_context()
    page = context.new_page()
    errors = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.set_content(HOST)
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
    doc = render.document(uuid.uuid4(), {"component_id": "c1", "component_type": "card", "data": {
        "title": "Docs", "actions": [{"label": "Open", "action": "navigate",
                                      "url": "https://example.com/docs"}]}})
    frame = show(page, doc)
    frame.locator("button", has_text="Open").click()
    page.wait_for_function("window.received.length > 0")
    assert page.evaluate("window.received") == [{"type": "MCP_UI_ACTION", "action": {
        "type": "NAVIGATE", "url": "https://example.com/docs", "target": "_blank"}}]
    assert not [e for e in errors if "Content Security Policy" in e], errors
