"""The person's page (issue 40): consents in the page, errors in words, a frozen agent shown
offline, the site's title, log out, one header on a phone, chat labels that name the agent.

The module's Daphne requires the ``data_collection`` consent (A2UI_REQUIRED_CONSENTS) and pings
agent sockets with the default settings (AGENT_PING_SECONDS 4, AGENT_PING_TIMEOUT_SECONDS 8).
"""

import re
import time

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import DaphneServer, open_client, screenshot, server_env
from tests.live.conftest import flush_live_redis

pytestmark = [pytest.mark.browser, pytest.mark.live, pytest.mark.django_db(transaction=True)]

CONSENT = "data_collection"
RAW_CODE = re.compile(r"-320\d\d|Consent required|Server error")


@pytest.fixture(scope="module")
def server(live_services, django_db_setup):  # noqa: F811 (the conftest's, with a consent)
    flush_live_redis(live_services)
    env = server_env(live_services)
    env["A2UI_REQUIRED_CONSENTS"] = CONSENT
    server = DaphneServer(env, name="person-page").wait_ready()
    yield server
    server.cleanup()


def no_raw_codes(page):
    """Nothing the page shows carries a JSON-RPC code or the protocol's own message."""
    shown = page.locator("[data-a2ui-client]").inner_text()
    assert not RAW_CODE.search(shown), shown


def give_consent_at_the_prompt(page, agent):
    prompt = page.get_by_role("dialog", name="Your consent is needed")
    expect(prompt).to_be_visible()
    prompt.get_by_role("button", name="Allow").click()
    expect(prompt).to_have_count(0)
    agent.wait_note("consent.changed", lambda p: p["granted"] is True)


def test_consent_withdrawn_and_given_again_in_the_page(page, agent):
    open_client(page)
    give_consent_at_the_prompt(page, agent)
    sid = page.evaluate("sessionStorage.getItem('a2ui.session_id')")
    answer = agent.start("request_input", sid, "text", "Your city?")
    question = page.get_by_role("dialog", name="Your city?")
    box = question.get_by_role("textbox")
    expect(box).to_be_enabled()

    # Withdrawn in the page: the question stays, paused, with a way back to the consents.
    consents = page.locator("[data-a2ui-consent]")
    consents.locator("summary").click()
    item = consents.locator(f'[data-consent-type="{CONSENT}"]')
    expect(item).to_contain_text("The agent may collect the information you enter.")
    item.get_by_role("button", name="Withdraw").click()
    agent.wait_note("consent.changed", lambda p: p["granted"] is False)
    expect(item).to_have_attribute("data-granted", "0")
    expect(box).to_be_disabled()
    expect(question.get_by_role("button", name="Send")).to_be_disabled()
    expect(question.locator(".a2ui-paused-note")).to_contain_text("Paused")
    screenshot(page, "consent-withdrawn")

    # Given again, without a reload: the same question is answerable and the answer arrives.
    page.keyboard.press("Escape")  # the list closes ...
    expect(consents).not_to_have_attribute("open", "")
    question.get_by_role("button", name="Review your consent").click()  # ... and opens again
    expect(consents).to_have_attribute("open", "")
    expect(item.get_by_role("button", name="Give consent")).to_be_focused()
    item.get_by_role("button", name="Give consent").click()
    expect(item).to_have_attribute("data-granted", "1")
    expect(box).to_be_enabled()
    expect(question.locator(".a2ui-paused-note")).to_have_count(0)
    box.fill("Lyon")
    question.get_by_role("button", name="Send").click()
    assert answer.result(15) == "Lyon"
    expect(question).to_have_count(0)
    no_raw_codes(page)
    assert page.watch.errors == []


def test_a_revocation_elsewhere_pauses_the_question_and_a_grant_brings_it_back(page, agent):
    open_client(page)
    give_consent_at_the_prompt(page, agent)
    sid = page.evaluate("sessionStorage.getItem('a2ui.session_id')")
    answer = agent.start("confirm", sid, "Book the table?", timeout_seconds=60)
    question = page.get_by_role("dialog", name=re.compile("Book the table"))
    expect(question.get_by_role("button", name="Approve")).to_be_enabled()
    # Revoked through the REST API (another tab, an app): the page is told at once.
    token = page.evaluate("document.querySelector('[data-a2ui-client]').dataset.csrfToken")
    reply = page.request.post("/api/v4/consents/revoke", data={"consent_type": CONSENT},
                              headers={"X-CSRFToken": token})
    assert reply.ok, reply.text()
    expect(question.get_by_role("button", name="Approve")).to_be_disabled()
    expect(page.locator("[data-a2ui-consent] summary")).to_contain_text("1 needed")
    # An answer sent anyway (a page without this client's pause, a race) is refused in words.
    page.evaluate("""(sid) => document.querySelector('[data-a2ui-client]').a2uiApp.connection
        .notify('user.approve', {request_id: 'nope', approved: true})""", sid)
    toast = page.locator(".a2ui-toast-error")
    expect(toast).to_contain_text("This needs your consent first")
    expect(toast).to_have_attribute("data-code", "-32010")
    no_raw_codes(page)
    # Given again through the consent prompt the server sends: the question is back.
    page.locator("[data-a2ui-consent] summary").click()
    page.locator("[data-a2ui-consent-list]").get_by_role("button", name="Give consent").click()
    expect(question.get_by_role("button", name="Approve")).to_be_enabled()
    question.get_by_role("button", name="Approve").click()
    assert answer.result(15)["approved"] is True


def test_a_frozen_agent_is_shown_offline_within_15_seconds(page, agent):
    open_client(page)
    status = page.locator("[data-a2ui-status]")
    expect(status).to_have_attribute("data-agent", "online")
    # The agent's process stays alive and its socket open, but its event loop is blocked.
    frozen = time.monotonic()
    agent.loop.call_soon_threadsafe(time.sleep, 16)
    expect(status).to_have_attribute("data-agent", "offline", timeout=15000)
    took = time.monotonic() - frozen
    assert took < 15, took
    expect(status).to_contain_text("Assistant offline")
    # Answering again: online again.
    expect(status).to_have_attribute("data-agent", "online", timeout=15000)


def test_title_logout_one_header_on_a_phone_and_chat_labels(page, agent):
    page.set_viewport_size({"width": 390, "height": 844})
    sid = open_client(page)
    assert page.title() == "Assistant · A2UI example"  # the site's title, not "A2UI"
    # One header on a phone: the site header is hidden, the client's bar is it.
    expect(page.locator(".site-header")).to_be_hidden()
    bar = page.locator(".a2ui-bar")
    expect(bar.get_by_role("heading", name="A2UI example")).to_be_visible()
    expect(bar.get_by_role("button", name="Log out")).to_be_visible()
    assert bar.bounding_box()["height"] < 844 * 0.12
    # The agent's chat messages are labelled with its name, once.
    agent.call("say", sid, "Hello there")
    message = page.locator('.a2ui-msg[data-role="agent"]')
    expect(message.locator(".a2ui-msg-sender")).to_have_text("Browser Agent")
    expect(message.locator(".a2ui-msg-head")).to_have_text("Browser Agent")
    screenshot(page, "phone-header-390")
    bar.get_by_role("button", name="Log out").click()
    expect(page).to_have_url(re.compile(r"/accounts/login/|/login"))
