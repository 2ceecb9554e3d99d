"""Agent servers for the live tests of remote agents: an ASGI app of an agent framework served
by uvicorn in a process of its own, on a free port of 127.0.0.1 (the project's venv, or
``.venv-agents`` for the frameworks that do not install beside the project's pins)."""

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.live.conftest import ROOT, _port_open, _require_live, free_port

AGENTS_PYTHON = ROOT / ".venv-agents" / "bin" / "python"


def agents_python():
    """The python of ``.venv-agents`` (``make agents-venv``): fails in CI, else skips."""
    if not AGENTS_PYTHON.exists():
        message = "the framework agents need .venv-agents (make agents-venv)"
        if _require_live():
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    return str(AGENTS_PYTHON)


class AgentServer:
    def __init__(self, app, python=None, env=None, cwd=ROOT):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        self.host = f"127.0.0.1:{self.port}"
        self._log = tempfile.NamedTemporaryFile(prefix="a2ui-agent-", suffix=".log",
                                                delete=False)
        self.proc = subprocess.Popen(
            [python or sys.executable, "-m", "uvicorn", app, "--host", "127.0.0.1",
             "--port", str(self.port), "--log-level", "warning"],
            cwd=cwd, env={**os.environ, "PYTHONPATH": str(ROOT) if cwd == ROOT else "",
                          **(env or {})},
            stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    def wait_ready(self, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the agent server exited: {self.log()}")
            if _port_open(self.port):
                return self
            time.sleep(0.05)
        raise RuntimeError(f"the agent server is not listening: {self.log()}")

    def log(self):
        return Path(self._log.name).read_text(errors="replace")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self._log.close()
        os.unlink(self._log.name)


@pytest.fixture
def agent_server(request):
    """Factory: ``agent_server("module:app", python=..., env=...)`` started and ready; stopped
    at teardown (its log in the report of a failed test)."""
    started = []

    def start(app, **kw):
        server = AgentServer(app, **kw)
        started.append(server)
        return server.wait_ready()

    yield start
    for server in started:
        if request.node.rep_call_failed if hasattr(request.node, "rep_call_failed") else False:
            sys.stderr.write(server.log())
        server.stop()
