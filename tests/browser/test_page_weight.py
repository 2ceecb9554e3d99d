"""Page weight: the client page served as production serves it (``collectstatic`` with
``a2ui.web.storage``, WhiteNoise), counted by Chromium's own network events.

An empty session's first paint must stay under 150 KB on the wire, with every static file
compressed and cacheable forever; Chart.js, highlight.js and markdown-it arrive only when a
component needs them (docs/performance.md, "Page weight").
"""

import subprocess
import sys

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import (
    ROOT,
    DaphneServer,
    drawn_chart,
    flush_live_redis,
    open_client,
    server_env,
)

pytestmark = [pytest.mark.browser, pytest.mark.live, pytest.mark.django_db(transaction=True)]

BUDGET = 150 * 1024  # bytes on the wire for an empty session's first paint
LAZY = tuple(f"a2ui/vendor/{name}." for name in ("chart", "highlight", "markdown-it"))  # vendored modules a component loads on demand
BAR = {"chart_type": "bar", "title": "Calls per day",
       "x_axis": {"label": "Day", "values": ["Mon", "Tue", "Wed"]},
       "series": [{"name": "Calls", "data": [3, 5, 4]}]}


@pytest.fixture(scope="module")
def server(live_services, django_db_setup, tmp_path_factory):  # noqa: F811 (the module's own)
    """Daphne with the static files collected, hashed and compressed, served by WhiteNoise."""
    flush_live_redis(live_services)
    env = dict(server_env(live_services), DJANGO_STATIC_COLLECTED="1",
               DJANGO_STATIC_ROOT=str(tmp_path_factory.mktemp("static")))
    # Without the API's own files (Swagger UI, ReDoc, DRF's browsable API: 30 MB that brotli
    # takes minutes to compress); the client page and the admin need none of them.
    subprocess.run([sys.executable, str(ROOT / "manage.py"), "collectstatic", "--noinput",
                    "-v", "0", "-i", "redoc", "-i", "swagger-ui-dist", "-i", "rest_framework"],
                   cwd=ROOT, env=env, check=True, stdin=subprocess.DEVNULL)
    server = DaphneServer(env, name="collected").wait_ready()
    yield server
    server.cleanup()


class Wire:
    """Every response of a page with its bytes on the wire (DevTools' encodedDataLength)."""

    def __init__(self, page):
        self.responses, self.finished = {}, {}
        cdp = page.context.new_cdp_session(page)
        cdp.send("Network.enable")
        cdp.on("Network.responseReceived",
               lambda e: self.responses.__setitem__(e["requestId"], e["response"]))
        cdp.on("Network.loadingFinished",
               lambda e: self.finished.__setitem__(e["requestId"], e["encodedDataLength"]))

    def rows(self):
        return [(r["url"], {k.lower(): v for k, v in r["headers"].items()},
                 self.finished.get(rid, 0))
                for rid, r in self.responses.items() if r["url"].startswith("http")]

    def total(self):
        return sum(size for _url, _headers, size in self.rows())

    def files(self):
        """Paths under /static/ (``a2ui/vendor/chart.<hash>.js``)."""
        return [url.split("/static/", 1)[1] for url, _h, _s in self.rows() if "/static/" in url]


def test_an_empty_sessions_first_paint_is_small_compressed_and_cached(page, agent):
    wire = Wire(page)
    open_client(page)
    page.wait_for_load_state("networkidle")
    total = wire.total()
    assert 0 < total < BUDGET, f"{total} bytes on the wire: {wire.rows()}"
    assert not [name for name in wire.files() if name.startswith(LAZY)], wire.files()
    static = [(url, headers) for url, headers, _size in wire.rows() if "/static/" in url]
    assert len(static) > 10
    for url, headers in static:
        assert headers.get("content-encoding") in ("br", "gzip"), url
        assert "immutable" in headers.get("cache-control", ""), (url, headers)
        assert "max-age=315360000" in headers["cache-control"], url
    # The favicon the browser asks for by itself is no 404.
    assert page.request.get("/favicon.ico").ok


def test_a_chart_loads_its_chunk_on_demand_and_draws(page, agent):
    wire = Wire(page)
    sid = open_client(page)
    page.wait_for_load_state("networkidle")
    assert not [name for name in wire.files() if name.startswith("a2ui/vendor/chart.")]
    agent.call("render", sid, "chart", BAR, component_id="bar")
    bar = page.locator('[data-component-id="bar"]')
    assert drawn_chart(bar) == {"type": "bar", "labels": ["Mon", "Tue", "Wed"],
                                "data": [[3, 5, 4]]}
    loaded = [name for name in wire.files() if name.startswith("a2ui/vendor/chart.")]
    assert loaded and all(name.count(".") == 2 for name in loaded), loaded  # chart.<hash>.js


def test_markdown_is_rendered_once_markdown_it_arrives(page, agent):
    wire = Wire(page)
    sid = open_client(page)
    agent.call("render", sid, "markdown", {"content": "Some **bold** text"}, component_id="md")
    expect(page.locator('[data-component-id="md"] strong')).to_have_text("bold")
    expect(page.locator('[data-component-id="md"] .a2ui-md-pending')).to_have_count(0)
    assert [name for name in wire.files() if name.startswith("a2ui/vendor/markdown-it.")]
