"""Script in every text field the agent controls renders inert in a real browser.

Each payload tries a different way in: tags with event handlers, script elements, markup that
loads from a foreign origin, entity-encoded markup (which must come out as visible text, not as
markup), attribute breakouts and a javascript: link. A payload that ran would set
``window.__xss``, open a dialog, or make a request to evil.example; none of that may happen, and
the marker text of each field must be visible as text.
"""

import re

import pytest
from playwright.sync_api import expect

from a2ui.core.errors import DomainError
from tests.browser.conftest import open_client, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.live, pytest.mark.django_db(transaction=True)]

ENCODED = "&lt;img src=x onerror=alert(1)&gt;"  # must show up as the literal text "<img ...>"
SHOWN = "<img src=x onerror=alert(1)>"


def payload(marker):
    return (
        f'{marker} <img src=x onerror="window.__xss=1;alert(1)">'
        f"<script>window.__xss=1</script>"
        f'<svg onload="window.__xss=1"><image href="https://evil.example/s.png"/></svg>'
        f'<iframe src="https://evil.example/f"></iframe><img src="https://evil.example/i.png">'
        f'"><b onmouseover="window.__xss=1">x</b>'
        f'<a href="javascript:window.__xss=1">link</a> {ENCODED}'
    )


def markers(*names):
    return {name: f"XSS-{name}" for name in names}


