"""The A2A client against Google ADK's own A2A server (``to_a2a``, A2A 1.0) serving a custom
non-LLM ``BaseAgent`` (tests/remote_a2a/servers/adk_agent.py, a subprocess in the agents' venv):
the surface it sends reaches the session validated, and the person's action reaches the agent
through ADK's part conversion."""

import httpx
import pytest

from a2ui.remote import ops
from a2ui.remote.a2a.client import A2AClient
from a2ui.remote.a2a.extension import BASIC_CATALOG_V09
from tests.remote_a2a.agentproc import AgentProcess
from tests.remote_a2a.driver import Driver, last, texts

pytestmark = pytest.mark.live


@pytest.fixture(scope="module")
def adk():
    proc = AgentProcess("adk_agent.py")
    yield proc
    proc.stop()


async def test_adk_surface_and_action(adk):
    async with httpx.AsyncClient() as http:
        reg = await A2AClient().prepare(adk.url, {}, http)
    assert reg["config"]["protocol_version"] == "1.0" and reg["display_name"] == "adk_greeter"
    d = Driver(reg)
    first = await d.turn(ops.UserText("hello"))
    assert "Here is a surface." in texts(first)
    surfaces = [op for op in first if isinstance(op, ops.Surface)]
    assert len(surfaces) == 2  # one message per DataPart (ADK's data is an object)
    assert surfaces[0].messages[0]["createSurface"] == {"surfaceId": "adk",
                                                    "catalogId": BASIC_CATALOG_V09}
    assert "adk" in d.surfaces.states  # this server's validator took it
    assert last(first, ops.Finished).outcome["state"] == "completed"

    second = await d.turn(ops.Action({"name": "confirm", "surfaceId": "adk",
                                      "sourceComponentId": "ok", "context": {"from": "adk"},
                                      "timestamp": "2026-01-01T00:00:00Z"}))
    assert texts(second) == 'ADK got confirm: {"from": "adk"}'
    assert d.ids["context_id"] and isinstance(second[-1], ops.Finished)
    await d.close()
