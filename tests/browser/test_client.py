"""The web client in Chromium against a live Daphne, driven by a real agent on the agent socket.

Covers the nine component types, prompts (input, confirm approved, confirm timed out),
ui.update, ui.progress with user.cancel, ui.notify, ui.navigate, resuming after a reload, the
CSP, the stream-token error path, and keyboard/label basics. Screenshots of the main screens go
to screenshots/ (gitignored).
"""

import re

import pytest
from playwright.sync_api import expect

from a2ui.demo import booking_surface
from tests.browser.conftest import drawn_chart, open_client, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.live, pytest.mark.django_db(transaction=True)]

PIXEL_PNG = (
    "data:image/png;base64,iVBORw0KGgoAAAANSUHEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8Bg"
    "PwAF/gL+mW2pSQAAAABJRU5ErkJggg=="
)

COMPONENTS = [
    ("c-card", "card", {
        "title": "Quarterly summary",
        "description": "Numbers for the last quarter.",
        "sections": [{"label": "Revenue", "value": "$1.2M"}, {"label": "Growth", "value": "12%"}],
        "actions": [{"label": "Open docs", "action": "navigate", "url": "/api/docs/"}],
    }),
    ("c-table", "table", {
        "headers": [{"key": "name", "label": "Agent", "sortable": True},
                    {"key": "calls", "label": "Calls", "sortable": True}],
        "rows": [{"name": "WeatherBot", "calls": 5420}, {"name": "DataMiner", "calls": 318},
                 {"name": "Summarizer", "calls": 912}],
    }),
    ("c-form", "form", {
        "title": "Search",
        "fields": [{"name": "query", "type": "text", "label": "Search query", "required": True},
                   {"name": "limit", "type": "number", "label": "Max results", "min": 1},
                   {"name": "kind", "type": "select", "label": "Category",
                    "options": ["research", "trading"]}],
        "submit_label": "Search",
    }),
    ("c-bar", "chart", {
        "chart_type": "bar", "title": "Calls per day",
        "x_axis": {"label": "Day", "values": ["Mon", "Tue", "Wed"]}, "y_axis": {"label": "Calls"},
        "series": [{"name": "Successful", "data": [120, 150, 180]},
                   {"name": "Failed", "data": [5, 3, 8]}],
    }),
    ("c-line", "chart", {
        "chart_type": "line", "title": "Latency",
        "x_axis": {"label": "Hour", "values": ["9", "10", "11", "12"]},
        "series": [{"name": "p50", "data": [12, 14, 11, 13]}],
    }),
    ("c-pie", "chart", {
        "chart_type": "pie", "title": "Calls by category",
        "x_axis": {"values": ["research", "trading", "analytics"]},
        "series": [{"name": "Calls", "data": [45, 30, 25]}],
    }),
    ("c-md", "markdown", {
        "content": "## Findings\n\nThe agent found **three things**:\n\n- rising demand\n"
                   "- a `research` gap\n\n[More](https://example.com/more)",
    }),
    ("c-code", "code", {
        "language": "python", "title": "Example request",
        "code": "import httpx\n\ndef fetch():\n    return httpx.get('/data')",
    }),
    ("c-image", "image", {"url": "/static/a2ui/demo/chart.svg", "alt": "Market trend chart",
                          "caption": "Trends for Q1", "width": 400, "height": 200}),
    ("c-alert", "alert", {"severity": "warning", "title": "Budget warning",
                          "message": "80% of the budget is used.", "dismissible": True}),
    ("c-steps", "steps", {"steps": [{"label": "Collect", "status": "completed"},
                                    {"label": "Analyse", "status": "active"},
                                    {"label": "Report", "status": "pending"}],
                          "current_step": 1}),
]


def component(page, component_id):
    return page.locator(f'[data-component-id="{component_id}"]')


def render_all(agent, sid):
    for component_id, kind, data in COMPONENTS:
        agent.call("render", sid, kind, data, component_id=component_id)


