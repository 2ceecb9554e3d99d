"""Progress per tier in the terminal: the suite runs its three tiers in one pytest run (on
xdist workers, the waiting live and browser tests beside the in-process ones), so pytest's own
percentage says little about what is left. This plugin prints, on the controller, a line such as

    tiers after 7m05s: in-process 2900/3034 · live 100/152 · browser 12/23

every :data:`EVERY` seconds and when a tier finishes. The tier of a test is its directory
(tests/live: live Daphne, PostgreSQL and Redis; tests/browser: Chromium; the rest in-process).

A test still running after :data:`SLOW` seconds is named under the line (``still running 6m10s:
tests/x.py::t``), also when nothing else finishes (a ticker thread): a run that stops advancing
says where it stands.
"""

import threading
import time

import pytest

EVERY = 60.0
SLOW = 300.0
TIERS = ("in-process", "live", "browser")


def tier_of(nodeid):
    if nodeid.startswith("tests/live/"):
        return "live"
    if nodeid.startswith("tests/browser/"):
        return "browser"
    return "in-process"


class Progress:
    def __init__(self, write, now=time.monotonic, every=EVERY, slow=SLOW):
        self.write = write
        self.now = now
        self.every = every
        self.slow = slow
        self.total = dict.fromkeys(TIERS, 0)
        self.done = dict.fromkeys(TIERS, 0)
        self.running = {}  # nodeid -> when it started
        self.started = self.last = now()
        self.collected = False
        self.lock = threading.Lock()

    def collected_ids(self, ids):
        """The test ids of the run (once: every xdist worker collects the same ones)."""
        if self.collected:
            return
        self.collected = True
        for nodeid in ids:
            self.total[tier_of(nodeid)] += 1

    def began(self, nodeid):
        with self.lock:
            self.running[nodeid] = self.now()

    def finished(self, nodeid):
        with self.lock:
            self.running.pop(nodeid, None)
            tier = tier_of(nodeid)
            self.done[tier] += 1
            now = self.now()
            if ((self.collected and self.done[tier] == self.total[tier])
                    or now - self.last >= self.every):
                self._report(now)

    def tick(self):
        """From the ticker: the line if none was written for an interval (nothing finished)."""
        with self.lock:
            now = self.now()
            if now - self.last >= self.every:
                self._report(now)

    def _report(self, now):
        self.last = now
        self.write(self.line(now))
        for nodeid, began in sorted(self.running.items(), key=lambda item: item[1]):
            if now - began >= self.slow:
                self.write(f"  still running {_clock(now - began)}: {nodeid}")

    def line(self, now):
        parts = [f"{t} {self.done[t]}/{self.total[t]}" for t in TIERS if self.total[t]]
        return f"tiers after {_clock(now - self.started)}: " + " · ".join(parts)


def _clock(seconds):
    seconds = int(seconds)
    return f"{seconds // 60}m{seconds % 60:02d}s"


class Plugin:
    def __init__(self, config):
        self.config = config
        self.progress = Progress(self._write)
        self.stop = threading.Event()
        threading.Thread(target=self._tick, name="tier-progress", daemon=True).start()

    def _tick(self):
        while not self.stop.wait(self.progress.every / 4):
            self.progress.tick()

    def _write(self, line):
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            if reporter._tw.width_of_current_line:  # after xdist's progress dots
                reporter.write("\n")
            reporter.write_line(line, bold=True)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node, ids):
        self.progress.collected_ids(ids)

    def pytest_collection_finish(self, session):
        if not getattr(self.config.option, "numprocesses", None):  # no xdist: this process ran it
            self.progress.collected_ids(item.nodeid for item in session.items)

    def pytest_runtest_logstart(self, nodeid, location):
        self.progress.began(nodeid)

    def pytest_runtest_logreport(self, report):
        if report.when == "teardown":
            self.progress.finished(report.nodeid)

    def pytest_unconfigure(self, config):
        self.stop.set()


def pytest_configure(config):
    if not hasattr(config, "workerinput") and not config.option.collectonly:
        config.pluginmanager.register(Plugin(config), "a2ui-tier-progress")
