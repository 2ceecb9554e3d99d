"""Replay (docs/compliance.md): the admin's replayed screen equals the live client's screen.

A person opens the web client under settings that require a consent; at each step (the consent
prompt, consent granted, every component type with a v0.9 surface and an agent message, a
confirm open, the confirm approved) the test records the live client's DOM, normalized (element
names, classes, the open/hidden state, text; through shadow roots, so the v0.9 renderer's
elements count). Then staff open the session's replay in the admin: at the moment of each step
the sandboxed frame (the client's renderer fed the snapshot, no connection) shows the same DOM.
The timeline's "screen then" links of the answer and the consent lead to those moments.
"""

import re
import time

import pytest
from playwright.sync_api import expect

from a2ui.demo import booking_surface
from tests.browser.conftest import INIT_SCRIPT, PageWatch, open_client, screenshot, server_env
from tests.browser.test_client import COMPONENTS, render_all
from tests.live.conftest import DaphneServer, flush_live_redis

pytestmark = [pytest.mark.browser, pytest.mark.live, pytest.mark.django_db(transaction=True)]


@pytest.fixture(scope="module")
def server(live_services, django_db_setup):
    """The module's Daphne, with the data_collection consent required."""
    flush_live_redis(live_services)
    env = dict(server_env(live_services), DJANGO_SETTINGS_MODULE="tests.live.compliance_settings")
    server = DaphneServer(env, name="replay").wait_ready()
    yield server
    server.cleanup()


# The screen as a tree: [tag, classes, flags, children | text]; digits in a countdown are N
# (the live countdown runs; a replayed request shows the time it was opened with). Element ids
# and other attributes are left out (the client numbers its dialogs as it opens them).
SHAPE = r"""(root) => {
  const SKIP = new Set(['STYLE', 'SCRIPT', 'TEMPLATE', 'SLOT']);
  const norm = (s) => s.replace(/\s+/g, ' ').replace(/\d+ s\b/g, 'N s').trim();
  function walk(node) {
    if (node.nodeType === Node.TEXT_NODE) {
      const t = norm(node.textContent);
      return t ? t : null;
    }
    if (node.nodeType !== Node.ELEMENT_NODE || SKIP.has(node.tagName)) return null;
    // The live client keeps an empty, hidden slot where the person answered, for the agent's
    // reply (app.js, REPLY_WINDOW_MS): a place holder, nothing shown.
    if (node.classList.contains('a2ui-reply-slot') && node.hidden && !node.childNodes.length) {
      return null;
    }
    const flags = [];
    if (node.hidden) flags.push('hidden');
    if (node.hasAttribute('open')) flags.push('open');
    const kids = [];
    const children = node.shadowRoot ? [...node.shadowRoot.childNodes, ...node.childNodes]
                                     : [...node.childNodes];
    for (const child of children) {
      const w = walk(child);
      if (w !== null) kids.push(w);
    }
    const classes = [...node.classList].filter((c) => !c.startsWith('lit-')).sort().join(' ');
    return [node.tagName.toLowerCase(), classes, flags.join(' '), kids];
  }
  return [...root.querySelectorAll('.a2ui-layout, .a2ui-overlay')].map(walk);
}"""


def shape(page_or_frame):
    root = page_or_frame.locator(".a2ui-client").first
    return root.evaluate(SHAPE)


def text_of(tree):
    if isinstance(tree, str):
        return tree
    return " ".join(t for t in (text_of(c) for c in tree[3]) if t)


def diff(name, live, replayed):
    """What differs, as a unified diff of the two trees (for the failure message)."""
    import difflib
    import json

    return f"{name}:\n" + "\n".join(difflib.unified_diff(
        json.dumps(live, indent=1).splitlines(), json.dumps(replayed, indent=1).splitlines(),
        "live", "replayed", lineterm="", n=2))


def settle(page):
    """The live client's screen once its drawings are done (charts, the v0.9 renderer)."""
    for figure in page.locator("figure.a2ui-chart").all():
        expect(figure).to_have_attribute("data-chart-state", "drawn")


def kept_kinds(replaylog, session, last, timeout=10.0):
    """The kinds of the session's kept events once ``last`` is among them: the server writes
    them from its buffer within ``REPLAY_FLUSH_SECONDS`` (longer on a loaded machine), and
    this process reads the database, not the server's buffer."""
    deadline = time.monotonic() + timeout
    while True:
        kinds = [kind for _, kind, _ in replaylog.events(session)]
        if last in kinds or time.monotonic() > deadline:
            return kinds
        time.sleep(0.1)