def test_nine_component_types_render_their_content(page, agent):
    sid = open_client(page)
    render_all(agent, sid)

    card = component(page, "c-card")
    expect(card.get_by_role("heading", name="Quarterly summary")).to_be_visible()
    expect(card).to_contain_text("Numbers for the last quarter.")
    expect(card.locator("dt", has_text="Revenue")).to_be_visible()
    expect(card.locator("dd", has_text="$1.2M")).to_be_visible()
    expect(card.get_by_role("button", name="Open docs")).to_be_enabled()

    table = component(page, "c-table")
    expect(table.get_by_role("cell", name="WeatherBot")).to_be_visible()
    expect(table.locator("tbody tr")).to_have_count(3)
    table.get_by_role("button", name="Calls").click()
    expect(table.locator("th").nth(1)).to_have_attribute("aria-sort", "ascending")
    expect(table.locator("tbody tr td:first-child")).to_have_text(
        ["DataMiner", "Summarizer", "WeatherBot"])  # numerically, not as text

    form = component(page, "c-form")
    expect(form.get_by_role("heading", name="Search")).to_be_visible()
    form.get_by_label("Search query").fill("solar panels")
    form.get_by_label("Max results").fill("5")
    form.get_by_label("Category").select_option("trading")
    form.get_by_role("button", name="Search").click()
    got = agent.wait_note("user.respond", lambda p: p.get("request_id") == "c-form")
    assert got["value"] == {"query": "solar panels", "limit": 5, "kind": "trading"}

    bar = component(page, "c-bar")
    expect(bar.get_by_role("heading", name="Calls per day")).to_be_visible()
    expect(bar.get_by_role("img", name="Calls per day: bar chart of Successful, Failed")).to_be_visible()
    assert drawn_chart(bar) == {"type": "bar", "labels": ["Mon", "Tue", "Wed"],
                                "data": [[120, 150, 180], [5, 3, 8]]}  # 3 days x 2 series
    expect(bar.locator(".a2ui-chart-legend li")).to_have_text(["Successful", "Failed"])
    expect(bar.locator("table tbody th")).to_have_text(["Mon", "Tue", "Wed"])
    line = component(page, "c-line")
    assert drawn_chart(line) == {"type": "line", "labels": ["9", "10", "11", "12"],
                                 "data": [[12, 14, 11, 13]]}
    pie = component(page, "c-pie")
    assert drawn_chart(pie)["data"] == [[45, 30, 25]]
    expect(pie.locator(".a2ui-chart-legend li")).to_have_text(["research", "trading", "analytics"])
    expect(pie.locator("table tbody tr").first).to_have_text("research4545%")

    md = component(page, "c-md")
    expect(md.get_by_role("heading", name="Findings")).to_be_visible()
    expect(md.locator("strong")).to_have_text("three things")
    expect(md.locator("li")).to_have_count(2)
    expect(md.get_by_role("link", name="More")).to_have_attribute("href", "https://example.com/more")

    code = component(page, "c-code")
    expect(code).to_contain_text("Example request")
    expect(code.locator("pre code")).to_contain_text("return httpx.get('/data')")
    expect(code.locator("pre code .hljs-keyword", has_text="def")).to_be_visible()
    expect(code.get_by_role("button", name="Copy python to clipboard")).to_be_visible()

    image = component(page, "c-image")
    img = image.get_by_role("img", name="Market trend chart")
    expect(img).to_be_visible()
    expect(image.locator("figcaption")).to_have_text("Trends for Q1")
    img.scroll_into_view_if_needed()  # loading="lazy"
    page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=img.element_handle())

    alert = component(page, "c-alert")
    expect(alert.get_by_role("alert")).to_contain_text("Budget warning")
    expect(alert).to_contain_text("80% of the budget is used.")

    steps = component(page, "c-steps")
    expect(steps.locator("li")).to_have_count(3)
    expect(steps.locator('li[aria-current="step"]')).to_contain_text("Analyse")
    expect(steps.locator("li").first).to_have_class(re.compile("a2ui-step-completed"))

    expect(page.locator("[data-a2ui-empty]")).to_be_hidden()
    screenshot(page, "components", full_page=True)

    alert.get_by_role("button", name="Dismiss alert").click()
    expect(alert).to_have_count(0)


