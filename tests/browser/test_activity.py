"""The session's AG-UI-native activity in Chromium, as a person sees it (``ui.activity``).

An agent pushes each kind with ``agui.event`` and the page shows it: the chat transcript (agent
markdown, system and user messages), a tool call whose status changes, a plan card, the resource
tree, the roster, an artifact opened then updated (partial, diff), the state document; the person
sends a chat message that reaches the agent as ``user.message``; a reload (resume) shows the same
again. Script in every text field of every kind runs nothing, and the strict CSP sees no
violation.
"""

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import open_client, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.live, pytest.mark.django_db(transaction=True)]

RUST = 'fn main() {\n    println!("a < b");\n}\n'
DIFF = ("--- a/main.rs\n+++ b/main.rs\n@@ -1,3 +1,3 @@\n fn main() {\n"
        '-    println!("a < b");\n+    println!("b > a");\n }\n')
TREE = {"id": "root", "name": "project", "node_type": "folder", "children": [
    {"id": "src", "name": "src", "node_type": "folder", "children": [
        {"id": "main", "name": "main.rs", "node_type": "file"}]},
    {"id": "readme", "name": "README.md", "node_type": "file"}]}


def push(agent, sid, **event):
    return agent.call("agui_event", sid, event)


def listen_for_messages(agent):
    agent.client.on("user.message", agent._recorder("user.message"))


def shown_activity(page):
    """Each kind on the page (after the pushes of test_each_kind...)."""
    chat = page.locator("[data-a2ui-chat]")
    expect(chat.locator('[data-role="agent"] .a2ui-markdown strong')).to_have_text("Hello")
    expect(chat.locator('[data-role="system"]')).to_contain_text("Session started")
    call = page.locator('[data-call-id="c1"]')
    expect(call).to_have_attribute("data-status", "COMPLETED")
    expect(call.locator(".a2ui-tool-name")).to_have_text("search")
    expect(call.locator(".a2ui-tool-result pre")).to_contain_text('"hits": 3')
    expect(page.locator('[data-call-id="c2"]')).to_have_attribute("data-status", "FAILED")
    expect(page.locator('[data-call-id="c2"] .a2ui-tool-error')).to_have_text("timeout")
    plan = page.locator('[data-plan-id="p1"]')
    expect(plan).to_have_attribute("data-status", "ACTIVE")
    expect(plan.locator(".a2ui-plan-title")).to_have_text("Refactor")
    expect(plan.locator(".a2ui-markdown li")).to_have_text(["read the code", "change it"])
    tree = page.locator("[data-a2ui-resources]")
    expect(tree.locator('[data-node-id="main"] .a2ui-tree-name')).to_have_text("main.rs")
    expect(tree.locator('[data-node-id="readme"]')).to_be_visible()
    roster = page.locator("[data-a2ui-roster]")
    expect(roster.locator('[data-agent-id="a1"]')).to_have_attribute("data-status", "BUSY")
    expect(roster.locator('[data-agent-id="a2"] .a2ui-agent-name')).to_have_text("Reviewer")
    code = page.locator('[data-artifact-id="f1"] pre code')
    expect(code).to_have_attribute("data-highlighted", "rust")
    assert code.evaluate("el => el.textContent") == RUST.replace("a < b", "b > a") + "// done\n"
    state = page.locator("[data-a2ui-state]")
    assert "theme" in state.locator("pre").text_content()


