"""Tier 2: every complete agent file of docs/agents.md ("A complete agent, one file per path") is
run as it is written, in a process of its own, against real server processes, while the test
plays the person on another process (tests/live/test_agent_docs_examples.Person: it answers
"Your name?" with "Ada").

Each file greets the person once, asks once and answers with a card; the SDK's file does so
across a restart of the server it is connected to (it reconnects, its waiting question is a
retry: the person is asked once), the Python API's across a reload of the person's page, the
REST file when it runs twice.
"""

import asyncio
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from a2ui import tokens
from tests.live.conftest import live_env
from tests.live.test_agent_docs_examples import Person, eventually

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "agents.md"
FILE = re.compile(r"<!-- agent-file: (\w+) -->\n```python\n(.*?)\n```", re.S)
GREETING = "Hello from your assistant"


def agent_files():
    return dict(FILE.findall(DOC.read_text()))


def test_the_page_has_a_complete_file_for_each_path():
    files = agent_files()
    assert set(files) == {"sdk", "rest", "python", "mcp"}
    for name, code in files.items():
        compile(code, f"agent_{name}.py", "exec")  # a file, not fragments: no top-level await
        assert 'if __name__ == "__main__":' in code


class AgentFile:
    """One file of the page, written to ``tmp_path`` and run with ``python``."""

    def __init__(self, tmp_path, name, env, *args):
        self.path = tmp_path / f"agent_{name}.py"
        self.path.write_text(agent_files()[name])
        self.log = tmp_path / f"agent_{name}.log"
        with open(self.log, "wb") as out:
            self.proc = subprocess.Popen([sys.executable, str(self.path), *args], cwd=tmp_path,
                                         env=env, stdout=out, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL)

    def output(self):
        return self.log.read_text(errors="replace")

    async def finish(self, timeout=60):
        code = await asyncio.to_thread(self.proc.wait, timeout)
        assert code == 0, self.output()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture
def run_file(tmp_path, live_services, agent, agent_key):
    started = []

    def start(name, server, *args):
        env = live_env(live_services)  # the server's database and Redis (the Python API's)
        env.update(A2UI_URL=server.url, A2UI_AGENT_KEY=agent_key, A2UI_AGENT_NAME=agent.name,
                   PYTHONPATH=str(ROOT))
        started.append(AgentFile(tmp_path, name, env, *args))
        return started[-1]

    yield start
    for each in started:
        each.stop()


async def person(server, user, agent, **params):
    token = await asyncio.to_thread(lambda: tokens.issue_stream_token(user, agent).token)
    return await Person(server, token, hold={"name"}).open(**params)


def greetings(p):
    return p.got("ui.notify", title=GREETING)


async def asked(p, proc):
    try:
        await eventually(lambda: "name" in p.asked, "the question", timeout=30)
    except AssertionError:
        raise AssertionError(f"never asked; the agent's output:\n{proc.output()}") from None


async def answered(p, proc):
    """Answer the held question; the agent's card names the person."""
    await p.release("name")
    await eventually(lambda: p.got("ui.render", component_id="hello"), "the card",
                     timeout=30)
    assert p.got("ui.render", component_id="hello")[-1]["data"]["title"] == "Hello, Ada!", \
        proc.output()


async def test_the_sdk_file_survives_a_restart_of_its_server(daphne_server, user, agent,
                                                             run_file):
    agents_server, people_server = daphne_server(), daphne_server()
    p = await person(people_server, user, agent)
    proc = run_file("sdk", agents_server)
    try:
        await asked(p, proc)
        await eventually(lambda: greetings(p), "the greeting")
        statuses = len(p.got("a2ui.agent_status"))
        await asyncio.to_thread(agents_server.restart)  # the question waits meanwhile
        await eventually(lambda: [s["status"] for s in p.got("a2ui.agent_status")[statuses:]]
                         [-1:] == ["online"] and len(p.got("a2ui.agent_status")) > statuses + 1,
                         "the agent back online", timeout=30)
        assert proc.proc.poll() is None, proc.output()  # it did not exit on the restart
        await asyncio.sleep(1)  # its session.resumed, greeting again, asking again: retries
        await answered(p, proc)
        assert len(greetings(p)) == 1  # greeted once, across the reconnect
        assert len(p.got("ui.request_input")) == 1  # asked once
    finally:
        await p.close()