def test_input_request_is_focused_labelled_and_answer_reaches_agent(page, agent):
    sid = open_client(page)
    answer = agent.start("request_input", sid, "text", "What should I search for?",
                         validation={"required": True})
    dialog = page.get_by_role("dialog", name="What should I search for?")
    expect(dialog).to_be_visible()
    box = dialog.get_by_role("textbox", name="What should I search for?")
    expect(box).to_be_focused()
    expect(page.locator("[data-a2ui-empty]")).to_be_hidden()  # a prompt is content, too
    expect(dialog).to_contain_text("Required.")
    screenshot(page, "input-request")

    dialog.get_by_role("button", name="Send").click()  # empty: refused inline, nothing sent
    expect(dialog.locator(".a2ui-field-error")).to_have_text("This field is required.")
    page.keyboard.type("solar panels")
    page.keyboard.press("Enter")
    assert answer.result(15) == "solar panels"
    expect(dialog).to_have_count(0)


def test_confirm_approved_reaches_agent(page, agent):
    sid = open_client(page)
    decision = agent.start("confirm", sid, "Deploy version 2?",
                           description="This replaces the running version.",
                           severity="warning", timeout_seconds=120)
    dialog = page.get_by_role("dialog", name=re.compile("Deploy version 2"))
    expect(dialog).to_contain_text("This replaces the running version.")
    expect(dialog).to_contain_text(re.compile(r"Rejects automatically in \d+ s"))
    # The primary action has the focus, not the optional Reason field (no phone keyboard).
    expect(dialog.get_by_role("button", name="Approve")).to_be_focused()
    expect(dialog.get_by_label("Reason (optional)")).not_to_be_focused()
    screenshot(page, "confirm")
    dialog.get_by_label("Reason (optional)").fill("looks good")
    dialog.get_by_role("button", name="Approve").click()
    assert decision.result(15) == {"approved": True, "reason": "looks good"}
    expect(dialog).to_have_count(0)


def test_confirm_left_alone_is_rejected_when_time_runs_out(page, agent):
    sid = open_client(page)
    decision = agent.start("confirm", sid, "Delete the archive?", severity="critical",
                           timeout_seconds=3)
    dialog = page.get_by_role("alertdialog", name=re.compile("Delete the archive"))
    expect(dialog.locator(".a2ui-countdown-text")).to_have_text(
        re.compile(r"Rejects automatically in [1-3] s"))
    expect(dialog.get_by_role("button", name="Reject")).to_be_focused()  # critical: safe default
    # The server times the request out (-32004); the SDK turns that into approved False.
    assert decision.result(15) == {"approved": False, "reason": "timeout"}
    expect(dialog).to_have_count(0)
    # Whichever comes first, the client's countdown or the server's request_closed, says so.
    expect(page.locator(".a2ui-toast").first).to_contain_text("Time is up")
    expect(page.locator(".a2ui-toast").first).not_to_contain_text("-320")  # words, no code


def test_update_replace_merge_append(page, agent):
    sid = open_client(page)
    agent.call("render", sid, "card", {"title": "Status", "description": "first"},
               component_id="u-card")
    agent.call("render", sid, "table", {"headers": [{"key": "n", "label": "N"}],
                                        "rows": [{"n": "one"}]}, component_id="u-table")
    card = component(page, "u-card")
    expect(card.get_by_role("heading")).to_have_text("Status")

    agent.call("update", sid, "u-card", {"title": "Replaced", "description": "fresh"},
               operation="replace")
    expect(card.get_by_role("heading")).to_have_text("Replaced")
    expect(card).to_contain_text("fresh")

    agent.call("update", sid, "u-card", {"description": "merged"}, operation="merge")
    expect(card.get_by_role("heading")).to_have_text("Replaced")
    expect(card.locator(".a2ui-card-description")).to_have_text("merged")

    agent.call("update", sid, "u-table", {"rows": [{"n": "two"}, {"n": "three"}]},
               operation="append")
    expect(component(page, "u-table").locator("tbody td")).to_have_text(["one", "two", "three"])


