"""Tier 2, browser: Debian's Chromium (Playwright for Python) against a live Daphne.

Each test module shares one Daphne process (PostgreSQL + Redis, started with the same
environment as tests/live) and one Chromium; each test gets a fresh browser context signed in
as a new person (a session cookie made with the ORM), and an agent of its own on the agent
WebSocket (``a2ui.sdk.AgentClient`` on a background event loop, so the tests stay synchronous
like Playwright's sync API). Rows are committed (``transactional_db``) and flushed after each
test; contexts and agent sockets close before that.

Chromium is Debian's ``/usr/bin/chromium`` (never a downloaded one). Without it the tests skip,
unless ``A2UI_REQUIRE_LIVE=1`` or ``CI`` is set: then they fail loudly.

Screenshots of the main screens go to ``screenshots/`` at the repository root (gitignored).
"""

import asyncio
import itertools
import os
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.live.conftest import (  # noqa: F401 (fixtures re-used here)
    ROOT,
    DaphneServer,
    _require_live,
    django_db_setup,
    flush_live_redis,
    live_env,
    live_services,
)

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--no-first-run", "--disable-sync",
]
SCREENSHOTS = ROOT / "screenshots"
TIMEOUT = 15.0  # seconds, for the agent side; Playwright's expect gets the same
HERE = Path(__file__).parent
ASYNC_UNSAFE = "DJANGO_ALLOW_ASYNC_UNSAFE"
_names = itertools.count(1)


def pytest_collection_modifyitems(config, items):
    for item in items:
        if HERE in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.browser)
            item.add_marker(pytest.mark.live)


# The browser ---------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def chromium_path():
    if not os.access(CHROMIUM, os.X_OK):
        message = f"browser tests need Debian's Chromium at {CHROMIUM} (apt-get install chromium)"
        if _require_live():
            pytest.fail(message + " (A2UI_REQUIRE_LIVE/CI is set, so this is an error)",
                        pytrace=False)
        pytest.skip(message + " (set A2UI_REQUIRE_LIVE=1 to make this an error)")
    return CHROMIUM


@pytest.fixture(scope="module")
def browser(chromium_path):
    """Chromium for the module.

    Playwright's sync API keeps its event loop marked as running in this thread, so Django
    would refuse the ORM calls of the fixtures (and pytest-django's flush); the tests are
    synchronous, so DJANGO_ALLOW_ASYNC_UNSAFE is set while the browser is up (never for the
    servers: ``server_env`` removes it).
    """
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=TIMEOUT * 1000)
    previous = os.environ.get(ASYNC_UNSAFE)
    os.environ[ASYNC_UNSAFE] = "1"
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium_path, args=CHROMIUM_ARGS)
            yield browser
            browser.close()
    finally:
        if previous is None:
            os.environ.pop(ASYNC_UNSAFE, None)
        else:
            os.environ[ASYNC_UNSAFE] = previous


def server_env(redis_url):
    """tests/live's server environment, without the browser's DJANGO_ALLOW_ASYNC_UNSAFE."""
    env = live_env(redis_url)
    env.pop(ASYNC_UNSAFE, None)
    return env


# The server ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def server(live_services, django_db_setup):  # noqa: F811
    """One Daphne process for the whole module, on the session's test database."""
    flush_live_redis(live_services)
    server = DaphneServer(server_env(live_services), name="browser").wait_ready()
    yield server
    server.cleanup()


@pytest.fixture
def person(transactional_db):
    from django.contrib.auth import get_user_model

    n = next(_names)
    return get_user_model().objects.create_user(f"person{n}", f"p{n}@example.com", "pw-person-1")


@pytest.fixture
def agent(request, server, transactional_db):
    """The only active agent (so the stream-token endpoint picks it), connected and listening."""
    from a2ui import tokens

    record, key = tokens.create_agent(f"browser-agent-{next(_names)}",
                                      display_name="Browser Agent")
    driver = AgentThread(server, key)
    driver.record, driver.key = record, key  # the Agent row and its key (e.g. for /mcp)
    yield driver
    driver.close()


class PageWatch:
    """Everything a page did that a test may want to assert on."""

    def __init__(self, page, origin):
        self.origin = origin
        self.console = []
        self.errors = []  # console errors and uncaught exceptions
        self.dialogs = []
        self.requests = []
        page.on("console", self._console)
        page.on("pageerror", lambda exc: self.errors.append(f"pageerror: {exc}"))
        page.on("dialog", self._dialog)
        page.on("request", lambda req: self.requests.append(req.url))

    def _console(self, msg):
        self.console.append(f"{msg.type}: {msg.text}")
        if msg.type == "error":
            self.errors.append(msg.text)

    def _dialog(self, dialog):
        self.dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    def foreign_requests(self):
        """Requests to anything but the server's own origin (data: and blob: are local)."""
        own = urlsplit(self.origin).netloc
        return [url for url in self.requests
                if urlsplit(url).scheme not in ("data", "blob") and urlsplit(url).netloc != own]


