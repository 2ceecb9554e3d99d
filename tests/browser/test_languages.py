"""The person's language in Chromium: the page follows Accept-Language (LocaleMiddleware and
LANGUAGES of the example project). French, which the app ships: the page's own strings, the
client's (its djangojs catalog embedded in the page) and the server's texts for the person (a
consent's description) in French. Arabic: the layout right to left, not broken (screenshots in
screenshots/).
"""

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import DaphneServer, open_client, screenshot, server_env
from tests.live.conftest import flush_live_redis

pytestmark = [pytest.mark.browser, pytest.mark.live, pytest.mark.django_db(transaction=True)]


@pytest.fixture(scope="module")
def server(live_services, django_db_setup):  # noqa: F811 (the conftest's, with a consent)
    flush_live_redis(live_services)
    env = server_env(live_services)
    env["A2UI_REQUIRED_CONSENTS"] = "data_collection"
    server = DaphneServer(env, name="languages").wait_ready()
    yield server
    server.cleanup()


def test_the_page_in_french(context, page, agent):
    context.set_extra_http_headers({"Accept-Language": "fr-FR,fr;q=0.9,en;q=0.5"})
    open_client(page)
    assert page.evaluate("document.documentElement.lang") == "fr"
    status = page.locator("[data-a2ui-status]")
    expect(status).to_contain_text("Assistant connecté")
    # The server's text for the person (the consent's description) and the client's.
    prompt = page.get_by_role("dialog", name="Votre consentement est nécessaire")
    expect(prompt).to_contain_text("L’agent peut recueillir les informations que vous saisissez.")
    prompt.get_by_role("button", name="Autoriser").click()
    agent.wait_note("consent.changed", lambda p: p["granted"] is True)
    sid = page.evaluate("sessionStorage.getItem('a2ui.session_id')")
    agent.start("request_input", sid, "text", "Votre ville ?", validation={"required": True})
    dialog = page.get_by_role("dialog", name="Votre ville ?")
    expect(dialog.get_by_role("button", name="Envoyer")).to_be_visible()
    expect(dialog).to_contain_text("Obligatoire.")
    page.locator("[data-a2ui-consent] summary").click()
    expect(page.locator("[data-a2ui-consent]")).to_contain_text("Votre consentement")
    page.locator("[data-a2ui-consent-list]").get_by_role("button", name="Retirer").click()
    expect(dialog.locator(".a2ui-paused-note")).to_contain_text("En pause")
    screenshot(page, "language-fr")
    assert page.watch.errors == []


def test_right_to_left_layout_is_not_broken(context, page, agent):
    context.set_extra_http_headers({"Accept-Language": "ar"})
    page.set_viewport_size({"width": 1280, "height": 900})
    sid = open_client(page)
    assert page.evaluate("document.documentElement.dir") == "rtl"
    expect(page.locator("[data-a2ui-client]")).to_have_attribute("dir", "rtl")
    page.get_by_role("dialog").get_by_role("button").first.click()  # the consent, allowed
    agent.call("render", sid, "card", {"title": "بطاقة", "description": "نص تجريبي"},
               component_id="main-card")
    agent.call("render", sid, "table", {"headers": [{"key": "a", "label": "عمود"}],
                                        "rows": [{"a": "قيمة"}]},
               component_id="side", metadata={"position": "sidebar"})
    agent.call("toast", sid, "تنبيه", message="رسالة", duration_ms=0)
    main = page.locator('[data-component-id="main-card"]').bounding_box()
    side = page.locator('[data-component-id="side"]').bounding_box()
    toast = page.locator(".a2ui-toast").bounding_box()
    width = 1280
    # Mirrored: the main region on the right, the sidebar on the left, the toasts at the
    # inline end (the left), the status at the bar's start (the right).
    assert side["x"] + side["width"] <= main["x"], (side, main)
    assert main["x"] + main["width"] > width * 0.6
    assert toast["x"] < width / 2, toast
    status = page.locator("[data-a2ui-status]").bounding_box()
    assert status["x"] > width / 2, status
    # Start-aligned text is right-aligned, and nothing overflows the page sideways.
    align = page.locator('[data-component-id="side"] th').evaluate(
        "el => getComputedStyle(el).textAlign")
    assert align in ("start", "right")
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    screenshot(page, "language-ar-rtl")
    page.set_viewport_size({"width": 390, "height": 844})
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    screenshot(page, "language-ar-rtl-390")
    assert page.watch.errors == []