def test_progress_and_cancel_reaches_agent(page, agent):
    sid = open_client(page)
    agent.call("progress", sid, "job-1", "determinate", value=40, total=100,
               message="Crunching numbers")
    task = page.locator('[data-task-id="job-1"]')
    expect(task).to_contain_text("Crunching numbers (40%)")
    expect(task.locator("progress")).to_have_js_property("value", 40)
    agent.call("progress", sid, "job-2", "streaming", message="Tokens: alpha ")
    agent.call("progress", sid, "job-2", "streaming", message="beta")
    expect(page.locator('[data-task-id="job-2"] [role="log"]')).to_have_text("Tokens: alpha beta")
    agent.call("progress", sid, "job-3", "determinate", value=100, total=100, message="Done")
    expect(page.locator('[data-task-id="job-3"]')).to_have_class(re.compile("a2ui-task-done"))
    screenshot(page, "progress")

    task.get_by_role("button", name="Cancel").click()
    got = agent.wait_note("user.cancel", lambda p: p.get("task_id") == "job-1")
    assert got["session_id"] == sid
    expect(task.get_by_role("button", name="Cancelling…")).to_be_disabled()


def test_notify_shows_toasts(page, agent):
    sid = open_client(page)
    agent.call("toast", sid, "Report ready", level="success", message="3 pages.", duration_ms=0)
    agent.call("toast", sid, "Upload failed", level="error", message="Disk full.", duration_ms=0)
    toasts = page.locator("[data-a2ui-toasts]")
    expect(toasts.get_by_role("status")).to_contain_text("Report ready3 pages.")
    expect(toasts.get_by_role("alert")).to_contain_text("Upload failedDisk full.")
    screenshot(page, "toasts")
    toasts.get_by_role("status").get_by_role("button", name="Dismiss notification").click()
    expect(toasts.get_by_role("status")).to_have_count(0)


def test_navigate_same_tab_to_a_relative_url(page, agent, server):
    sid = open_client(page)
    agent.call("navigate", sid, "/a2ui/?from=agent")
    expect(page).to_have_url(f"{server.url}/a2ui/?from=agent")
    assert len(page.context.pages) == 1
    # The page it landed on resumes the same session.
    expect(page.locator("[data-a2ui-client]")).to_have_attribute("data-connection", "connected")
    assert page.evaluate("sessionStorage.getItem('a2ui.session_id')") == sid


def test_reload_resumes_the_session_with_its_components(page, agent):
    sid = open_client(page)
    for n, kind, data in [(1, "markdown", {"content": "first"}),
                          (2, "card", {"title": "second"}),
                          (3, "alert", {"severity": "info", "message": "third"})]:
        agent.call("render", sid, kind, data, component_id=f"r-{n}")
    agent.call("update", sid, "r-2", {"title": "second, updated"}, operation="merge")
    ids = page.locator("[data-a2ui-components='main'] [data-component-id]")
    expect(ids).to_have_count(3)
    expect(component(page, "r-2").get_by_role("heading")).to_have_text("second, updated")

    page.reload()
    expect(page.locator("[data-a2ui-client]")).to_have_attribute("data-connection", "connected")
    assert page.evaluate("sessionStorage.getItem('a2ui.session_id')") == sid
    expect(ids).to_have_count(3)
    assert [ids.nth(i).get_attribute("data-component-id") for i in range(3)] == [
        "r-1", "r-2", "r-3"]
    expect(ids).to_contain_text(["first", "second, updated", "third"])
    agent.wait_note("session.resumed", lambda p: p.get("session_id") == sid)


