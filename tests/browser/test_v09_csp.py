"""The v0.9 renderer's styling works under the strict CSP (style-src 'self', no 'unsafe-inline').

All 30 official v0.9 examples (tests/v09/official/examples/) go from the agent through the
server to the page: no CSP violation may be reported while they render, and the properties the
renderer sets per component (Image object-fit, Text weight as flex, Row/Column alignment)
actually apply, as computed styles; a markdown table in a Text keeps its alignment without a
style attribute.
"""

import json
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import open_client, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.live, pytest.mark.django_db(transaction=True)]

EXAMPLES = sorted((Path(__file__).parents[1] / "v09" / "official" / "examples").glob("*.json"))
BASIC = "https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"

STYLED = [
    {"version": "v0.9", "createSurface": {"surfaceId": "styled", "catalogId": BASIC}},
    {"version": "v0.9", "updateComponents": {"surfaceId": "styled", "components": [
        {"id": "root", "component": "Row", "children": ["left", "right", "pic", "table"],
         "justify": "spaceBetween", "align": "center"},
        {"id": "left", "component": "Text", "text": "weighted 2", "weight": 2},
        {"id": "right", "component": "Text", "text": "weighted 1", "weight": 1},
        {"id": "pic", "component": "Image", "url": "/static/a2ui/demo/chart.svg",
         "description": "contained", "fit": "contain"},
        {"id": "table", "component": "Text",
         "text": "| name | count |\n| :--- | ----: |\n| **a** | 1 |"},
    ]}},
]


def test_official_examples_render_without_csp_violations(page, agent):
    assert len(EXAMPLES) == 30
    sid = open_client(page)
    csp = page.evaluate("""async () => (await fetch(location.href)).headers
        .get('content-security-policy')""")
    assert "style-src 'self';" in csp and "unsafe-inline" not in csp

    surface_ids = []
    for path in EXAMPLES:
        messages = json.loads(path.read_text(encoding="utf-8"))["messages"]
        surface_ids.append(messages[0]["createSurface"]["surfaceId"])
        agent.call("surfaces", sid, messages)
    agent.call("surfaces", sid, STYLED)

    # Rendered: each surface's root component is there (not the loading slot), with content.
    page.wait_for_function("""(ids) => ids.every((id) => {
        const root = document.querySelector(`[data-surface-id="${id}"] a2ui-surface`)?.shadowRoot;
        return root && !root.querySelector('slot[name=loading]')
            && root.querySelectorAll('*').length > 2 && root.textContent.trim() !== '';
    })""", arg=[*surface_ids, "styled"])
    styled = page.locator('[data-surface-id="styled"] a2ui-surface')
    expect(styled).to_contain_text("weighted 2")
    screenshot(page, "v09-examples", full_page=True)

    computed = page.evaluate("""() => {
        const root = document.querySelector('[data-surface-id="styled"] a2ui-surface').shadowRoot;
        const style = (sel) => getComputedStyle(root.querySelector(sel));
        const texts = [...root.querySelectorAll('.a2ui-text')];
        return {
            flex: texts.slice(0, 2).map((t) => getComputedStyle(t).flexGrow),
            cellAlign: [...root.querySelectorAll('td')].map((c) => c.getAttribute('align')),
            fit: style('img').objectFit,
            justify: style('a2ui-basic-row').justifyContent,
            align: style('a2ui-basic-row').alignItems,
            styleAttributes: [...root.querySelectorAll('.a2ui-text, img')]
                .filter((e) => e.hasAttribute('style') && !e.style.length).length,
        };
    }""")
    assert computed == {"flex": ["2", "1"], "cellAlign": ["left", "right"], "fit": "contain",
                        "justify": "space-between",
                        "align": "center", "styleAttributes": 0}

    # Every example rendered and not one inline style (or anything else) was blocked.
    assert page.evaluate("window.__cspViolations") == []
    assert not [e for e in page.watch.errors if "Content Security Policy" in e]
