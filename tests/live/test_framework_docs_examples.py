"""Tier 2: every A2A framework file of docs/agents.md ("With your agent framework") is served as
it is, in the frameworks' venv (.venv-agents), registered with ``a2ui_agent create --a2a-url``,
and does what the page says across two Daphne processes: the person's message on A gets the
agent's surface on B's /ws/v09/a2ui socket, the button pressed there reaches the agent, and its
reply reaches the person's chat on A."""

import re
from pathlib import Path

import pytest
from channels.db import database_sync_to_async
from django.core.management import call_command

from a2ui.models import Agent
from tests.live.client import Client, init_session, open_user
from tests.live.test_live_a2a_agent import agent_text
from tests.live.test_live_capabilities import CAPS
from tests.live.test_live_mcp import issue
from tests.remote_a2a.agentproc import AgentProcess

pytestmark = pytest.mark.django_db(transaction=True)

DOC = Path(__file__).resolve().parents[2] / "docs" / "agents.md"
# The A2A files (``framework-a2a:``); the AG-UI ones (``framework:``) have their own test,
# tests/live/test_live_remote_frameworks.py.
FRAMEWORK = re.compile(r"<!-- framework-a2a: ([\w-]+) -->\n```python\n(.*?)\n```", re.S)
A2A_FILES = ("a2a-sdk", "adk")


def framework_files():
    return dict(FRAMEWORK.findall(DOC.read_text()))


def test_every_a2a_framework_file_of_the_page_is_tested():
    assert set(framework_files()) == set(A2A_FILES)


@pytest.fixture(params=A2A_FILES)
def served(request, tmp_path):
    path = tmp_path / f"{request.param.replace('-', '_')}_a2a_agent.py"
    path.write_text(framework_files()[request.param])
    proc = AgentProcess(path, port_arg=False)
    proc.name = request.param + "-a2a"
    yield proc
    proc.stop()


async def test_a_framework_file_of_the_docs_books_a_table(daphne_server, user, settings, served):
    hosts = f"127.0.0.1:{served.port}"
    settings.A2UI = {**getattr(settings, "A2UI", {}), "REMOTE_AGENT_HOSTS": [hosts]}
    await database_sync_to_async(call_command)("a2ui_agent", "create", served.name,
                                               "--a2a-url", served.url)
    agent = await database_sync_to_async(Agent.objects.get)(name=served.name)
    a = daphne_server(A2UI_REMOTE_AGENT_HOSTS=hosts)
    b = daphne_server(A2UI_REMOTE_AGENT_HOSTS=hosts)
    person = await open_user(a, await issue(user, agent))
    sid = await init_session(person)
    v09 = await Client.open(f"{b.ws_url}/ws/v09/a2ui?token={await issue(user, agent)}"
                            f"&session_id={sid}")
    await v09.send({"version": "v0.9", "capabilities": CAPS})
    await v09.recv()
    await person.send({"jsonrpc": "2.0", "id": "m1", "method": "user.message",
                       "params": {"content": "A table, please."}})
    await person.recv_until(lambda f: agent_text(f) == "Who is the table for?")
    create = await v09.recv_until(lambda m: "createSurface" in m)
    assert create["createSurface"]["surfaceId"] == "booking"
    await v09.recv_until(lambda m: "updateDataModel" in m)
    await v09.send({"version": "v0.9", "action": {
        "name": "book", "surfaceId": "booking", "sourceComponentId": "book",
        "timestamp": "2026-01-01T00:00:00Z", "context": {"name": "Ada"}}})
    await person.recv_until(lambda f: agent_text(f) == "Booked a table for Ada.")
    await v09.close()
    await person.close()
