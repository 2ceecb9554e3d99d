"""``manage.py a2ui_demo`` as people run it: a subprocess that starts Daphne and the demo agent.

Chromium signs in through the admin login as demo / demo-password, watches the walkthrough
arrive, answers its input request and approves its confirmation. The command runs as
``setsid make demo < /dev/null &`` runs it: a session of its own, no stdin, SIGINT ignored (as
in any background job); SIGINT stays ignored and SIGTERM stops it cleanly (exit status 0, its
Daphne child stopped and reaped, nothing left in its process group). Run in a terminal, Ctrl-C
(SIGINT) stops it the same way.
"""

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from playwright.sync_api import expect

from a2ui.management.commands.a2ui_demo import DAPHNE_STOP_TIMEOUT
from tests.browser.conftest import ROOT, drawn_chart, screenshot, server_env
from tests.live.conftest import flush_live_redis, free_port

pytestmark = [pytest.mark.browser, pytest.mark.live, pytest.mark.django_db(transaction=True)]

START_TIMEOUT = 60.0
STOP_TIMEOUT = 30.0


class Demo:
    """The command's process, with its output collected by a reader thread."""

    def __init__(self, env, port, background=True):
        self.port = port
        self.lines = []
        self.changed = threading.Condition()
        self.proc = subprocess.Popen(
            [sys.executable, "manage.py", "a2ui_demo", "--port", str(port), "--no-migrate"],
            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, text=True, start_new_session=True,
            # A background job (``&``, setsid, nohup) starts with SIGINT ignored; a demo in a
            # terminal with SIGINT at its default, whatever this test run inherited (it may
            # itself be a background job: `setsid make test < /dev/null &`).
            preexec_fn=lambda: signal.signal(
                signal.SIGINT, signal.SIG_IGN if background else signal.SIG_DFL),
        )
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stdout:
            with self.changed:
                self.lines.append(line.rstrip("\n"))
                self.changed.notify_all()
        with self.changed:
            self.changed.notify_all()

    @property
    def output(self):
        return "\n".join(self.lines)

    def wait_for_line(self, pattern, timeout=START_TIMEOUT):
        deadline = time.monotonic() + timeout
        with self.changed:
            while True:
                for line in self.lines:
                    if re.search(pattern, line):
                        return line
                left = deadline - time.monotonic()
                if left <= 0 or (self.proc.poll() is not None and not self.reader.is_alive()):
                    raise AssertionError(f"no line matching {pattern!r}:\n{self.output}")
                self.changed.wait(min(left, 0.5))

    def children(self):
        path = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children")
        return [int(pid) for pid in path.read_text().split()]

    def group_alive(self):
        """True while any process is left in the command's process group (its session)."""
        try:
            os.killpg(self.proc.pid, 0)
        except ProcessLookupError:
            return False
        return True

    def kill(self):
        if self.group_alive():
            os.killpg(self.proc.pid, signal.SIGKILL)
        if self.proc.poll() is None:
            self.proc.wait(STOP_TIMEOUT)

    def assert_clean_stop(self, daphne_pid, status=0, last_line="Stopped."):
        assert self.proc.wait(STOP_TIMEOUT) == status, self.output
        self.reader.join(STOP_TIMEOUT)
        assert self.lines[-1] == last_line, self.output
        # A stop at any moment (even soon after the start) leaves no unretrieved task error
        # (the agent's socket closing under it: ConnectionClosedOK) and no traceback.
        for trace in ("Task exception was never retrieved", "ConnectionClosed", "Traceback"):
            assert trace not in self.output, self.output
        assert gone(daphne_pid), f"Daphne ({daphne_pid}) outlived the demo command"
        assert not self.group_alive(), "a process of the demo's group outlived it"


