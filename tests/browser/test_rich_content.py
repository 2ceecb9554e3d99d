"""Code highlighting (highlight.js) and charts (Chart.js) in Chromium, as a person sees them.

Both libraries are bundled in a2ui/static/a2ui/vendor/ and loaded on first use through the
import map: a page with neither never fetches them, and nothing comes from another origin.
Highlighted code reads exactly as the source (markup in it stays text), an unknown language
stays plain, Markdown's fenced blocks are highlighted too. Charts are Chart.js canvases named
by a summary, with an HTML legend and a visually hidden data table, drawn at their displayed
size (so 12 px text stays 12 px at 390 px wide), and the strict CSP sees no violation.
"""

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import drawn_chart, open_client, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.live, pytest.mark.django_db(transaction=True)]

PYTHON = "import httpx\n\ndef fetch(n=3):\n    # the data\n    return httpx.get('/data', n)\n"
# Server strings are HTML-safe text (tags stripped, entities kept): markup arrives as entities
# and the client decodes them to text before highlighting.
HOSTILE = "const s = '&lt;script&gt;window.__xss=1&lt;/script&gt;';\n&lt;img src=x onerror=\"window.__xss=2\"&gt;\n"
HOSTILE_TEXT = "const s = '<script>window.__xss=1</script>';\n<img src=x onerror=\"window.__xss=2\">\n"
BAR = {"chart_type": "bar", "title": "Calls per day",
       "x_axis": {"label": "Day", "values": ["Monday", "Tuesday", "Wednesday", "Thursday",
                                             "Friday", "Saturday", "Sunday"]},
       "y_axis": {"label": "Calls"},
       "series": [{"name": "Successful", "data": [1200, 1500, 1800, 1700, 1650, 400, 380]},
                  {"name": "Failed", "data": [5, 3, 8, 4, 6, 1, 0]}]}
PIE = {"chart_type": "pie", "title": "Calls by category",
       "x_axis": {"values": ["research", "trading", "analytics"]},
       "series": [{"name": "Calls", "data": [45, 30, 25]}]}


def vendor_requests(page):
    return sorted({url.rsplit("/", 1)[1] for url in page.watch.requests if "/a2ui/vendor/" in url})


def test_code_is_highlighted_by_highlight_js_and_reads_as_its_source(page, agent):
    sid = open_client(page)
    assert not [u for u in vendor_requests(page) if u.startswith(("highlight", "chart"))]
    agent.call("render", sid, "code", {"language": "python", "code": PYTHON}, component_id="py")
    agent.call("render", sid, "code", {"language": "js", "code": HOSTILE}, component_id="js")
    agent.call("render", sid, "code", {"language": "brainfudge", "code": "+[-->+<]"},
               component_id="unknown")
    agent.call("render", sid, "markdown", {"content": "```sql\nSELECT 1 FROM t;\n```"},
               component_id="md")

    py = page.locator('[data-component-id="py"] pre code')
    expect(py).to_have_attribute("data-highlighted", "python")
    expect(py.locator(".hljs-keyword")).to_have_text(["import", "def", "return"])
    expect(py.locator(".hljs-string")).to_have_text(["'/data'"])
    expect(py.locator(".hljs-comment")).to_have_text(["# the data"])
    expect(py.locator(".hljs-title.function_")).to_have_text(["fetch"])
    assert py.evaluate("el => el.textContent") == PYTHON
    # The keyword colour comes from a2ui.css (the theme), not from a style attribute.
    assert py.locator(".hljs-keyword").first.evaluate(
        "el => getComputedStyle(el).color") == "rgb(255, 123, 114)"
    assert page.locator("[data-component-id] [style]").count() == 0

    js = page.locator('[data-component-id="js"] pre code')
    expect(js).to_have_attribute("data-highlighted", "js")
    assert js.evaluate("el => el.textContent") == HOSTILE_TEXT  # markup shown as text
    assert js.locator("script, img").count() == 0
    assert js.evaluate("el => [...el.querySelectorAll('*')].every((e) => e.localName === 'span')")

    unknown = page.locator('[data-component-id="unknown"] pre code')
    expect(unknown).to_have_text("+[-->+<]")
    page.wait_for_timeout(200)  # the bundle is loaded already; nothing more will happen
    assert unknown.get_attribute("data-highlighted") is None
    assert unknown.locator("span").count() == 0

    sql = page.locator('[data-component-id="md"] pre code.language-sql')
    expect(sql).to_have_attribute("data-highlighted", "sql")
    expect(sql.locator(".hljs-keyword").first).to_have_text("SELECT")

    assert page.evaluate("window.__xss") is None
    assert page.evaluate("window.__cspViolations") == []
    assert page.watch.errors == []
    assert page.watch.foreign_requests() == []
    assert "highlight.js" in vendor_requests(page)


