"""What a person's browser is sent by an agent it cannot trust: numbers, and images in text.

* A chart with numbers at the ends of the double range (``1e308``, ``-1e308``) froze the tab
  for more than 45 s, and again on every reload since the session's state is replayed. The
  server refuses such numbers now (tests/protocol/test_drawn.py), but sessions stored before
  are still replayed: the chart is put into the database directly, as old data would be, and
  the page must stay responsive, show the chart (or its empty state) and reload the same.
* Markdown images in agent text (``![i](x)``) made the browser fetch what the agent chose (two
  same-origin GETs for a relative ``x``): they are never loaded, wherever agent text is
  rendered as Markdown (a markdown component, the chat, a plan): a safe address becomes a
  link, an unsafe one its alt text.
"""

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import open_client

pytestmark = [pytest.mark.browser, pytest.mark.live, pytest.mark.django_db(transaction=True)]

HOSTILE_CHARTS = {
    "pie": {"chart_type": "pie", "series": [{"name": "s", "data": [1e308, -1e308, None]}]},
    "bar": {"chart_type": "bar", "series": [{"name": "s", "data": [1e308, -1e308, None]},
                                            {"name": "t", "data": [5e-324, -1.7976931348623157e308]}]},
    "line": {"chart_type": "line", "x_axis": {"values": [1e308, -1e308, 3]},
             "series": [{"name": "s", "data": [-1e308, 1e308, 0]}]},
    # More points than any chart is drawn with: the client draws at most its bound.
    "many": {"chart_type": "line", "series": [{"name": "s", "data": list(range(20000))}]},
}
RESPONSIVE_MS = 30_000  # generous: the page must answer at all (it did not for 45 s and more)


def store_components(sid, charts):
    """Rows as a server before the fix stored them (no validation on the way)."""
    from a2ui.models import RenderedComponent

    for position, (cid, data) in enumerate(charts.items()):
        RenderedComponent.objects.create(
            session_id=sid, component_id=cid, component_type="chart", data=data,
            metadata={"priority": "normal", "position": "main"}, position=position + 1)


def assert_charts_render(page, charts):
    for cid in charts:
        figure = page.locator(f'[data-component-id="{cid}"] figure.a2ui-chart')
        expect(figure).to_have_attribute("data-chart-state", "drawn", timeout=RESPONSIVE_MS)
    # The page still answers (a frozen main thread cannot).
    assert page.evaluate("1 + 1", ) == 2


def test_stored_hostile_charts_render_and_reload_without_freezing_the_tab(page, agent):
    sid = open_client(page)
    store_components(sid, HOSTILE_CHARTS)
    page.reload()
    expect(page.locator("[data-a2ui-client]")).to_have_attribute(
        "data-connection", "connected", timeout=RESPONSIVE_MS)
    assert_charts_render(page, HOSTILE_CHARTS)
    drawn = page.locator('[data-component-id] canvas').evaluate_all("""async (canvases) => {
        const { Chart } = await import('a2ui-vendor/chart');
        return canvases.map((c) => Chart.getChart(c).data.datasets.map((d) => d.data));
    }""")
    values = [v for chart in drawn for dataset in chart for v in dataset if v is not None]
    assert values and all(abs(v) <= 1e15 for v in values)  # clamped to the drawn bound
    assert all(len(d) <= 1000 for chart in drawn for d in chart)  # points bounded per series
    pie = drawn[0][0]
    assert min(pie) >= 0  # a pie's slices are non-negative
    page.reload()
    expect(page.locator("[data-a2ui-client]")).to_have_attribute(
        "data-connection", "connected", timeout=RESPONSIVE_MS)
    assert_charts_render(page, HOSTILE_CHARTS)
    assert page.watch.errors == []


IMAGES = "![i](x) and ![j](https://evil.example/p.png) and ![k](javascript:alert(1)) end"
BASIC = "https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"


def image_requests(page):
    return [url for url in page.watch.requests
            if url.rstrip("/").endswith("/x") or "evil.example" in url]


def test_markdown_images_in_agent_text_are_never_loaded(page, agent):
    sid = open_client(page)
    agent.call("render", sid, "markdown", {"content": IMAGES}, component_id="md")
    agent.call("agui_event", sid, {"type": "TEXT_MESSAGE", "sender": "Helper", "content": IMAGES})
    agent.call("agui_event", sid, {"type": "PLAN_CARD", "id": "p1", "title": "Plan",
                                   "content": IMAGES, "status": "ACTIVE"})
    agent.call("surfaces", sid, [
        {"version": "v0.9", "createSurface": {"surfaceId": "s", "catalogId": BASIC}},
        {"version": "v0.9", "updateComponents": {"surfaceId": "s", "components": [
            {"id": "root", "component": "Text", "text": IMAGES}]}}])
    boxes = [page.locator('[data-component-id="md"] .a2ui-markdown'),
             page.locator('[data-a2ui-chat] [data-role="agent"] .a2ui-markdown'),
             page.locator('[data-plan-id="p1"] .a2ui-markdown'),
             page.locator("a2ui-surface")]
    for box in boxes:
        expect(box).to_contain_text("end")
    page.wait_for_timeout(500)  # lazy images would be fetched by now
    assert image_requests(page) == []
    assert page.evaluate("document.querySelectorAll('img').length") == 0
    for box in boxes:
        # A safe address is a link to the image (fetched only if the person follows it); an
        # unsafe one was made "#" by the server (or stays text where the client refuses it).
        expect(box.get_by_role("link", name="i")).to_have_attribute("href", "x")
        expect(box.get_by_role("link", name="j")).to_have_attribute(
            "href", "https://evil.example/p.png")
        expect(box.get_by_role("link", name="j")).to_have_attribute("rel", "noopener noreferrer")
        expect(box).to_contain_text("k")
        expect(box.locator('a[href*="javascript" i]')).to_have_count(0)
        expect(box.locator("img")).to_have_count(0)
    assert page.evaluate("window.__cspViolations") == []
    assert page.watch.errors == []