def test_csp_header_is_strict_and_our_code_causes_no_violation(page, agent):
    response = page.goto("/a2ui/")
    policy = response.headers["content-security-policy"]
    directives = dict(d.strip().split(" ", 1) for d in policy.split(";"))
    assert "'unsafe-inline'" not in policy and "'unsafe-eval'" not in policy
    assert directives["default-src"] == "'self'"
    assert re.fullmatch(r"'self' 'nonce-[\w-]+'", directives["script-src"])
    assert directives["style-src"] == "'self'"
    assert directives["object-src"] == "'none'" and directives["base-uri"] == "'none'"
    assert response.headers["x-content-type-options"] == "nosniff"

    expect(page.locator("[data-a2ui-client]")).to_have_attribute("data-connection", "connected")
    sid = page.evaluate("sessionStorage.getItem('a2ui.session_id')")
    render_all(agent, sid)
    agent.call("toast", sid, "Hello", level="info")
    expect(page.locator("[data-component-id]")).to_have_count(len(COMPONENTS))
    # No toast but ours: the v0.9 renderer is not fetched (nor missed) before a v0.9 surface.
    expect(page.locator("[data-a2ui-toasts]")).to_contain_text("Hello")
    expect(page.locator("[data-a2ui-toasts]")).not_to_contain_text("could not be shown")
    assert not [u for u in page.watch.requests if "/a2ui/vendor/a2ui-lit" in u]
    # The v0.9 renderer (lit, constructable stylesheets) is loaded with the first v0.9 surface.
    agent.call("surfaces", sid, booking_surface("booking"))
    expect(page.locator('[data-surface-id="booking"] a2ui-surface')).to_contain_text(
        "Book a table")
    page.wait_for_function("() => customElements.get('a2ui-surface') !== undefined")
    assert page.evaluate("window.__cspViolations") == []
    assert page.watch.errors == []  # no CSP reports, no 404 (favicon), no exception
    assert page.watch.foreign_requests() == []


def test_inputs_are_labelled_and_controls_reachable_with_tab(page, agent):
    sid = open_client(page)
    render_all(agent, sid)
    expect(page.locator("[data-component-id]")).to_have_count(len(COMPONENTS))
    unlabelled = page.evaluate("""() => [...document.querySelectorAll(
        '[data-a2ui-client] input, [data-a2ui-client] select, [data-a2ui-client] textarea')]
        .filter((e) => e.type !== 'hidden' && !(e.labels && e.labels.length)
                       && !e.getAttribute('aria-label') && !e.getAttribute('aria-labelledby'))
        .map((e) => e.outerHTML)""")
    assert unlabelled == []

    page.locator("body").focus()
    reached = []
    for _ in range(40):
        page.keyboard.press("Tab")
        reached.append(page.evaluate("""() => {
            const e = document.activeElement;
            return (e.getAttribute('aria-label') || (e.labels && e.labels[0]
                    && e.labels[0].textContent) || e.textContent || e.tagName).trim(); }"""))
    for name in ["Open docs", "Agent", "Calls", "Search query *", "Max results", "Category",
                 "Search", "Copy python to clipboard", "Dismiss alert"]:
        assert name in reached, (name, reached)


def test_status_bar_says_when_the_assistant_is_offline_and_back(page, server):
    """a2ui.init's agent_status, then a2ui.agent_status (a2ui.sessions.presence)."""
    from a2ui import tokens
    from tests.browser.conftest import AgentThread

    _, key = tokens.create_agent("browser-agent-presence", display_name="Browser Agent")
    open_client(page)  # the only active agent, not connected: the page says so at once
    status = page.locator("[data-a2ui-status]")
    label = status.locator("[data-a2ui-status-text]")
    expect(status).to_have_attribute("aria-live", "polite")
    expect(label).to_have_text("Assistant offline — your answers are kept")
    expect(status).to_have_attribute("data-agent", "offline")
    driver = AgentThread(server, key)
    try:
        expect(label).to_have_text("Assistant connected")
        expect(status).to_have_attribute("data-agent", "online")
    finally:
        driver.close()
    expect(label).to_have_text("Assistant offline — your answers are kept")


def test_token_endpoint_400_is_shown_and_not_retried(page, server):
    """No agent at all: the token endpoint answers 400 (no default agent); the client says so."""
    posts = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
    page.goto("/a2ui/")
    client = page.locator("[data-a2ui-client]")
    expect(client).to_have_attribute("data-connection", "closed")
    status = page.locator("[data-a2ui-status]")
    expect(status).to_contain_text("No assistant is available on this page yet")
    assert "DEFAULT_AGENT" not in status.text_content()  # a developer's words are logged
    expect(page.get_by_role("button", name="Reconnect")).to_be_visible()
    assert len(posts) == 1