def gone(pid, timeout=STOP_TIMEOUT):
    """True once ``pid`` no longer exists (reaped), waiting up to ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state == "Z":
            return False  # exited but nobody waited for it: the command did not clean up
        time.sleep(0.05)
    return False


@pytest.fixture
def start_demo(request, live_services, transactional_db):
    flush_live_redis(live_services)
    env = server_env(live_services)
    env.pop("A2UI_DEFAULT_AGENT", None)
    demos = []

    def start(background=True):
        demos.append(Demo(env, free_port(), background=background))
        request.node._demo_output = demos[-1]
        return demos[-1]

    yield start
    for proc in demos:
        proc.kill()


@pytest.fixture
def demo(start_demo):
    return start_demo()


def test_demo_command_walkthrough_and_clean_stop(browser, demo):
    base = f"http://127.0.0.1:{demo.port}"
    assert demo.wait_for_line(r"Open\s+").split()[-1] == f"{base}/a2ui/"
    assert "demo / demo-password" in demo.wait_for_line(r"Log in\s+")
    (daphne_pid,) = demo.children()

    context = browser.new_context(base_url=base, viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        console = []
        page.on("console", lambda msg: console.append(f"{msg.type}: {msg.text} {msg.location}"))
        page.goto("/a2ui/")
        expect(page).to_have_url(re.compile(r"/accounts/login/\?next=/a2ui/$"))
        page.locator("#id_username").fill("demo")
        page.locator("#id_password").fill("demo-password")
        page.get_by_role("button", name="Log in").click()
        expect(page).to_have_url(f"{base}/a2ui/")
        console.clear()  # the admin's login page has no favicon (/favicon.ico: 404)
        expect(page.locator("[data-a2ui-client]")).to_have_attribute(
            "data-connection", "connected")

        # The walkthrough: a toast, the steps, the nine kinds of components, progress, a surface.
        main = page.locator("[data-a2ui-client]")
        expect(main.locator(".a2ui-toast").first).to_contain_text("Hello from the demo agent")
        for kind in ("steps", "card", "table", "chart", "markdown", "code", "image", "alert",
                     "form"):
            expect(main.locator(f'[data-component-type="{kind}"]').first).to_be_visible()
        expect(main.get_by_role("heading", name="Agent Summary")).to_be_visible()
        expect(main.get_by_role("heading", name="Analysis Report")).to_be_visible()
        pie = main.locator(".a2ui-chart-pie").locator("xpath=../..")
        assert len(drawn_chart(pie)["data"][0]) == 3  # three slices
        expect(pie.locator(".a2ui-chart-legend li")).to_have_text(
            ["research", "trading", "analytics"])
        expect(main.locator("a2ui-surface")).to_contain_text("Book a table")

        # The demo asks for a consent: its questions wait until the person allows it.
        consent = page.get_by_role("dialog", name="Your consent is needed")
        expect(consent).to_contain_text("The agent may collect the information you enter.")
        # ... and the bar says one is missing (the person's consents, in the page).
        expect(page.locator("[data-a2ui-consent]")).to_have_attribute("data-missing", "1")
        expect(page.get_by_role("dialog", name="What would you like to search for?")
               ).to_have_count(0)
        consent.get_by_role("button", name="Allow").click()

        dialog = page.get_by_role("dialog", name="What would you like to search for?")
        box = dialog.get_by_role("textbox")
        expect(box).to_be_focused()
        box.fill("solar panels")
        screenshot(page, "demo-input")
        dialog.get_by_role("button", name="Send").click()
        expect(main.get_by_role("region", name="You asked for")).to_contain_text("solar panels")

        confirm = page.get_by_role("dialog", name=re.compile("Confirm Purchase"))
        expect(confirm).to_contain_text("This will charge $50.00 to your account.")
        confirm.get_by_role("button", name="Approve").click()
        expect(main.locator(".a2ui-toast", has_text="Purchase approved")).to_be_visible()
        expect(main.locator('[data-component-id="demo-steps"] .a2ui-step-completed')).to_have_count(3)
        screenshot(page, "demo", full_page=True)

        # The person's consents, and their revocation, which the agent is told of at once.
        consents = page.request.get(f"{base}/api/v4/consents").json()
        assert [(c["consent_type"], c["in_force"]) for c in consents["consents"]] == [
            ("data_collection", True)]
        assert consents["required"][0]["granted"] is True
        csrf = next(c["value"] for c in context.cookies() if c["name"] == "csrftoken")
        revoked = page.request.post(f"{base}/api/v4/consents/revoke",
                                    data={"consent_type": "data_collection"},
                                    headers={"X-CSRFToken": csrf, "Referer": f"{base}/a2ui/"})
        assert revoked.status == 200, revoked.text()
        expect(main.locator(".a2ui-toast", has_text="Consent revoked")).to_be_visible()
        # The page is told too: the consent is listed as withdrawn, without a reload.
        expect(page.locator("[data-a2ui-consent] summary")).to_contain_text("1 needed")
        assert not [line for line in console if line.startswith("error")], console
    finally:
        context.close()

    # A background job ignores SIGINT; a service manager (or `kill`) stops it with SIGTERM.
    demo.proc.send_signal(signal.SIGINT)
    time.sleep(1)
    assert demo.proc.poll() is None and demo.children() == [daphne_pid], demo.output
    started = time.monotonic()
    demo.proc.send_signal(signal.SIGTERM)
    demo.assert_clean_stop(daphne_pid)
    # Daphne stopped on SIGTERM: the command never had to wait out its SIGKILL delay.
    assert time.monotonic() - started < DAPHNE_STOP_TIMEOUT, demo.output


def test_demo_in_a_terminal_stops_on_ctrl_c(start_demo):
    demo = start_demo(background=False)
    demo.wait_for_line(r"Open\s+")
    (daphne_pid,) = demo.children()
    demo.proc.send_signal(signal.SIGINT)
    demo.assert_clean_stop(daphne_pid)


def test_demo_stops_with_an_error_when_daphne_dies(start_demo):
    demo = start_demo()
    demo.wait_for_line(r"Open\s+")
    (daphne_pid,) = demo.children()
    os.kill(daphne_pid, signal.SIGKILL)
    demo.assert_clean_stop(daphne_pid, status=1, last_line="CommandError: Daphne exited with "
                           f"status {-signal.SIGKILL}.")


FOCUS = """() => {
  let el = document.activeElement;
  while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
  const css = getComputedStyle(el);
  return { tag: el.tagName, text: (el.textContent || el.value || '').trim().slice(0, 60),
           label: el.getAttribute('aria-label') || '', type: el.type || '',
           outline: css.outlineStyle !== 'none' && parseFloat(css.outlineWidth) >= 2,
           visible: el.matches(':focus-visible') };
}"""


def tab_to(page, predicate, limit=60):
    """Press Tab until the focused element matches; every stop on the way has its focus
    visible (a 2 px outline at least). Returns the focused element's description."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        focused = page.evaluate(FOCUS)
        if focused["tag"] != "BODY":
            assert focused["visible"] and focused["outline"], focused
        if predicate(focused):
            return focused
    raise AssertionError("not reached by Tab")


