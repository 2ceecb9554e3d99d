"""Polish checked by geometry, at 1280 and 390 px wide (screenshots in screenshots/).

* Toasts float over the content (opaque, fixed in the viewport under the sticky bar): showing one
  never moves the content.
* The agent's reply to an answered prompt (or a submitted form) appears where the person
  answered, not at the end of a long page.
* v0.9 surfaces share the page's theme: a Card root is the frame (no grey card inside a white
  card), with the client's panel colour, border, radius, and the client's primary button.
* Nothing overflows horizontally at 390 px.
"""

import pytest
from playwright.sync_api import expect

from a2ui.demo import booking_surface
from tests.browser.conftest import open_client, screenshot
from tests.browser.test_client import COMPONENTS, render_all

pytestmark = [pytest.mark.browser, pytest.mark.live, pytest.mark.django_db(transaction=True)]

WIDTHS = [1280, 390]

BOXES = """() => [...document.querySelectorAll('.a2ui-component')].map((el) => {
    const r = el.getBoundingClientRect();
    return { id: el.dataset.componentId, top: r.top, bottom: r.bottom, left: r.left, right: r.right };
})"""


def box(locator):
    b = locator.bounding_box()
    return {"top": b["y"], "bottom": b["y"] + b["height"], "left": b["x"],
            "right": b["x"] + b["width"]}


def overlaps(a, b):
    return a["left"] < b["right"] and b["left"] < a["right"] and a["top"] < b["bottom"] \
        and b["top"] < a["bottom"]


def filler(agent, sid, count=8):
    for i in range(count):
        agent.call("render", sid, "card", {"title": f"Filler {i}", "description": "x " * 60},
                   component_id=f"fill-{i}")


@pytest.mark.parametrize("width", WIDTHS)
def test_toasts_float_over_the_content_and_never_push_it(page, agent, width):
    page.set_viewport_size({"width": width, "height": 800})
    sid = open_client(page)
    filler(agent, sid, 10)  # taller than the viewport: the page scrolls
    expect(page.locator(".a2ui-component")).to_have_count(10)
    before = page.evaluate(BOXES)
    for title in ("Saved", "Second notice with a longer message"):
        agent.call("toast", sid, title, level="success", message="All done. " * 4, duration_ms=0)
    toasts = page.locator(".a2ui-toast")
    expect(toasts).to_have_count(2)
    page.wait_for_timeout(100)
    assert page.evaluate(BOXES) == before  # nothing moved: the toasts are over the content
    bar = box(page.locator(".a2ui-bar"))
    for i in range(2):
        t = box(toasts.nth(i))
        assert 0 <= t["left"] and t["right"] <= width, t
        assert t["top"] >= bar["bottom"] - 1, (t, bar)  # the status bar stays readable
    screenshot(page, f"toasts-{width}")
    # Scrolled: the toasts stay where they were in the viewport, and the bar sticks at the top.
    first = box(toasts.first)
    page.mouse.move(width / 2, 300)
    page.mouse.wheel(0, 600)
    page.wait_for_timeout(200)
    assert page.evaluate("window.scrollY") > 100
    assert box(toasts.first)["top"] == first["top"]
    assert box(page.locator(".a2ui-bar"))["top"] == 0
    background = page.locator(".a2ui-toast").first.evaluate(
        "el => getComputedStyle(el).backgroundColor")
    assert background not in ("transparent", "rgba(0, 0, 0, 0)")  # opaque over the content


@pytest.mark.parametrize("width", WIDTHS)
def test_reply_appears_where_the_prompt_was_answered(page, agent, width):
    page.set_viewport_size({"width": width, "height": 900})
    sid = open_client(page)
    filler(agent, sid)
    expect(page.locator(".a2ui-component")).to_have_count(8)
    pending = agent.start("request_input", sid, "text", "What would you like to search for?")
    dialog = page.get_by_role("dialog", name="What would you like to search for?")
    expect(dialog).to_be_visible()
    asked = box(dialog)
    dialog.get_by_role("textbox").fill("solar panels")
    dialog.get_by_role("button", name="Send").click()
    assert pending.result(15) == "solar panels"
    agent.call("render", sid, "card", {"title": "You asked for", "description": "solar panels"},
               component_id="reply")
    reply = page.locator('[data-component-id="reply"]')
    expect(reply).to_be_visible()
    got = box(reply)
    assert abs(got["top"] - asked["top"]) <= 40, (got, asked)  # in the prompt's place
    last_filler = box(page.locator('[data-component-id="fill-7"]'))
    assert got["bottom"] < last_filler["top"]  # not at the end of the page
    screenshot(page, f"reply-{width}")

    # Updated later, it stays there; the next component goes to the end as usual.
    agent.call("update", sid, "reply", {"description": "solar panels (3 results)"})
    expect(reply).to_contain_text("3 results")
    assert abs(box(reply)["top"] - asked["top"]) <= 40
    agent.call("render", sid, "card", {"title": "Later"}, component_id="later")
    later = page.locator('[data-component-id="later"]')
    expect(later).to_be_visible()
    assert box(later)["top"] > last_filler["top"]

    # A reload replays the session's components in order: the reply keeps its place.
    page.reload()
    expect(page.locator("[data-a2ui-client]")).to_have_attribute("data-connection", "connected")
    expect(later).to_be_visible()
    assert box(reply)["bottom"] < box(page.locator('[data-component-id="fill-7"]'))["top"]
    assert box(later)["top"] > box(page.locator('[data-component-id="fill-7"]'))["top"]