def test_payloads_in_every_text_field_render_inert(page, agent):
    sid = open_client(page)
    m = markers(
        "card-title", "card-desc", "card-label", "card-value", "card-action", "table-title",
        "table-header", "table-cell", "form-title", "form-label", "form-option", "form-help",
        "form-submit", "chart-title", "chart-label", "chart-series", "chart-axis", "pie-label",
        "md", "code", "code-title", "image-alt", "image-caption", "alert-title", "alert-message",
        "step", "step-desc", "prompt", "confirm-title", "confirm-desc", "progress",
        "stream", "toast-title", "toast-message",
    )
    P = {name: payload(marker) for name, marker in m.items()}
    render = [
        ("x-card", "card", {
            "title": P["card-title"], "description": P["card-desc"],
            "sections": [{"label": P["card-label"], "value": P["card-value"]}],
            "actions": [{"label": P["card-action"], "action": "navigate", "url": "/a2ui/"}],
        }),
        ("x-table", "table", {
            "title": P["table-title"],
            "headers": [{"key": "a", "label": P["table-header"], "sortable": True}],
            "rows": [{"a": P["table-cell"]}],
        }),
        ("x-form", "form", {
            "title": P["form-title"], "submit_label": P["form-submit"],
            "fields": [{"name": "f", "type": "text", "label": P["form-label"],
                        "help": P["form-help"], "placeholder": P["form-help"]},
                       {"name": "g", "type": "select", "label": "choose",
                        "options": [P["form-option"]]}],
        }),
        ("x-bar", "chart", {
            "chart_type": "bar", "title": P["chart-title"],
            "x_axis": {"label": P["chart-axis"], "values": [P["chart-label"], "b"]},
            "y_axis": {"label": P["chart-axis"]},
            "series": [{"name": P["chart-series"], "data": [1, 2]}],
        }),
        ("x-pie", "chart", {
            "chart_type": "pie", "title": "pie",
            "x_axis": {"values": [P["pie-label"], "other"]},
            "series": [{"name": P["chart-series"], "data": [1, 2]}],
        }),
        ("x-md", "markdown", {
            "content": f"# {P['md']}\n\n**{P['md']}** [click](javascript:window.__xss=1) "
                       "[ok](https://evil.example/page)\n\n<script>window.__xss=1</script>\n\n"
                       f"```html\n{P['md']}\n```",
        }),
        ("x-code", "code", {"code": P["code"], "title": P["code-title"],
                            "language": '"><img src=x onerror=window.__xss=1>'}),
        ("x-image", "image", {"url": "/static/a2ui/demo/chart.svg", "alt": P["image-alt"],
                              "caption": P["image-caption"], "title": P["image-caption"]}),
        ("x-alert", "alert", {"severity": "error", "title": P["alert-title"],
                              "message": P["alert-message"], "dismissible": True}),
        ("x-steps", "steps", {"steps": [{"label": P["step"], "status": "active",
                                         "description": P["step-desc"]}]}),
    ]
    for component_id, kind, data in render:
        agent.call("render", sid, kind, data, component_id=component_id)
    agent.call("progress", sid, "x-task", "determinate", value=10, total=100,
               message=P["progress"])
    agent.call("progress", sid, "x-stream", "streaming", message=P["stream"])
    agent.call("toast", sid, P["toast-title"], level="warning", message=P["toast-message"],
               duration_ms=0)
    answer = agent.start("request_input", sid, "select", P["prompt"],
                         options=[P["form-option"], "plain"])
    decision = agent.start("confirm", sid, P["confirm-title"], description=P["confirm-desc"],
                           timeout_seconds=300)

    root = page.locator("[data-a2ui-client]")
    for name, marker in m.items():
        if name != "image-alt":  # an attribute, checked below
            expect(root.get_by_text(marker).first, name).to_be_attached()
    expect(root.locator('[data-component-id="x-image"] img')).to_have_attribute(
        "alt", re.compile(m["image-alt"]))
    for name in ("card-title", "table-cell", "md", "prompt", "confirm-title", "toast-message",
                 "alert-message", "step"):
        expect(root.get_by_text(m[name]).first, name).to_be_visible()
    # Entity-encoded markup is shown as the text it encodes, not parsed.
    expect(root.locator('[data-component-id="x-card"] h2')).to_contain_text(SHOWN)
    expect(root.locator('[data-component-id="x-table"] td')).to_contain_text(SHOWN)
    expect(root.locator("[data-a2ui-toasts]")).to_contain_text(SHOWN)

    # Hover and click what could carry a handler, and the links.
    for target in (root.get_by_text(m["card-title"]), root.get_by_text(m["table-cell"]),
                   root.get_by_text(m["alert-title"])):
        target.first.hover()
    md = root.locator('[data-component-id="x-md"]')
    expect(md.locator("a[href^='javascript']")).to_have_count(0)
    md.get_by_text("click", exact=False).first.click()
    screenshot(page, "xss", full_page=True)

    # The prompts still work and hand back exactly what was chosen.
    confirm = page.get_by_role("dialog", name=re.compile(m["confirm-title"]))
    confirm.get_by_role("button", name="Reject").click()
    assert decision.result(15)["approved"] is False
    dialog = page.get_by_role("dialog", name=re.compile(m["prompt"]))
    option = dialog.locator("option", has_text=m["form-option"])
    dialog.get_by_role("combobox").select_option(option.get_attribute("value"))
    dialog.get_by_role("button", name="Send").click()
    assert m["form-option"] in answer.result(15)

    dangerous = page.evaluate("""() => {
        const root = document.querySelector('[data-a2ui-client]');
        const found = [];
        for (const el of root.querySelectorAll('*')) {
            if (['SCRIPT', 'IFRAME', 'OBJECT', 'EMBED'].includes(el.tagName)) found.push(el.tagName);
            if (el.tagName === 'IMG' && !el.src.startsWith(location.origin)) found.push(el.src);
            for (const attr of el.attributes) {
                if (/^on/i.test(attr.name)) found.push(`${el.tagName} ${attr.name}`);
                if (/^\\s*javascript:/i.test(attr.value)) found.push(`${el.tagName} ${attr.name}`);
            }
        }
        return found;
    }""")
    assert dangerous == []
    assert page.evaluate("window.__xss") is None
    assert page.watch.dialogs == []
    assert page.watch.foreign_requests() == []
    assert page.evaluate("window.__cspViolations") == []


def test_dangerous_urls_are_refused_before_they_reach_the_browser(page, agent):
    sid = open_client(page)
    for call in (
        lambda: agent.call("navigate", sid, "javascript:window.__xss=1"),
        lambda: agent.call("render", sid, "image", {"url": "javascript:window.__xss=1"}),
        lambda: agent.call("render", sid, "card", {"title": "t", "actions": [
            {"label": "go", "action": "navigate", "url": "java\tscript:window.__xss=1"}]}),
        lambda: agent.call("render", sid, "image", {
            "url": "data:image/svg+xml,<svg onload='window.__xss=1'/>"}),
    ):
        with pytest.raises(DomainError) as err:
            call()
        assert err.value.code == -32602
    agent.call("render", sid, "card", {"title": "still fine"})
    expect(page.get_by_role("heading", name="still fine")).to_be_visible()
    assert page.evaluate("window.__xss") is None
    assert page.watch.dialogs == []
