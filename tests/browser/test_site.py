"""The example project's own pages (templates/ at the repository root) and its admin lists.

* Signed out, /a2ui/ sends people to the site's login page (LOGIN_URL): the site's layout and
  stylesheet, not the admin's, under the strict CSP; signing in lands on the client page, which
  extends the same base layout. (A host project without these templates gets the app's own
  page: tests/browser/test_host_project.py.)
* The admin's session and audit change lists fit 1280 px without horizontal scrolling.
"""

import re
import uuid

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import INIT_SCRIPT, PageWatch, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.live, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def anonymous(browser, server):
    contexts = []

    def open_page(width=1280):
        ctx = browser.new_context(base_url=server.url, viewport={"width": width, "height": 900})
        ctx.add_init_script(INIT_SCRIPT)
        contexts.append(ctx)
        page = ctx.new_page()
        page.watch = PageWatch(page, server.url)
        return page

    yield open_page
    for ctx in contexts:
        ctx.close()


@pytest.mark.parametrize("width", [1280, 390])
def test_login_page_is_the_sites_and_leads_to_the_client(anonymous, person, agent, width):
    page = anonymous(width)
    response = page.goto("/a2ui/")
    expect(page).to_have_url(f"{page.watch.origin}/accounts/login/?next=/a2ui/")
    csp = response.headers["content-security-policy"]
    assert "style-src 'self';" in csp and "unsafe-inline" not in csp
    # The site's layout and look, not the admin's.
    expect(page.locator("header.site-header")).to_contain_text("A2UI example")
    expect(page.get_by_role("heading", name="Log in", level=1)).to_be_visible()
    assert page.locator("#site-name, #branding, link[href*='admin/css']").count() == 0
    assert page.locator("link[rel=stylesheet]").evaluate_all(
        "links => links.map((l) => new URL(l.href).pathname)") == ["/static/site/site.css"]
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    card = page.locator(".site-card").bounding_box()
    assert card["x"] >= 0 and card["x"] + card["width"] <= width
    screenshot(page, f"login-{width}")

    page.get_by_label("Username").fill(person.username)
    page.get_by_label("Password").fill("wrong")
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("alert")).to_contain_text("correct username and password")
    page.get_by_label("Password").fill("pw-person-1")
    page.get_by_role("button", name="Log in").click()
    expect(page).to_have_url(f"{page.watch.origin}/a2ui/")
    expect(page.locator("[data-a2ui-client]")).to_have_attribute("data-connection", "connected")
    # The client page extends the same base layout.
    expect(page.locator("header.site-header")).to_contain_text(person.username)
    expect(page.locator("main#site-content [data-a2ui-client]")).to_be_attached()
    assert page.evaluate("window.__cspViolations") == []
    assert page.watch.errors == []
    assert page.watch.foreign_requests() == []

    page.get_by_role("button", name="Log out").click()
    expect(page).to_have_url(f"{page.watch.origin}/accounts/login/")


#: The column headers of a change list that are clipped or break inside a word (their words
#: each on one line; the header not wider than its cell).
HEADERS_WHOLE = """() => [...document.querySelectorAll('#result_list thead th')].flatMap(th => {
  const found = [];
  const label = th.querySelector('.text') || th;
  if (label.scrollWidth > label.clientWidth + 1) found.push(`${th.innerText.trim()}: clipped`);
  const walker = document.createTreeWalker(label, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (const match of node.data.matchAll(/\\S+/g)) {
      const range = document.createRange();
      range.setStart(node, match.index);
      range.setEnd(node, match.index + match[0].length);
      const lines = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
      if (lines.size > 1) found.push(`${match[0]}: broken across lines`);
    }
  }
  return found;
})"""


def test_admin_session_and_audit_lists_fit_1280px(anonymous, transactional_db):
    from django.contrib.auth import get_user_model

    from a2ui import tokens
    from a2ui.compliance import audit
    from a2ui.models import A2UISessionLog

    admin_user = get_user_model().objects.create_superuser(
        "site-admin", "admin@example.com", "pw-admin-1")
    agent, _ = tokens.create_agent("a-fairly-long-agent-name-for-the-list",
                                   display_name="A fairly long agent display name")
    for i in range(5):
        log = A2UISessionLog.objects.create(
            agent=agent, user=admin_user, state="closed", message_count=120 + i,
            components_rendered=40, inputs_requested=3,
            close_reason="the agent closed the session after the person answered everything")
        audit.record("session.closed", actor=admin_user, agent=agent, target=log,
                     session_id=log.session_id, details={"reason": "x" * 80})
    audit.record("component.rendered", agent=agent, session_id=uuid.uuid4())
    from django.utils import timezone

    from a2ui.models import PendingRequest, RenderedComponent, Surface

    for i in range(3):
        RenderedComponent.objects.create(session=log, component_id=f"a-long-component-id-{i}-x",
                                         component_type="markdown", position=i)
        PendingRequest.objects.create(session=log, request_id=f"a-long-request-id-{i}-xyz",
                                      kind="confirm", deadline=timezone.now(),
                                      status="answered", resolved_at=timezone.now())
        Surface.objects.create(session=log, surface_id=f"a-long-surface-id-{i}",
                               catalog_id="https://a2ui.org/specification/v0_9/"
                                          "basic_catalog.json")

    from a2ui.models import A2UIConsentRecord

    for _ in range(3):  # revoked consents and tokens: the "revoked by" columns filled
        A2UIConsentRecord.objects.create(
            user=admin_user, session=log, consent_type="data_collection", granted=True,
            revoked_at=timezone.now(), revoked_by=admin_user)
        issued = tokens.issue_stream_token(admin_user, agent)
        type(issued.record).objects.filter(pk=issued.record.pk).update(
            revoked_at=timezone.now(), revoked_by=admin_user)

    page = anonymous(1280)
    page.goto("/admin/login/?next=/admin/")
    page.locator("#id_username").fill("site-admin")
    page.locator("#id_password").fill("pw-admin-1")
    page.get_by_role("button", name="Log in").click()
    expect(page).to_have_url(f"{page.watch.origin}/admin/")
    for model in ("a2uisessionlog", "auditevent", "agent", "renderedcomponent",
                  "pendingrequest", "surface", "a2uiconsentrecord", "streamtoken"):
        page.goto(f"/admin/a2ui/{model}/")
        expect(page.locator("#result_list tbody tr").first).to_be_visible()
        widths = page.evaluate("""() => ({
            page: document.documentElement.scrollWidth,
            results: document.querySelector('.results').scrollWidth,
            shown: document.querySelector('.results').clientWidth,
        })""")
        screenshot(page, f"admin-{model}-1280")
        assert widths["page"] <= 1280, (model, widths)
        assert widths["results"] <= widths["shown"], (model, widths)  # no scrolling table
        assert page.evaluate(HEADERS_WHOLE) == [], model  # "REVOKED BY", not "REVOKE / D BY"
        # Times with seconds (ten events in one minute read apart).
        times = page.locator("#result_list tbody tr").first.inner_text()
        assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", times), (model, times)
        screenshot(page, f"admin-{model}-1280")
