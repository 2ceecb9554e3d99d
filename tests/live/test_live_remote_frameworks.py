"""The framework files of docs/agents.md ("With your agent framework") run as written: each is
served by uvicorn (pydantic-ai from the project's venv; LangGraph and Google ADK from
.venv-agents, ``make agents-venv``), registered with ``a2ui_agent create --agui-url``, and a
person's ``user.message`` on one Daphne process gets the agent's reply on the other."""

import asyncio
import re
import sys
from pathlib import Path

import pytest

from a2ui import tokens
from tests.live.agentprocs import agent_server, agents_python  # noqa: F401  (fixture)
from tests.live.test_live_remote_agents import agent_text, open_session, register

pytestmark = pytest.mark.django_db(transaction=True)

DOC = Path(__file__).resolve().parents[2] / "docs" / "agents.md"
BLOCK = re.compile(r"<!-- framework: ([\w-]+) -->\n```python\n(.*?)\n```", re.S)
SAID = "hi from A"
EXPECTED = {
    "pydantic-ai": f"Hello from pydantic-ai. You said: {SAID}",
    "langgraph": "Hello from LangGraph.",
    "adk": f"Hello from ADK. You said: {SAID}",
}


def framework_files():
    return dict(BLOCK.findall(DOC.read_text()))


def test_every_framework_of_the_page_is_tested():
    assert set(framework_files()) == set(EXPECTED)


@pytest.mark.parametrize("framework", sorted(EXPECTED))
def test_a_framework_agent_answers_across_two_processes(framework, daphne_server, agent_server,  # noqa: F811
                                                        user, settings, tmp_path):
    python = sys.executable if framework == "pydantic-ai" else agents_python()
    module = "agent_" + framework.replace("-", "_")
    (tmp_path / f"{module}.py").write_text(framework_files()[framework])
    served = agent_server(f"{module}:app", python=python, cwd=tmp_path)
    agent = register(settings, "helper", served.url, served.host)
    a = daphne_server(A2UI_REMOTE_AGENT_HOSTS=served.host)
    b = daphne_server(A2UI_REMOTE_AGENT_HOSTS=served.host)
    token, token_b = (tokens.issue_stream_token(user, agent).token for _ in range(2))

    async def scenario():
        writer, sid = await open_session(a, token)
        watcher, _ = await open_session(b, token_b, sid)
        assert (await writer.call("user.message", {"content": SAID}, "m1"))["result"] == {
            "ok": True}
        reply = await watcher.recv_until(lambda m: agent_text(m) is not None, timeout=60)
        assert agent_text(reply) == EXPECTED[framework]
        await writer.close()
        await watcher.close()

    asyncio.run(scenario())
