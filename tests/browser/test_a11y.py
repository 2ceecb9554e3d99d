"""Accessibility: axe-core (npm ``axe-core``, a development dependency of package.json, loaded
into the test's pages only, never shipped) on the person's page with every component type, an
input request, a confirm, a v0.9 surface, the chat and the consent list, and on the compliance
admin pages (the audit list, a person's data, a session's replay, the trail's verification):
no serious or critical violation (WCAG 2.1 A/AA and axe's best practices).
"""

import json
import re

import pytest
from playwright.sync_api import expect

from a2ui.demo import booking_surface
from tests.browser.conftest import ROOT, open_client, screenshot
from tests.browser.test_client import render_all

pytestmark = [pytest.mark.browser, pytest.mark.live, pytest.mark.django_db(transaction=True)]

AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]
BLOCKING = ("serious", "critical")
RUN = """async (tags) => {
  const result = await axe.run(document, { runOnly: { type: 'tag', values: tags },
                                           resultTypes: ['violations'] });
  return result.violations.map((v) => ({
    id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.slice(0, 4).map((n) => `${n.target.join(' ')}: ${n.failureSummary}`),
  }));
}"""


@pytest.fixture
def axe_context(context):
    if not AXE.is_file():  # a missing dev dependency is an error, never a skip
        pytest.fail(f"axe-core is not installed ({AXE}): run `make install` (npm ci)")
    # An init script, like the conftest's CSP watcher: not subject to the page's CSP.
    context.add_init_script(path=str(AXE))
    return context


def violations(page):
    found = page.evaluate(RUN, TAGS)
    return [v for v in found if v["impact"] in BLOCKING]


def assert_accessible(page, where):
    found = violations(page)
    assert found == [], f"{where}:\n" + json.dumps(found, indent=1)


def test_the_persons_page_has_no_serious_violation(axe_context, page, agent):
    page.set_viewport_size({"width": 1280, "height": 900})
    sid = open_client(page)
    render_all(agent, sid)
    agent.call("surfaces", sid, booking_surface("booking"))
    agent.call("say", sid, "Here is **everything** for your order.")
    agent.call("progress", sid, "t1", "determinate", value=40, total=100, message="Working")
    expect(page.locator('[data-surface-id="booking"] a2ui-surface')).to_contain_text(
        "Book a table")
    expect(page.locator("[data-a2ui-chat] .a2ui-msg")).to_have_count(1)
    for figure in page.locator("figure.a2ui-chart").all():
        expect(figure).to_have_attribute("data-chart-state", "drawn")
    asked = agent.start("request_input", sid, "text", "Your city?",
                        validation={"required": True})
    expect(page.get_by_role("dialog", name="Your city?")).to_be_visible()
    assert_accessible(page, "components, a request, a v0.9 surface, the chat")
    screenshot(page, "a11y-person", full_page=True)
    page.get_by_role("dialog", name="Your city?").get_by_role("textbox").fill("Lyon")
    page.get_by_role("dialog", name="Your city?").get_by_role("button", name="Send").click()
    assert asked.result(15) == "Lyon"
    decision = agent.start("confirm", sid, "Pay 120 EUR?", description="Order 42.",
                           severity="critical", timeout_seconds=120)
    expect(page.get_by_role("alertdialog", name=re.compile("Pay 120 EUR"))).to_be_visible()
    agent.call("toast", sid, "Saved", level="error", message="A toast over the content.",
               duration_ms=0)
    assert_accessible(page, "a critical confirm and a toast")
    page.get_by_role("alertdialog").get_by_role("button", name="Reject").click()
    assert decision.result(15)["approved"] is False


def test_the_compliance_admin_pages_have_no_serious_violation(axe_context, page, agent,
                                                              server):
    from django.contrib.auth import get_user_model
    from django.test import Client

    sid = open_client(page)  # a person's session, with something to replay
    agent.call("render", sid, "card", {"title": "Order", "description": "Two items."})
    expect(page.locator(".a2ui-component")).to_have_count(1)
    person = get_user_model().objects.exclude(is_staff=True).order_by("-pk").first()

    officer = get_user_model().objects.create_superuser("officer-a11y", "o@example.com", "pw")
    client = Client()
    client.force_login(officer)
    admin = page.context.browser.new_context(base_url=server.url,
                                             viewport={"width": 1280, "height": 900})
    try:
        admin.add_init_script(path=str(AXE))
        admin.add_cookies([{"name": "sessionid", "value": client.cookies["sessionid"].value,
                            "url": server.url}])
        view = admin.new_page()
        for path, what in [("/admin/a2ui/auditevent/", "the audit list"),
                           ("/admin/a2ui/auditevent/verify/", "the trail's verification"),
                           ("/admin/a2ui/auditevent/person/", "a person's data")]:
            response = view.goto(path)
            assert response.ok, (path, response.status)
            assert_accessible(view, what)
        # A person's data, reported (a dry run of the erasure lists what it would remove).
        view.locator("input[name=user]").fill(person.get_username())
        view.locator("button[name=action][value=dry_run]").click()
        view.wait_for_load_state()
        assert_accessible(view, "a person's data, its report")
        # The session's replay: the page and the frame the client draws the moment in.
        view.goto(f"/admin/a2ui/a2uisessionlog/{sid}/replay/")
        frame = view.frame_locator("iframe").first
        expect(frame.locator(".a2ui-component")).to_have_count(1)
        assert_accessible(view, "the replay")
        screenshot(view, "a11y-replay")
    finally:
        admin.close()
