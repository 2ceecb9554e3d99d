"""Tier 2, browser: the agent's session limit stops the client's retries with one message, and
a person's closed tab does not lock them out (the next tab takes its session over)."""

import time

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import open_client, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.live, pytest.mark.django_db(transaction=True)]


def test_limit_stops_retries_with_one_message_and_a_closed_tab_makes_room(context, page, agent):
    from a2ui.models import A2UISessionLog, Agent

    Agent.objects.update(max_concurrent_sessions=1)
    sid = open_client(page)
    agent.call("render", sid, "markdown", {"content": "still here"}, component_id="kept")
    expect(page.locator('[data-component-id="kept"]')).to_contain_text("still here")

    second = context.new_page()  # a second tab while the first is open: over the limit
    token_posts = []
    second.on("request", lambda r: token_posts.append(r.url)
              if r.method == "POST" and "stream-token" in r.url else None)
    second.goto("/a2ui/")
    client = second.locator("[data-a2ui-client]")
    expect(client).to_have_attribute("data-connection", "closed")
    status = second.locator("[data-a2ui-status]")
    expect(status).to_contain_text("Too many open sessions")
    expect(status).to_contain_text("Close other tabs")
    expect(second.get_by_role("button", name="Reconnect")).to_be_visible()
    time.sleep(4)  # a retry would come within random(0, 1 s), the next within 2 s more
    expect(client).to_have_attribute("data-connection", "closed")
    assert len(token_posts) == 1, token_posts
    expect(second.locator("[data-a2ui-toasts] [role=alert]")).to_have_count(0)
    assert A2UISessionLog.objects.filter(state="rejected").count() == 1
    screenshot(second, "session-limit")

    page.close()  # the person closes the first tab; the second may now have its session
    deadline = time.monotonic() + 10
    while not A2UISessionLog.objects.filter(pk=sid, detached_at__isnull=False).exists():
        assert time.monotonic() < deadline, "the closed tab was never detached"
        time.sleep(0.05)
    second.get_by_role("button", name="Reconnect").click()
    expect(client).to_have_attribute("data-connection", "connected")
    assert second.evaluate("sessionStorage.getItem('a2ui.session_id')") == sid
    expect(second.locator('[data-component-id="kept"]')).to_contain_text("still here")
    agent.wait_note("session.resumed", lambda p: p.get("session_id") == sid)
