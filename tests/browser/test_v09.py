"""An A2UI v0.9 surface rendered by the official @a2ui/lit renderer, and its action round trip.

The agent sends ``a2ui.v09`` {session_id, messages: [createSurface, updateComponents,
updateDataModel]} on the agent socket; the person types into the surface's TextField and presses
its Button; the agent receives the notification ``a2ui.v09`` {session_id, messages: [{version,
action}]} with the action's context resolved from the data model.
"""

import re

import pytest
from playwright.sync_api import expect

from a2ui.demo import booked_surface, booking_surface
from tests.browser.conftest import open_client, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.live, pytest.mark.django_db(transaction=True)]


def test_v09_surface_renders_and_its_action_reaches_the_agent(page, agent):
    sid = open_client(page)
    result = agent.call("surfaces", sid, booking_surface("booking"))
    assert result["delivered"] == 3

    surface = page.locator('[data-surface-id="booking"] a2ui-surface')
    expect(surface).to_be_visible()
    expect(surface).to_contain_text("Book a table (A2UI v0.9)")
    # The label is tied to its input (v09catalog.js): found by its accessible name.
    name = surface.get_by_label("Your name")
    expect(name).to_have_attribute("id", re.compile(r"^a2ui-v09-field-\d+$"))
    expect(surface.get_by_role("textbox", name="Your name")).to_be_visible()
    name.fill("Ada")
    screenshot(page, "v09-surface")
    surface.get_by_role("button", name="Book").click()

    params = agent.wait_note("a2ui.v09", lambda p: p.get("session_id") == sid)
    (message,) = params["messages"]
    assert message["version"] == "v0.9"
    action = message["action"]
    assert action["name"] == "book"
    assert action["surfaceId"] == "booking"
    assert action["sourceComponentId"] == "book"
    assert action["context"] == {"name": "Ada"}

    agent.call("surfaces", sid, booked_surface("Ada", "booked"))
    expect(page.locator('[data-surface-id="booked"]')).to_contain_text(
        "Booked! See you tonight, Ada.")

    # A reload resumes the session; the surfaces come back from the server's snapshot.
    page.reload()
    expect(page.locator("[data-a2ui-client]")).to_have_attribute("data-connection", "connected")
    expect(page.locator('[data-surface-id="booking"] a2ui-surface')).to_contain_text(
        "Book a table")
    expect(page.locator('[data-surface-id="booked"]')).to_contain_text("Booked!")
    assert page.evaluate("window.__cspViolations") == []
    assert page.watch.foreign_requests() == []


def test_v09_surface_ids_deleted_while_away_and_created_again(page, agent):
    """A2UI v0.9.1: a surface the socket missed the deletion of goes at the resume (the
    snapshot replaces every surface), and an id deleted and created again live shows the new
    surface once, in the official renderer."""
    routes = []

    def route(ws):  # the person's JSON-RPC socket; the first one can be made deaf, then cut
        server = ws.connect_to_server()
        deaf = {"on": False}
        server.on_message(lambda message: None if deaf["on"] else ws.send(message))
        routes.append((ws, server, deaf))

    page.route_web_socket(re.compile(r".*/ws/v4/a2ui\?.*"), route)
    sid = open_client(page)
    agent.call("surfaces", sid, booking_surface("gone") + booked_surface("Ada", "kept"))
    expect(page.locator('[data-surface-id="gone"] a2ui-surface')).to_contain_text("Book a table")
    expect(page.locator('[data-surface-id="kept"]')).to_contain_text("Booked!")

    ws, server, deaf = routes[0]
    deaf["on"] = True  # the page does not hear the deletion ...
    agent.call("surfaces", sid, [{"version": "v0.9", "deleteSurface": {"surfaceId": "gone"}}])
    server.close()  # ... and its socket drops: it reconnects and resumes the session
    ws.close(code=4000, reason="test")
    expect(page.locator("[data-a2ui-client]")).to_have_attribute("data-connection", "connected")
    assert len(routes) == 2
    expect(page.locator('[data-surface-id="gone"]')).to_have_count(0)
    expect(page.locator('[data-surface-id="kept"]')).to_contain_text("Booked!")

    # deleted and created again in one batch (said as v0.9.1): the new surface, once, last
    again = [{"version": "v0.9.1", "deleteSurface": {"surfaceId": "kept"}},
             *({**m, "version": "v0.9.1"} for m in booking_surface("kept"))]
    assert agent.call("surfaces", sid, again)["delivered"] == 4
    kept = page.locator('[data-surface-id="kept"]')
    expect(kept.locator("a2ui-surface")).to_contain_text("Book a table")
    expect(kept).to_have_count(1)
    expect(kept).not_to_contain_text("Booked!")
    assert page.locator("[data-surface-id]").evaluate_all(
        "els => els.map((e) => e.dataset.surfaceId)") == ["kept"]
    expect(page.locator(".a2ui-toast")).to_have_count(0)  # no "not applied" error
    assert page.watch.errors == []
