"""A test that outlives its timeout ends its worker, with the stacks of all the worker's threads.

pytest-timeout (``timeout`` in pyproject.toml, or a test's ``timeout`` mark) fails a test from a
SIGALRM handler. In an asyncio test the handler's exception can land in a callback or a
background task, which the event loop logs and forgets, and a hang in C code that holds the GIL
never runs the handler at all: the test, and the whole run, would wait forever. This watchdog is
faulthandler's own C thread: :data:`GRACE` seconds after the test's timeout it writes the stack
of every thread to a file and exits the worker. xdist reports the test as crashed and goes on on
a new worker, and the controller prints the stacks (:func:`pytest_testnodedown`).

Only under xdist (``make test``, ``make test-embedded``): a run in one process has no one to
report the crash.
"""

import faulthandler
import os
import tempfile
from pathlib import Path

import pytest

GRACE = 120.0
#: For a test whose timeout is off (0).
UNTIMED = 1800.0


def stacks_path(controller_pid, worker_id):
    return Path(tempfile.gettempdir()) / f"a2ui-hang-{controller_pid}-{worker_id}.txt"


def limit_of(item):
    """The test's own timeout (its mark, else the ini's) plus :data:`GRACE`."""
    mark = item.get_closest_marker("timeout")
    timeout = None
    if mark is not None:
        timeout = mark.kwargs.get("timeout", mark.args[0] if mark.args else None)
    if timeout is None:
        try:
            timeout = item.config.getini("timeout")
        except ValueError:  # pytest-timeout not installed
            timeout = 0
    timeout = float(timeout or 0)
    return (timeout if timeout > 0 else UNTIMED) + GRACE


class Watch:
    """In a worker: the watchdog armed around each test's setup, call and teardown."""

    def __init__(self, path):
        self.path = path
        self.file = open(path, "w")  # noqa: SIM115 (faulthandler writes to its descriptor)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        self.file.write(f"{item.nodeid} ran past {limit_of(item):g} s:\n")
        self.file.flush()
        faulthandler.dump_traceback_later(limit_of(item), exit=True, file=self.file)
        try:
            yield
        finally:
            faulthandler.cancel_dump_traceback_later()
            self.file.seek(0)
            self.file.truncate()

    def close(self):
        self.file.close()
        self.path.unlink(missing_ok=True)


def pytest_configure(config):
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None:
        path = stacks_path(os.getppid(), workerinput["workerid"])
        config.pluginmanager.register(Watch(path), "a2ui-hang-watch")


def pytest_unconfigure(config):
    watch = config.pluginmanager.get_plugin("a2ui-hang-watch")
    if watch is not None:
        watch.close()


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """On the controller: a worker that went down with stacks written prints them."""
    path = stacks_path(os.getpid(), node.gateway.id)
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return
    path.unlink(missing_ok=True)
    if error and "Thread" in text:
        reporter = node.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(f"[{node.gateway.id}] stacks of a test past its timeout:")
            reporter.write_line(text)
