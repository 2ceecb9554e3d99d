"""An A2UI v0.9 surface rendered by the official @a2ui/lit renderer, and its action round trip.

The agent sends ``a2ui.v09`` {session_id, messages: [createSurface, updateComponents,
updateDataModel]} on the agent socket; the person types into the surface's TextField and presses
its Button; the agent receives the notification ``a2ui.v09`` {session_id, messages: [{version,
action}]} with the action's context resolved from the data model.
"""

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
    # @a2ui/lit 0.11's TextField does not tie its <label> to the <input> (docs/client.md).
    expect(surface.locator("a2ui-basic-textfield label")).to_have_text("Your name")
    name = surface.locator("a2ui-basic-textfield").get_by_role("textbox")
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