def test_demo_keyboard_only(browser, demo):
    """The demo walked with the keyboard alone: log in, allow the consent, answer the input
    request, approve the confirmation; Tab, Enter and Space only, the focus always visible."""
    base = f"http://127.0.0.1:{demo.port}"
    demo.wait_for_line(r"Open\s+")
    context = browser.new_context(base_url=base, viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        page.goto("/a2ui/")
        tab_to(page, lambda f: f["tag"] == "INPUT" and f["type"] == "text")
        page.keyboard.type("demo")
        tab_to(page, lambda f: f["type"] == "password")
        page.keyboard.type("demo-password")
        page.keyboard.press("Enter")
        expect(page).to_have_url(f"{base}/a2ui/")
        # The consent prompt takes the focus when it opens; Space allows.
        consent = page.get_by_role("dialog", name="Your consent is needed")
        expect(consent.get_by_role("button", name="Allow")).to_be_focused(timeout=30000)
        page.keyboard.press("Space")
        # The input request takes the focus: type, Tab to Send, Enter.
        dialog = page.get_by_role("dialog", name="What would you like to search for?")
        expect(dialog.get_by_role("textbox")).to_be_focused(timeout=30000)
        page.keyboard.type("solar panels")
        focused = tab_to(page, lambda f: f["text"] == "Send", limit=5)
        assert focused["tag"] == "BUTTON"
        page.keyboard.press("Enter")
        expect(page.locator("[data-a2ui-client]")).to_contain_text("solar panels")
        # The confirmation: Approve has the focus; Tab reaches Reject and back with Shift+Tab.
        confirm = page.get_by_role("dialog", name=re.compile("Confirm Purchase"))
        expect(confirm.get_by_role("button", name="Approve")).to_be_focused(timeout=30000)
        tab_to(page, lambda f: f["text"] == "Reject", limit=3)
        page.keyboard.press("Shift+Tab")
        assert page.evaluate(FOCUS)["text"] == "Approve"
        screenshot(page, "demo-keyboard-confirm")
        page.keyboard.press("Space")
        expect(page.locator(".a2ui-toast", has_text="Purchase approved")).to_be_visible()
        # The consents in the bar are reached by Tab and open with Enter.
        page.keyboard.press("Shift+Tab")  # away from the page's end, wherever focus is
        page.locator("body").focus()
        tab_to(page, lambda f: f["text"].startswith("Your consent"))
        page.keyboard.press("Enter")
        expect(page.locator("[data-a2ui-consent]")).to_have_attribute("open", "")
    finally:
        context.close()