# Set before any page script runs (Playwright's init scripts are not subject to the page's CSP).
INIT_SCRIPT = """
window.__cspViolations = [];
document.addEventListener('securitypolicyviolation', (e) => {
  window.__cspViolations.push(`${e.violatedDirective} ${e.blockedURI} ${e.sourceFile}:${e.lineNumber}`);
});
"""


@pytest.fixture
def context(request, browser, server, person, transactional_db):
    """A browser context signed in as ``person`` (the session cookie, made with the ORM)."""
    from django.test import Client

    django_client = Client()
    django_client.force_login(person)
    ctx = browser.new_context(base_url=server.url, viewport={"width": 1280, "height": 900})
    ctx.add_cookies([{"name": "sessionid", "value": django_client.cookies["sessionid"].value,
                      "url": server.url}])
    ctx.add_init_script(INIT_SCRIPT)
    request.node._live_servers = [server]
    yield ctx
    ctx.close()


@pytest.fixture
def page(request, context, server):
    page = context.new_page()
    page.watch = request.node._page_watch = PageWatch(page, server.url)
    yield page


def open_client(page, path="/a2ui/"):
    """Load the client page and wait for its session; return the session id."""
    from playwright.sync_api import expect

    page.goto(path)
    expect(page.locator("[data-a2ui-client]")).to_have_attribute("data-connection", "connected")
    return page.evaluate("sessionStorage.getItem('a2ui.session_id')")


# Chart.js's own record of a drawn chart: the instance on the component's canvas, read through
# the page's import map (the same module instance the client loaded).
CHART_OF = """async (canvas) => {
  const { Chart } = await import('a2ui-vendor/chart');
  const chart = Chart.getChart(canvas);
  return chart && { type: chart.config.type, labels: chart.data.labels,
                    data: chart.data.datasets.map((d) => d.data) };
}"""


def drawn_chart(component):
    """Wait until the chart in ``component`` is drawn; its type, labels and data as Chart.js has them."""
    from playwright.sync_api import expect

    expect(component.locator("figure.a2ui-chart")).to_have_attribute("data-chart-state", "drawn")
    return component.locator("canvas").evaluate(CHART_OF)


def screenshot(page, name, **kwargs):
    SCREENSHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), **kwargs)


# The agent -----------------------------------------------------------------------------------

NOTIFICATIONS = ("session.opened", "session.resumed", "session.closed", "user.cancel",
                 "user.respond", "user.approve", "request.closed", "consent.changed", "a2ui.v09")


class AgentThread:
    """``a2ui.sdk.AgentClient`` on an event loop of its own thread.

    ``call(name, ...)`` runs one of the client's coroutines and waits for it; ``start(name, ...)``
    returns a concurrent future instead (for ``request_input``/``confirm``, which wait for the
    person). Notifications from the server are kept in ``notes`` for ``wait_note``.
    """

    def __init__(self, server, key):
        from a2ui.sdk import AgentClient

        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="agent-loop",
                                       daemon=True)
        self.thread.start()
        self.client = AgentClient(f"{server.ws_url}/ws/v4/a2ui/agent", key)
        self.notes = []
        self.cond = threading.Condition()
        for method in NOTIFICATIONS:
            self.client.on(method, self._recorder(method))
        self.run(self.client.connect())

    def _recorder(self, method):
        async def record(params):
            with self.cond:
                self.notes.append((method, params))
                self.cond.notify_all()
        return record

    def run(self, coro, timeout=TIMEOUT):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def start(self, name, *args, **kwargs):
        return asyncio.run_coroutine_threadsafe(
            getattr(self.client, name)(*args, **kwargs), self.loop)

    def call(self, name, *args, **kwargs):
        return self.start(name, *args, **kwargs).result(TIMEOUT)

    def wait_note(self, method, pred=lambda params: True, timeout=TIMEOUT):
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for got, params in self.notes:
                    if got == method and pred(params):
                        return params
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"the agent got no {method}; it got {self.notes}")
                self.cond.wait(left)

    def close(self):
        try:
            self.run(self.client.close())
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(TIMEOUT)
            self.loop.close()
