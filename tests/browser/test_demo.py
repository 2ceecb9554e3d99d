"""``manage.py a2ui_demo`` as people run it: a subprocess that starts Daphne and the demo agent.

Chromium signs in through the admin login as demo / demo-password, watches the walkthrough
arrive, answers its input request and approves its confirmation; then SIGINT stops the command
cleanly (exit status 0, its Daphne child gone).
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

from tests.browser.conftest import ROOT, screenshot, server_env
from tests.live.conftest import flush_live_redis, free_port

pytestmark = [pytest.mark.browser, pytest.mark.live, pytest.mark.django_db(transaction=True)]

START_TIMEOUT = 60.0
STOP_TIMEOUT = 30.0


class Demo:
    """The command's process, with its output collected by a reader thread."""

    def __init__(self, env, port):
        self.port = port
        self.lines = []
        self.changed = threading.Condition()
        self.proc = subprocess.Popen(
            [sys.executable, "manage.py", "a2ui_demo", "--port", str(port), "--no-migrate"],
            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, text=True, start_new_session=True,
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

    def kill(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(STOP_TIMEOUT)


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
def demo(request, live_services, transactional_db):
    flush_live_redis(live_services)
    env = server_env(live_services)
    env.pop("A2UI_DEFAULT_AGENT", None)
    proc = request.node._demo_output = Demo(env, free_port())
    yield proc
    proc.kill()


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
        expect(page).to_have_url(re.compile(r"/admin/login/\?next=/a2ui/$"))
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
        expect(pie.locator("svg path.a2ui-slice")).to_have_count(3)
        expect(pie.locator(".a2ui-chart-legend li")).to_have_text(
            ["research", "trading", "analytics"])
        expect(main.locator("a2ui-surface")).to_contain_text("Book a table")

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
        assert not [line for line in console if line.startswith("error")], console
    finally:
        context.close()

    demo.proc.send_signal(signal.SIGINT)
    assert demo.proc.wait(STOP_TIMEOUT) == 0, demo.output
    demo.reader.join(STOP_TIMEOUT)
    assert demo.lines[-1] == "Stopped.", demo.output
    assert gone(daphne_pid), f"Daphne ({daphne_pid}) outlived the demo command"