def test_each_kind_is_shown_the_chat_reaches_the_agent_and_a_reload_shows_it_again(page, agent):
    listen_for_messages(agent)
    sid = open_client(page)
    expect(page.locator("[data-a2ui-chat]")).to_be_hidden()  # no activity yet

    push(agent, sid, type="TEXT_MESSAGE", sender="system", role="system", content="Session started")
    push(agent, sid, type="TEXT_MESSAGE", sender="Helper", content="**Hello** `code`")
    chat = page.locator("[data-a2ui-chat]")
    expect(chat.locator('[data-role="agent"] .a2ui-msg-sender')).to_have_text("Helper")

    push(agent, sid, type="TOOL_CALL_REQUEST", id="c1", tool_name="search",
         parameters={"q": "rust"})
    call = page.locator('[data-call-id="c1"]')
    expect(call).to_have_attribute("data-status", "PENDING")
    push(agent, sid, type="TOOL_CALL_STATUS", id="c1", status="RUNNING", progress=40,
         message="Searching")
    expect(call).to_have_attribute("data-status", "RUNNING")
    expect(call.locator("progress")).to_have_attribute("value", "40")
    expect(call.locator(".a2ui-tool-message")).to_have_text("Searching")
    push(agent, sid, type="TOOL_CALL_RESULT", id="c1", result={"hits": 3})
    push(agent, sid, type="TOOL_CALL_REQUEST", id="c2", tool_name="fetch", parameters={})
    push(agent, sid, type="TOOL_CALL_RESULT", id="c2", error="timeout")

    push(agent, sid, type="PLAN_CARD", id="p1", title="Refactor",
         content="1. read the code\n2. change it", status="ACTIVE")
    push(agent, sid, type="RESOURCE_TREE", root=TREE)
    push(agent, sid, type="AGENT_ROSTER", agents=[
        {"id": "a1", "name": "Coder", "status": "BUSY"},
        {"id": "a2", "name": "Reviewer", "status": "IDLE"}])

    push(agent, sid, type="ARTIFACT_OPEN", id="f1", title="main.rs", content=RUST,
         content_type="text/x-rust", language="rust", read_only=True)
    code = page.locator('[data-artifact-id="f1"] pre code')
    expect(code).to_have_attribute("data-highlighted", "rust")
    assert code.evaluate("el => el.textContent") == RUST  # "<" kept as written
    push(agent, sid, type="ARTIFACT_UPDATE", id="f1", content=DIFF, change_type="diff")
    expect(code).to_contain_text('"b > a"')
    push(agent, sid, type="ARTIFACT_UPDATE", id="f1", content="// done\n", change_type="partial")
    expect(code).to_contain_text("// done")

    push(agent, sid, type="STATE_DELTA", path="user.theme", new_value="dark")
    state = page.locator("[data-a2ui-state]")
    expect(state).to_be_visible()
    state.locator("summary").click()
    expect(state.locator("pre")).to_contain_text('"theme": "dark"')
    push(agent, sid, type="STATE_DELTA", path="user.theme", old_value="dark", new_value="light")
    expect(state.locator("pre")).to_contain_text('"theme": "light"')

    # Folders collapse and open.
    src = page.locator('[data-node-id="src"] > details')
    expect(page.locator('[data-node-id="main"]')).to_be_hidden()
    src.locator("summary").first.click()
    expect(page.locator('[data-node-id="main"]')).to_be_visible()

    shown_activity(page)
    expect(page.locator("[data-a2ui-empty]")).to_be_hidden()
    screenshot(page, "activity", full_page=True)

    # The person's chat message: in the transcript as theirs, and at the agent.
    box = chat.locator("textarea")
    box.fill("Please *also* add tests <b>now</b>")
    box.press("Enter")
    mine = chat.locator('[data-role="user"]')
    expect(mine).to_have_count(1)
    expect(mine.locator(".a2ui-msg-text")).to_contain_text("Please *also* add tests")
    expect(box).to_have_value("")
    note = agent.wait_note("user.message")
    assert note["session_id"] == sid
    assert note["content"] == "Please *also* add tests <b>now</b>"

    # A reload resumes the session: the snapshot shows the same again.
    page.reload()
    expect(page.locator("[data-a2ui-client]")).to_have_attribute("data-connection", "connected")
    assert page.evaluate("sessionStorage.getItem('a2ui.session_id')") == sid
    shown_activity(page)
    expect(page.locator('[data-a2ui-chat] [data-role="user"]')).to_have_count(1)
    expect(page.locator('[data-call-id]')).to_have_count(2)

    assert page.locator(".a2ui-activity [style]").count() == 0
    assert page.evaluate("window.__cspViolations") == []
    assert page.watch.errors == []
    assert page.watch.foreign_requests() == []


def test_a_refused_chat_message_stays_in_the_box_with_the_reason(page, agent):
    sid = open_client(page)
    push(agent, sid, type="TEXT_MESSAGE", sender="Helper", content="Ask me")
    chat = page.locator("[data-a2ui-chat]")
    box = chat.locator("textarea")
    # Longer than the server's limit (the textarea's maxlength is the default limit, 16000):
    # refused before anything changes, the text stays for the person to shorten.
    page.evaluate("el => el.removeAttribute('maxlength')", box.element_handle())
    box.fill("x" * 16001)
    chat.locator("button[type=submit]").click()
    expect(chat.locator(".a2ui-field-error")).to_contain_text("Not sent")
    expect(box).to_have_value("x" * 16001)
    expect(chat.locator('[data-role="user"]')).to_have_count(0)


HOSTILE = ('X-{f} <img src=x onerror="window.__xss=1;alert(1)"><script>window.__xss=1</script>'
           '<svg onload="window.__xss=1"></svg><a href="javascript:window.__xss=1">l</a>'
           ' &lt;img src=x onerror=alert(1)&gt; [md](javascript:window.__xss=1)')
# Names and titles are at most 200 characters.
SHORT = 'X-{f} <img src=x onerror="window.__xss=1"><script>window.__xss=1</script>&lt;b&gt;'


