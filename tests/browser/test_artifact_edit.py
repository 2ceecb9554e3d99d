"""Editable artifacts and the chat option of the web client, in Chromium.

An artifact the agent opened with ``read_only: false`` has an Edit button: the person edits the
code in a textarea and sends it, and the agent gets ``user.action`` ``artifact_edit`` with the
content; a read-only artifact has no edit mode; an agent update during an edit shows a notice and
never overwrites the person's text (they keep it or load the agent's version). With
``{% a2ui_client chat=True %}`` (``data-chat="1"``) the chat box is there before any activity and
a message from it reaches the agent as ``user.message``. No CSP violation, console error or style
attribute on the way.
"""

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import open_client, screenshot
from tests.browser.test_activity import push

pytestmark = [pytest.mark.browser, pytest.mark.live, pytest.mark.django_db(transaction=True)]

# A character outside the BMP: base_length counts it once, as the server does.
RUST = 'fn main() {\n    println!("a < b 😀");\n}\n'


def listen(agent, method):
    agent.client.on(method, agent._recorder(method))


def clean(page):
    styled = page.evaluate("[...document.querySelectorAll('.a2ui-client [style]')].map(e => e.outerHTML.slice(0, 200))")
    assert styled == []
    assert page.evaluate("window.__cspViolations") == []
    assert page.watch.errors == []
    assert page.watch.foreign_requests() == []


def open_artifact(page, agent, read_only, **extra):
    sid = open_client(page)
    push(agent, sid, type="ARTIFACT_OPEN", id="f1", title="main.rs", content=RUST,
         content_type="text/x-rust", language="rust", **extra,
         **({} if read_only is None else {"read_only": read_only}))
    artifact = page.locator('[data-artifact-id="f1"]')
    expect(artifact.locator("pre code")).to_have_attribute("data-highlighted", "rust")
    return sid, artifact


def edit_button(artifact):
    return artifact.get_by_role("button", name="Edit", exact=True)


def test_an_editable_artifact_is_edited_and_sent_to_the_agent(page, agent):
    listen(agent, "user.action")
    sid, artifact = open_artifact(page, agent, read_only=False)
    expect(artifact.locator(".a2ui-badge")).to_have_text("Editable")
    edit_button(artifact).click()
    editor = artifact.locator("textarea")
    expect(editor).to_be_focused()
    expect(editor).to_have_value(RUST)
    expect(edit_button(artifact)).to_have_count(0)
    expect(artifact.locator(".a2ui-badge")).to_have_text("Editing")

    edited = RUST.replace("a < b", "a <= b") + "// <b>mine</b> & yours\n"
    editor.fill(edited)
    artifact.get_by_role("button", name="Send to agent").click()
    expect(artifact.get_by_role("status")).to_have_text("Sent to the agent.")
    clean(page)
    screenshot(page, "artifact-edit")  # (Playwright's screenshot leaves style="" on textareas)
    note = agent.wait_note("user.action")
    assert note == {"session_id": sid, "action_type": "artifact_edit", "component_id": "f1",
                    "payload": {"content": edited, "base_length": len(RUST)}}

    # The agent takes the edit (the same content back): no notice, the editor stays as it is.
    push(agent, sid, type="ARTIFACT_UPDATE", id="f1", content=edited, change_type="full_replace")
    expect(artifact).to_have_attribute("data-change", "full_replace")
    expect(artifact.locator("[data-a2ui-artifact-notice]")).to_be_hidden()
    expect(editor).to_have_value(edited)
    # Closing the editor shows the agent's version, highlighted.
    artifact.get_by_role("button", name="Close editor").click()
    code = artifact.locator("pre code")
    expect(code).to_have_attribute("data-highlighted", "rust")
    assert code.evaluate("el => el.textContent") == edited
    expect(edit_button(artifact)).to_be_visible()
    assert page.evaluate("window.__cspViolations") == []
    assert page.watch.errors == []


