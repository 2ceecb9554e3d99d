"""Agent servers of the frameworks (a2a-sdk, Google ADK...) run as subprocesses in the agents'
venv (``.venv-agents``, made by ``make install``: the frameworks' pins stay out of ours).

Without that venv the tests skip, unless ``A2UI_REQUIRE_LIVE=1`` or ``CI`` is set: then they
fail, saying how to make it.
"""

import os
import socket
import subprocess
import time
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]
AGENTS_PYTHON = Path(os.environ.get("A2UI_AGENTS_VENV", ROOT / ".venv-agents")) / "bin" / "python"
SERVERS = Path(__file__).parent / "servers"
READY_SECONDS = 60.0


def require_agents_venv():
    if AGENTS_PYTHON.exists():
        return
    message = f"the framework agents need their venv ({AGENTS_PYTHON}): run `make install`"
    if os.environ.get("A2UI_REQUIRE_LIVE", "").strip() not in ("", "0") or os.environ.get("CI"):
        pytest.fail(message + " (A2UI_REQUIRE_LIVE/CI is set, so this is an error)",
                    pytrace=False)
    pytest.skip(message)


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class AgentProcess:
    """``python servers/<script> --port N ...`` in the agents' venv; ready once ``ready_path``
    answers 200. ``script`` may be a path (a file of the docs, which reads ``PORT`` from the
    environment: ``port_arg=False``)."""

    def __init__(self, script, *args, port=None, ready_path="/.well-known/agent-card.json",
                 port_arg=True):
        require_agents_venv()
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = Path(os.environ.get("TMPDIR", "/tmp")) / f"a2ui-agent-{self.port}.log"
        self._log = open(self.log_path, "wb")  # noqa: SIM115 - closed in stop()
        path = SERVERS / script
        command = [str(AGENTS_PYTHON), str(path), *(["--port", str(self.port)] if port_arg
                                                    else []), *args]
        self.proc = subprocess.Popen(command, stdout=self._log, stderr=subprocess.STDOUT,
                                     cwd=str(path.parent),
                                     env={**os.environ, "PORT": str(self.port)})
        deadline = time.monotonic() + READY_SECONDS
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{script} exited: {self.log()}")
            try:
                if httpx.get(self.url + ready_path, timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"{script} not ready in {READY_SECONDS:g} s: {self.log()}")
            time.sleep(0.1)

    def log(self):
        try:
            return self.log_path.read_text(errors="replace")[-4000:]
        except OSError:
            return ""

    def debug_log(self):
        return httpx.get(self.url + "/debug/log", timeout=5).json()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()