async def test_the_python_api_file_greets_and_asks_once_across_a_reload(daphne_server, user,
                                                                       agent, run_file):
    server = daphne_server()
    proc = run_file("python", server)
    await asyncio.sleep(3)  # the listener is up (an earlier session would come as resumed)
    p = await person(server, user, agent)
    try:
        await asked(p, proc)
        await answered(p, proc)
        await p.close()
        p = await person(server, user, agent, session_id=p.sid)  # the page reloads
        await eventually(lambda: p.got("ui.render", component_id="hello"), "the card again")
        await asyncio.sleep(2)  # the agent's session.resumed: greeting and asking are retries
        assert greetings(p) == [] and p.got("ui.request_input") == [], proc.output()
        assert proc.proc.poll() is None, proc.output()
    finally:
        await p.close()


async def test_the_mcp_file_greets_asks_and_answers(daphne_server, user, agent, run_file):
    server = daphne_server()
    p = await person(server, user, agent)
    proc = run_file("mcp", server)
    try:
        await asked(p, proc)
        await answered(p, proc)
        await asyncio.sleep(2.5)  # it looks at its sessions again: nothing twice
        assert len(greetings(p)) == 1 and len(p.got("ui.request_input")) == 1
    finally:
        await p.close()


async def test_the_rest_file_reports_and_greets_once_when_run_twice(daphne_server, user, agent,
                                                                   run_file):
    server = daphne_server()
    p = await person(server, user, agent)
    try:
        for _ in range(2):
            proc = run_file("rest", server, p.sid)
            await proc.finish()
            assert f"pushed the report to {p.sid}" in proc.output()
        await eventually(lambda: len(p.got("ui.notify", title="Report ready")) == 2, "reports")
        assert p.got("ui.update", component_id="report")[-1]["data"] == {
            "description": "3 checks passed"}
        assert len(greetings(p)) == 1  # the second run's greeting was a retry
    finally:
        await p.close()


def test_the_files_need_nothing_but_their_environment():
    for name, code in agent_files().items():
        assert "127.0.0.1:8000" in code or name == "python"  # A2UI_URL's default
        assert "/work/" not in code and "tests." not in code
        assert os.path.basename(__file__) not in code


async def test_the_demo_agent_asks_once_across_a_restart_and_a_reload(daphne_server, user,
                                                                     agent, agent_key):
    """``make demo``'s agent (a2ui.demo.run_agent) on one process, the person on another: the
    process restarts while the demo's question waits, then the person reloads; the question and
    the confirmation are each shown once, the chat and every kind of AG-UI activity beside the
    cards, the person's chat message answered."""
    from a2ui.demo import run_agent

    agents_server, people_server = daphne_server(), daphne_server()
    token = await asyncio.to_thread(lambda: tokens.issue_stream_token(user, agent).token)
    p = await Person(people_server, token, hold={"demo-topic"}).open()
    stop = asyncio.Event()
    demo = asyncio.ensure_future(run_agent(f"{agents_server.ws_url}/ws/v4/a2ui/agent",
                                           agent_key, stop))
    try:
        await eventually(lambda: "demo-topic" in p.asked, "the demo's question", timeout=60)
        statuses = len(p.got("a2ui.agent_status"))
        await asyncio.to_thread(agents_server.restart)
        await eventually(lambda: len(p.got("a2ui.agent_status")) > statuses + 1
                         and p.got("a2ui.agent_status")[-1]["status"] == "online",
                         "the demo agent back online", timeout=30)
        await asyncio.sleep(1)
        await p.release("demo-topic")
        await eventually(lambda: p.got("ui.notify", title="Purchase approved"), "the end",
                         timeout=30)
        assert len(p.got("ui.request_input")) == 1 and len(p.got("ui.confirm")) == 1
        # The chat and the AG-UI activity beside the cards, and the chat answered.
        await eventually(lambda: {"message", "tool_call", "state.delta", "plan", "resources",
                                  "roster", "artifact"} <= {a["kind"] for a in
                                                            p.got("ui.activity")},
                         "every kind of activity")
        await p._send("user.message", {"content": "Hello there"})
        await eventually(lambda: any("Hello there" in a["data"].get("content", "")
                                     for a in p.got("ui.activity", kind="message")),
                         "the demo's answer in the chat")
        await p.close()
        p = await Person(people_server, token).open(session_id=p.sid)  # a reload
        await eventually(lambda: p.got("ui.render", component_id="demo-topic"), "a new walk",
                         timeout=60)
        await asyncio.sleep(2)
        assert p.got("ui.request_input") == [] and p.got("ui.confirm") == []
        chat = [a for a in p.got("ui.activity", kind="message")
                if "Hi! I will show you" in a["data"].get("content", "")]
        assert chat == []  # the walk again: its chat line is not said twice
    finally:
        stop.set()
        await asyncio.wait_for(demo, 30)
        await p.close()