@pytest.mark.parametrize("read_only", [True, None])
def test_a_read_only_artifact_has_no_edit_mode(page, agent, read_only):
    sid, artifact = open_artifact(page, agent, read_only=read_only)
    expect(artifact.locator(".a2ui-badge")).to_have_text("Read-only")
    expect(edit_button(artifact)).to_have_count(0)
    expect(artifact.locator("textarea")).to_have_count(0)
    assert artifact.get_attribute("data-editable") == "0"
    # Still none after an update.
    push(agent, sid, type="ARTIFACT_UPDATE", id="f1", content="// more\n", change_type="partial")
    expect(artifact.locator("pre code")).to_contain_text("// more")
    expect(edit_button(artifact)).to_have_count(0)
    clean(page)


def test_an_agent_update_during_an_edit_shows_a_notice_and_does_not_overwrite(page, agent):
    listen(agent, "user.action")
    sid, artifact = open_artifact(page, agent, read_only=False)
    edit_button(artifact).click()
    editor = artifact.locator("textarea")
    mine = RUST + "// mine\n"
    editor.fill(mine)
    notice = artifact.locator("[data-a2ui-artifact-notice]")
    send = artifact.get_by_role("button", name="Send to agent")

    theirs = RUST + "// theirs\n"
    push(agent, sid, type="ARTIFACT_UPDATE", id="f1", content="// theirs\n",
         change_type="partial")
    expect(notice).to_be_visible()
    expect(notice).to_contain_text("The agent changed this file.")
    expect(editor).to_have_value(mine)  # not overwritten
    expect(editor).to_be_focused()  # the editor stayed in place
    expect(send).to_be_disabled()  # the person chooses first

    # Keep: the edit stays and is sent over the agent's new version.
    notice.get_by_role("button", name="Keep my edit").click()
    expect(notice).to_be_hidden()
    expect(editor).to_have_value(mine)
    send.click()
    note = agent.wait_note("user.action")
    assert note["payload"] == {"content": mine, "base_length": len(theirs)}

    # Another change of the agent's; this time the person loads it.
    newest = "fn main() {}\n"
    push(agent, sid, type="ARTIFACT_UPDATE", id="f1", content=newest,
         change_type="full_replace")
    expect(notice).to_be_visible()
    expect(editor).to_have_value(mine)
    notice.get_by_role("button", name="Load the agent’s version").click()
    expect(notice).to_be_hidden()
    expect(editor).to_have_value(newest)
    expect(send).to_be_enabled()

    # The agent makes it read-only during the edit: said so, nothing overwritten, no sending.
    editor.fill("// again mine\n")
    push(agent, sid, type="ARTIFACT_OPEN", id="f1", title="main.rs", content=newest,
         content_type="text/x-rust", language="rust", read_only=True)
    expect(notice).to_contain_text("read-only")
    expect(notice.get_by_role("button", name="Keep my edit")).to_be_hidden()
    expect(editor).to_have_value("// again mine\n")
    expect(send).to_be_disabled()
    clean(page)


# The client page as ``{% a2ui_client chat=True %}`` renders it: tests/web/test_client_tag.py
# checks the tag writes ``data-chat="1"``; here the attribute is set as the parser inserts the
# container, before the client's module runs (the page as served, its CSP included, otherwise).
# (Fulfilling the page from a Playwright route instead makes Chromium's local network access
# checks refuse the page's WebSocket.)
CHAT_ON = """
new MutationObserver((records, observer) => {
  const root = document.querySelector('[data-a2ui-client]');
  if (root) { root.dataset.chat = '1'; observer.disconnect(); }
}).observe(document, { childList: true, subtree: true });
"""


def test_the_chat_option_shows_the_chat_box_before_any_activity(page, agent):
    listen(agent, "user.message")
    page.add_init_script(CHAT_ON)
    sid = open_client(page)
    chat = page.locator("[data-a2ui-chat]")
    expect(chat).to_be_visible()  # no activity was pushed
    box = chat.locator("textarea")
    box.fill("Hello, can you help me?")
    box.press("Enter")
    expect(chat.locator('[data-role="user"] .a2ui-msg-text')).to_have_text(
        "Hello, can you help me?")
    expect(box).to_have_value("")
    note = agent.wait_note("user.message")
    assert note["session_id"] == sid and note["content"] == "Hello, can you help me?"
    # A reload keeps it (and the message, from the activity snapshot).
    page.reload()
    expect(page.locator("[data-a2ui-client]")).to_have_attribute("data-connection", "connected")
    expect(chat).to_be_visible()
    expect(chat.locator('[data-role="user"]')).to_have_count(1)
    clean(page)