def test_form_result_appears_right_after_the_form(page, agent):
    sid = open_client(page)
    agent.call("render", sid, "form", {"title": "Search", "fields": [
        {"name": "max_price", "type": "number", "label": "Max Price (USD)"}]},
        component_id="form")
    filler(agent, sid)
    form = page.locator('[data-component-id="form"]')
    form.get_by_label("Max Price (USD)").fill("12")
    form.get_by_role("button", name="Submit").click()
    agent.wait_note("user.respond", lambda p: p.get("request_id") == "form")
    agent.call("render", sid, "card", {"title": "Form received", "sections": [
        {"label": "Max Price (USD)", "value": "12"}]}, component_id="result")
    result = page.locator('[data-component-id="result"]')
    expect(result).to_be_visible()
    gap = box(result)["top"] - box(form)["bottom"]
    assert 0 <= gap <= 40, gap

    # After a reload the result is still right after the form, not at the end of the page.
    page.reload()
    expect(page.locator("[data-a2ui-client]")).to_have_attribute("data-connection", "connected")
    expect(result).to_be_visible()
    order = page.evaluate("""() => [...document.querySelectorAll('[data-component-id]')]
        .map((el) => el.dataset.componentId)""")
    assert order.index("result") == order.index("form") + 1, order


@pytest.mark.parametrize("width", WIDTHS)
def test_v09_surface_shares_the_page_theme(page, agent, width):
    page.set_viewport_size({"width": width, "height": 900})
    sid = open_client(page)
    agent.call("render", sid, "card", {"title": "A card of the client",
                                       "actions": [{"label": "Docs", "action": "navigate",
                                                    "url": "/api/docs/"}]}, component_id="card")
    agent.call("surfaces", sid, booking_surface())
    surface = page.locator('[data-surface-id="demo-booking"]')
    expect(surface.locator("a2ui-surface")).to_contain_text("Book a table")
    expect(surface).to_have_attribute("data-root-card", "")
    styles = page.evaluate("""() => {
        const css = (el) => getComputedStyle(el);
        const wrap = document.querySelector('[data-surface-id="demo-booking"]');
        const root = wrap.querySelector('a2ui-surface').shadowRoot;
        const card = root.querySelector('.a2ui-card') || root.querySelector('a2ui-basic-card > *');
        const button = root.querySelector('button');
        const ours = document.querySelector('[data-component-id="card"]');
        const input = root.querySelector('input');
        return {
            wrap: { border: css(wrap).borderTopWidth, background: css(wrap).backgroundColor },
            card: { background: css(card).backgroundColor, border: css(card).borderTopColor,
                    radius: css(card).borderTopLeftRadius, shadow: css(card).boxShadow,
                    width: card.getBoundingClientRect().width },
            ours: { background: css(ours).backgroundColor, border: css(ours).borderTopColor,
                    radius: css(ours).borderTopLeftRadius,
                    width: ours.getBoundingClientRect().width },
            button: { background: css(button).backgroundColor, radius: css(button).borderTopLeftRadius,
                      font: css(button).fontSize, family: css(button).fontFamily },
            ourButton: { font: css(ours.querySelector('button')).fontSize,
                         family: css(ours.querySelector('button')).fontFamily },
            input: { border: css(input).borderTopStyle },
            accent: css(document.querySelector('[data-a2ui-client]')).getPropertyValue('--a2ui-accent').trim(),
        };
    }""")
    assert styles["wrap"]["border"] == "0px", styles  # no frame around the surface's Card
    assert styles["card"]["background"] == styles["ours"]["background"], styles  # no grey card
    assert styles["card"]["border"] == styles["ours"]["border"], styles
    assert styles["card"]["radius"] == styles["ours"]["radius"], styles
    assert styles["card"]["shadow"] == "none", styles
    assert abs(styles["card"]["width"] - styles["ours"]["width"]) <= 2, styles  # same column
    assert styles["button"]["background"] == "rgb(31, 111, 235)" == _rgb(styles["accent"]), styles
    assert styles["button"]["radius"] == "6px", styles
    assert (styles["button"]["font"], styles["button"]["family"]) == (
        styles["ourButton"]["font"], styles["ourButton"]["family"]), styles  # same buttons
    assert styles["input"]["border"] == "solid", styles
    assert page.evaluate("window.__cspViolations") == []
    screenshot(page, f"v09-theme-{width}")


def _rgb(hex_colour):
    h = hex_colour.lstrip("#")
    return f"rgb({int(h[0:2], 16)}, {int(h[2:4], 16)}, {int(h[4:6], 16)})"


def test_nothing_overflows_at_390_px(page, agent):
    page.set_viewport_size({"width": 390, "height": 844})
    sid = open_client(page)
    render_all(agent, sid)
    expect(page.locator(".a2ui-component")).to_have_count(len(COMPONENTS))
    agent.call("surfaces", sid, booking_surface())
    expect(page.locator("a2ui-surface")).to_contain_text("Book a table")
    page.wait_for_timeout(300)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    for c in page.evaluate(BOXES):
        assert c["right"] <= 390 and c["left"] >= 0, c
    screenshot(page, "components-390", full_page=True)