def test_the_replay_shows_what_the_person_saw(page, agent, browser, server):
    from django.contrib.auth import get_user_model
    from django.test import Client

    from a2ui.compliance import replay as replaylog
    from a2ui.models import A2UISessionLog

    steps = {}
    sid = open_client(page)
    prompt = page.get_by_role("dialog", name="Your consent is needed")
    expect(prompt).to_be_visible()
    steps["consent asked"] = shape(page)
    prompt.get_by_role("button", name=re.compile("^(Grant|Accept|Allow|I agree)")).click()
    expect(prompt).to_have_count(0)
    agent.wait_note("consent.changed")
    steps["consent granted"] = shape(page)

    render_all(agent, sid)
    agent.call("surfaces", sid, booking_surface("booking"))
    agent.call("say", sid, "Here is everything for your order.")
    expect(page.locator('[data-surface-id="booking"] a2ui-surface')).to_contain_text(
        "Book a table")
    expect(page.locator(".a2ui-client")).to_contain_text("Here is everything for your order.")
    settle(page)
    steps["everything shown"] = shape(page)

    decision = agent.start("confirm", sid, "Pay 120 EUR?", description="Order 42, two items.",
                           severity="warning", timeout_seconds=120)
    dialog = page.get_by_role("dialog", name=re.compile("Pay 120 EUR"))
    expect(dialog).to_contain_text("Order 42, two items.")
    steps["confirm open"] = shape(page)
    dialog.get_by_role("button", name="Approve").click()
    assert decision.result(15) == {"approved": True, "reason": ""}
    expect(dialog).to_have_count(0)
    steps["confirm approved"] = shape(page)
    screenshot(page, "replay-live")

    # The moments of those steps, from the kept events.
    session = A2UISessionLog.objects.get(pk=sid)
    kinds = kept_kinds(replaylog, session, "request.closed")
    types = {c[1] for c in COMPONENTS}
    assert kinds.count("component.rendered") == len(COMPONENTS) and len(types) >= 9
    moment = {
        "consent asked": kinds.index("consent.required") + 1,
        "consent granted": kinds.index("consent.recorded") + 1,
        "everything shown": kinds.index("message") + 1,
        "confirm open": kinds.index("request.opened") + 1,
        "confirm approved": kinds.index("request.closed") + 1,
    }

    # Staff open the replay in the admin (another browser context, signed in as a superuser).
    staff = get_user_model().objects.create_superuser("replayer", "r@example.com", "pw-r-1")
    django_client = Client()
    django_client.force_login(staff)
    ctx = browser.new_context(base_url=server.url, viewport={"width": 1280, "height": 900})
    ctx.add_cookies([{"name": "sessionid", "value": django_client.cookies["sessionid"].value,
                      "url": server.url}])
    ctx.add_init_script(INIT_SCRIPT)
    admin = ctx.new_page()
    watch = PageWatch(admin, server.url)
    sockets = []
    admin.on("websocket", lambda ws: sockets.append(ws.url))
    try:
        for name, at in moment.items():
            admin.goto(f"/admin/a2ui/a2uisessionlog/{sid}/replay/?at={at}")
            frame_el = admin.locator("iframe[data-replay-frame]")
            assert frame_el.get_attribute("sandbox") == "allow-scripts"
            frame = admin.frame_locator("iframe[data-replay-frame]")
            expect(frame.locator("[data-a2ui-replay]")).to_have_attribute(
                "data-replayed", re.compile(r"^\d+$"))
            if name in ("everything shown", "confirm open", "confirm approved"):
                expect(frame.locator('[data-surface-id="booking"] a2ui-surface')).to_contain_text(
                    "Book a table")
                for figure in frame.locator("figure.a2ui-chart").all():
                    expect(figure).to_have_attribute("data-chart-state", "drawn")
            replayed = shape(frame)
            assert text_of(replayed[0]) == text_of(steps[name][0]), name
            assert replayed == steps[name], diff(name, steps[name], replayed)
            status = frame.locator("[data-a2ui-status]")
            expect(status).to_have_attribute("data-state", "replay")  # not a connection's
            expect(status.locator("[data-a2ui-status-text]")).to_have_text(
                f"Replay · moment {at}")
            expect(frame.locator("[data-a2ui-reconnect]")).to_be_hidden()
            dot = status.locator(".a2ui-status-dot").evaluate(
                "el => getComputedStyle(el).backgroundColor")
            error = status.evaluate("""el => {
                const probe = document.createElement('span');
                probe.style.backgroundColor = 'var(--a2ui-error)';
                el.append(probe);
                const colour = getComputedStyle(probe).backgroundColor;
                probe.remove();
                return colour;
            }""")
            assert dot != error, "the replay is not shown as an error"
            if name == "confirm open":
                countdown = frame.locator(".a2ui-countdown-text")
                before = countdown.text_content()
                time.sleep(1.5)
                assert countdown.text_content() == before  # frozen at that moment
                screenshot(admin, "replay-admin")

        # The timeline's links: the answer and the consent, each to its moment.
        admin.goto(f"/admin/a2ui/a2uisessionlog/{sid}/change/")
        answer = admin.locator('a[data-replay-entry="answer"]')
        expect(answer).to_have_count(1)
        assert answer.get_attribute("href").endswith(f"?at={moment['confirm open']}")
        consent_link = admin.locator('a[data-replay-entry="consent"]')
        expect(consent_link).to_have_count(1)
        assert consent_link.get_attribute("href").endswith(f"?at={moment['consent asked']}")
        answer.click()
        frame = admin.frame_locator("iframe[data-replay-frame]")
        expect(frame.get_by_role("dialog", name=re.compile("Pay 120 EUR"))).to_be_visible()

        assert sockets == []  # the replay opens no connection
        assert [e for e in watch.errors if "favicon" not in e] == []
        assert watch.foreign_requests() == []
    finally:
        ctx.close()
