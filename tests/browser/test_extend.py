"""A host project's own components, without forking the app (docs/client.md, "Your own
components"): a seed-000 component type declared with its schema (A2UI['COMPONENT_TYPES']) and a
v0.9 catalog with a component of its own (A2UI['CATALOGS']), both drawn in Chromium by the
renderers a module of the project registers (A2UI['CLIENT_MODULES'], `a2ui/client`).

The module's Daphne runs tests/browser/extend/settings.py. The server's validation in process:
tests/web/test_custom_component_types.py.
"""

import pytest
from playwright.sync_api import expect

from a2ui.rpc.errors import ProtocolError
from tests.browser.conftest import DaphneServer, open_client, screenshot, server_env
from tests.browser.extend.settings import SHOP_CATALOG
from tests.live.conftest import flush_live_redis

pytestmark = [pytest.mark.browser, pytest.mark.live, pytest.mark.django_db(transaction=True)]


@pytest.fixture(scope="module")
def server(live_services, django_db_setup):  # noqa: F811 (the conftest's, as a host project)
    flush_live_redis(live_services)
    env = server_env(live_services)
    env["DJANGO_SETTINGS_MODULE"] = "tests.browser.extend.settings"
    server = DaphneServer(env, name="extend").wait_ready()
    yield server
    server.cleanup()


def test_a_custom_component_type_is_validated_and_drawn_by_the_host_renderer(page, agent):
    sid = open_client(page)
    agent.call("render", sid, "rating", {"title": "Service <b>&amp; food</b>", "stars": 4},
               component_id="r1")
    frame = page.locator('[data-component-id="r1"]')
    rating = frame.locator(".shop-rating")
    expect(rating).to_have_attribute("aria-label", "Service & food: 4 of 5")
    expect(rating.locator(".shop-stars")).to_have_text("★★★★")
    assert rating.locator("b").count() == 0  # sanitized like the built-ins
    # Its own interaction reaches the agent as user.respond keyed by the component's id.
    rating.get_by_role("button", name="Rate 5").click()
    got = agent.wait_note("user.respond", lambda p: p.get("component_id") == "r1")
    assert got["value"] == {"stars": 5}
    # An update is drawn again by the same renderer.
    agent.call("update", sid, "r1", {"stars": 2})
    expect(rating.locator(".shop-stars")).to_have_text("★★")
    # Data its schema refuses never reaches the page: the agent gets -32602 naming the field.
    with pytest.raises(ProtocolError) as refused:
        agent.call("render", sid, "rating", {"title": "Too good", "stars": 9}, component_id="r2")
    assert refused.value.data["path"] == "params.data.stars"
    # The client declared the type: the page said it draws "rating".
    caps = page.evaluate("document.querySelector('[data-a2ui-client]').a2uiApp"
                         ".connection.options.capabilities")
    assert "rating" in caps["supported_components"]
    assert SHOP_CATALOG in caps["v0.9"]["supportedCatalogIds"]
    screenshot(page, "extend-rating")
    assert page.watch.errors == []
    assert page.evaluate("window.__cspViolations") == []


def test_a_v09_component_of_the_host_catalog_is_drawn_by_its_renderer(page, agent):
    sid = open_client(page)
    agent.call("surfaces", sid, [
        {"version": "v0.9", "createSurface": {"surfaceId": "shop", "catalogId": SHOP_CATALOG}},
        {"version": "v0.9", "updateComponents": {"surfaceId": "shop", "components": [
            {"id": "root", "component": "Column", "children": ["r"]},
            {"id": "r", "component": "Rating", "label": "Pizza", "stars": {"path": "/stars"}},
        ]}},
        {"version": "v0.9", "updateDataModel": {"surfaceId": "shop", "path": "/stars",
                                                "value": 3}},
    ])
    rating = page.locator('[data-surface-id="shop"] .shop-v09-rating')
    expect(rating).to_have_text("Pizza: ★★★")
    expect(rating).to_have_attribute("data-stars", "3")
    # A binding change draws it again.
    agent.call("surfaces", sid, [{"version": "v0.9", "updateDataModel": {
        "surfaceId": "shop", "path": "/stars", "value": 5}}])
    expect(rating).to_have_text("Pizza: ★★★★★")
    # A component the catalog does not have is refused by the server.
    with pytest.raises(ProtocolError):
        agent.call("surfaces", sid, [{"version": "v0.9", "updateComponents": {
            "surfaceId": "shop", "components": [{"id": "t", "component": "Text", "text": "x"}]}}])
    screenshot(page, "extend-v09")
    assert page.watch.errors == []
    assert page.evaluate("window.__cspViolations") == []