def test_charts_are_chart_js_canvases_with_text_alternatives(page, agent):
    sid = open_client(page)
    assert "chart.js" not in vendor_requests(page)  # loaded on the first chart only
    agent.call("render", sid, "chart", BAR, component_id="bar")
    agent.call("render", sid, "chart", PIE, component_id="pie")
    bar = page.locator('[data-component-id="bar"]')
    pie = page.locator('[data-component-id="pie"]')

    assert drawn_chart(bar) == {"type": "bar", "labels": BAR["x_axis"]["values"],
                                "data": [s["data"] for s in BAR["series"]]}
    assert drawn_chart(pie) == {"type": "pie", "labels": ["research", "trading", "analytics"],
                                "data": [[45, 30, 25]]}
    # Text alternatives: the canvas is an image named by a summary; the numbers are in a table.
    expect(bar.get_by_role("img", name="Calls per day: bar chart of Successful, Failed")).to_be_visible()
    expect(bar.get_by_role("table", name="Calls per day")).to_be_attached()
    expect(bar.locator("table tbody tr").first).to_have_text("Monday1,2005")
    expect(bar.locator("table thead th")).to_have_text(["Day", "Successful", "Failed"])
    expect(pie.locator("table tbody td")).to_have_text(["45", "45%", "30", "30%", "25", "25%"])
    expect(pie.locator(".a2ui-chart-legend li")).to_have_text(["research", "trading", "analytics"])

    # Something was drawn: the canvas has opaque pixels in the series' colours.
    painted = bar.locator("canvas").evaluate("""(c) => {
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i] > 200) n += 1;
        return n;
    }""")
    assert painted > 1000
    # Theme: the first series uses the client's --a2ui-s0.
    colour = bar.locator("canvas").evaluate("""async (c) => {
        const { Chart } = await import('a2ui-vendor/chart');
        return Chart.getChart(c).data.datasets[0].backgroundColor;
    }""")
    assert colour == page.locator("[data-a2ui-client]").evaluate(
        "el => getComputedStyle(el).getPropertyValue('--a2ui-s0').trim()")

    assert page.evaluate("window.__cspViolations") == []
    assert page.watch.errors == []
    assert page.watch.foreign_requests() == []
    screenshot(page, "charts-1280", full_page=True)


@pytest.mark.parametrize("width", [390, 1280])
def test_chart_text_stays_readable_at_narrow_widths(page, agent, width):
    page.set_viewport_size({"width": width, "height": 844})
    sid = open_client(page)
    agent.call("render", sid, "chart", BAR, component_id="bar")
    bar = page.locator('[data-component-id="bar"]')
    drawn_chart(bar)
    geometry = bar.locator("canvas").evaluate("""async (c) => {
        const { Chart } = await import('a2ui-vendor/chart');
        const chart = Chart.getChart(c);
        const box = c.getBoundingClientRect();
        return { cssWidth: box.width, drawnWidth: chart.width, right: box.right,
                 tick: chart.scales.x.ticks.length ? chart.scales.x._resolveTickFontOptions(0).size : 0,
                 ratio: c.width / chart.width / devicePixelRatio };
    }""")
    # Drawn at the size it is shown (not a big canvas scaled down), with 12 px tick labels.
    assert abs(geometry["cssWidth"] - geometry["drawnWidth"]) <= 1, geometry
    assert geometry["ratio"] == pytest.approx(1), geometry
    assert geometry["tick"] >= 12, geometry
    assert geometry["right"] <= width, geometry
    legend_size = bar.locator(".a2ui-chart-legend").evaluate(
        "el => parseFloat(getComputedStyle(el).fontSize)")
    assert legend_size >= 12
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    screenshot(page, f"chart-{width}")


def test_replaced_charts_are_destroyed(page, agent):
    """Chart.js keeps every chart in a registry: charts of re-rendered components are freed."""
    sid = open_client(page)
    agent.call("render", sid, "chart", BAR, component_id="bar")
    bar = page.locator('[data-component-id="bar"]')
    drawn_chart(bar)
    for i in range(3):
        agent.call("update", sid, "bar", {"title": f"Calls, take {i}"})
        expect(bar.get_by_role("heading")).to_have_text(f"Calls, take {i}")
        assert drawn_chart(bar)["labels"] == BAR["x_axis"]["values"]
    live = page.evaluate("""async () => {
        const { Chart } = await import('a2ui-vendor/chart');
        return Object.values(Chart.instances).map((c) => c.canvas.isConnected);
    }""")
    assert live == [True]