def test_script_in_every_text_field_of_every_kind_runs_nothing(page, agent):
    listen_for_messages(agent)
    sid = open_client(page)

    def x(field):
        return HOSTILE.format(f=field)

    def n(field):
        return SHORT.format(f=field)

    push(agent, sid, type="TEXT_MESSAGE", sender=n("sender"), content=x("agent-content"))
    push(agent, sid, type="TEXT_MESSAGE", sender=n("sys"), role="system", content=x("system"))
    push(agent, sid, type="TOOL_CALL_REQUEST", id="t1", tool_name=n("tool"),
         parameters={"q": x("param")})
    push(agent, sid, type="TOOL_CALL_STATUS", id="t1", status="RUNNING", message=x("tool-msg"))
    push(agent, sid, type="TOOL_CALL_RESULT", id="t1", result={"r": x("result")},
         error=x("error"))
    push(agent, sid, type="PLAN_CARD", id="p", title=n("plan-title"), content=x("plan"),
         status="ACTIVE")
    push(agent, sid, type="RESOURCE_TREE", root={
        "id": "r", "name": n("folder"), "node_type": n("type"),
        "children": [{"id": "f", "name": n("file"), "node_type": "file"}]})
    push(agent, sid, type="AGENT_ROSTER", agents=[{"id": n("agent-id"), "name": n("agent"),
                                                   "status": "ONLINE"}])
    push(agent, sid, type="ARTIFACT_OPEN", id="a", title=n("artifact-title"),
         content=x("artifact"), content_type="text/html", language="html")
    push(agent, sid, type="ARTIFACT_UPDATE", id="a", content=x("partial"),
         change_type="partial")
    push(agent, sid, type="STATE_DELTA", path="k", new_value={"v": x("state")})
    chat = page.locator("[data-a2ui-chat]")
    box = chat.locator("textarea")
    box.fill(x("user"))
    box.press("Enter")
    expect(chat.locator('[data-role="user"]')).to_contain_text("X-user")
    agent.wait_note("user.message")

    artifact = page.locator('[data-artifact-id="a"] pre code')
    expect(artifact).to_contain_text("X-partial")
    # Artifact content is code kept as written: the markup is there, as text.
    assert '<img src=x onerror="window.__xss=1;alert(1)">' in artifact.text_content()
    expect(artifact).to_have_attribute("data-highlighted", "html")
    page.locator("[data-a2ui-state] summary").click()
    for field in ("sender", "agent-content", "sys", "system", "tool", "tool-msg", "error",
                  "plan-title", "plan", "folder", "file", "agent", "artifact-title", "user"):
        expect(page.locator(".a2ui-activity").get_by_text(f"X-{field}").first).to_be_visible()
    for field in ("param", "result", "state"):
        assert f"X-{field}" in page.locator(".a2ui-activity").first.text_content() + \
            page.locator(".a2ui-activity").last.text_content()

    page.wait_for_timeout(300)  # any handler, load or script would have run by now
    activity = page.locator(".a2ui-activity")
    assert activity.locator("script, img, svg, iframe, [onerror], [onload]").count() == 0
    assert page.locator('.a2ui-activity a[href^="javascript"]').count() == 0
    assert page.evaluate("window.__xss") is None
    assert page.watch.dialogs == []
    assert page.evaluate("window.__cspViolations") == []
    assert page.watch.foreign_requests() == []
    assert page.watch.errors == []


def test_the_new_messages_of_an_agui_run_are_shown_at_once(page, agent, person, server):
    """A person's AG-UI 1.0 run (another client of the same session: ``threadId`` is its id)
    with several new messages reaches the page as one ``ui.activity`` ``message.batch``."""
    import httpx

    from a2ui import tokens

    sid = open_client(page)
    token = tokens.issue_stream_token(person, agent.record, "stream_agui").token
    history = [{"id": "h0", "role": "assistant", "content": "earlier"},
               *({"id": f"m{i}", "role": "user", "content": f"line {i}"} for i in range(3))]
    with httpx.Client(timeout=20) as client, client.stream(
            "POST", f"{server.url}/api/v4/agui/run", headers={"Authorization": f"Bearer {token}"},
            json={"threadId": sid, "runId": "r1", "messages": history}) as response:
        assert response.status_code == 200
        data = (line for line in response.iter_lines() if line.startswith("data:"))
        assert '"RUN_STARTED"' in next(data)  # after its "id: 1" line
        mine = page.locator('[data-a2ui-chat] [data-role="user"] .a2ui-msg-text')
        expect(mine).to_have_text(["line 0", "line 1", "line 2"])
    assert page.watch.errors == []
