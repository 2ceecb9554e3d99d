"""The agent's read tools (list_sessions, list_runs, pending_requests) take only their own
arguments: an unknown one is refused with -32602 naming it, not ignored (a typo such as
``sesion_id`` used to list every session's runs)."""

import pytest

from a2ui.mcp import tools
from tests.mcp.test_mcp_pending import Agent

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize("name, arguments, path", [
    ("list_sessions", {"session_id": "x"}, "arguments.session_id"),
    ("list_sessions", {"limit": 5}, "arguments.limit"),
    ("list_runs", {"sesion_id": "x"}, "arguments.sesion_id"),
    ("pending_requests", {"session_id": "s", "all": True}, "arguments.all"),
    ("list_runs", {"session_id": 7}, "arguments.session_id"),
])
async def test_an_unknown_argument_of_a_read_tool_is_refused(agent_key, name, arguments, path):
    mcp = await Agent(agent_key).start()
    answer = await mcp.tool(name, arguments)
    error = answer.get("error") or {}
    assert error.get("code") == -32602, answer
    assert error["data"]["path"] == path and path.split(".")[1] in error["message"]


async def test_read_tools_still_answer_their_own_arguments(agent_key):
    mcp = await Agent(agent_key).start()
    for name, arguments in (("list_sessions", {}), ("list_runs", {}),
                            ("pending_requests", {"session_id": "00000000-0000-0000-0000-"
                                                                "000000000000"})):
        answer = await mcp.tool(name, arguments)
        assert "result" in answer and not answer["result"].get("isError"), answer


def test_their_schemas_say_so():
    for name in tools.READ_TOOLS:
        assert tools.AGENT_TOOLS[name][1]["additionalProperties"] is False
