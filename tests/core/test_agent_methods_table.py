"""The agent-facing methods are one table (a2ui.core.agentmethods), declared by the adapters:
every agent path exposes exactly the table's methods (the agent socket, the MCP agent tools,
the Python API, REST), and the agent socket dispatches by it."""

import inspect

import pytest

from a2ui import agents
from a2ui.core import agentmethods
from a2ui.mcp import tools
from a2ui.protocol import methods
from tests.wsutil import connect_agent, recv, send

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_table_is_merged_from_the_adapters_and_names_are_unique():
    table = agentmethods.table()
    assert {e.adapter for e in table.values()} == {"jsonrpc", "v09", "agui", "agui1"}
    assert methods.AGENT_TO_UI <= set(table)
    for entry in table.values():
        assert (entry.validate is None) == (entry.call is None), entry.name
        assert entry.awaits == (entry.name in methods.AWAITING)


def test_mcp_agent_tools_are_the_tables():
    table = agentmethods.table()
    assert {e.tool for e in table.values() if e.tool} == set(tools.AGENT_TOOLS)
    assert {name: f"ui.{name}" for name in tools.AGENT_METHODS} == {
        e.tool: e.name for e in table.values() if e.rest == "messages"}
    assert {e.tool for e in table.values() if e.awaits} == set(tools.AWAITING)


def test_the_python_api_is_the_tables():
    table = agentmethods.table()
    api = {name for name, value in vars(agents).items()
           if inspect.iscoroutinefunction(value) and not name.startswith("_")}
    assert api - {"apush"} == {e.sdk for e in table.values() if e.sdk}


def test_rest_is_the_tables():
    from django.urls import reverse

    table = agentmethods.table()
    assert {e.name for e in table.values() if e.rest == "messages"} == methods.FIRE_AND_FORGET
    routes = {"surfaces": "a2ui-session-surfaces", "agui": "a2ui-session-agui",
              "pending": "a2ui-agent-requests", "runs": "a2ui-agent-runs"}
    for entry in table.values():
        if entry.rest in routes:
            reverse(routes[entry.rest], **({"kwargs": {"session_id": "00000000-0000-0000-0000-000000000000"}}
                                           if entry.rest in ("surfaces", "agui") else {}))
    assert {e.rest for e in table.values() if e.rest} == {
        "messages", "surfaces", "agui", "pending", "runs", "runs/finish", "runs/error"}


async def test_the_agent_socket_takes_exactly_the_tables_methods(agent_key):
    bot = await connect_agent(agent_key)
    socket = agentmethods.exposed("socket")
    for n, name in enumerate(sorted(socket | {"ui.nothing", "agui.runs", "a2ui.init"})):
        await send(bot, {"jsonrpc": "2.0", "id": n, "method": name, "params": {}})
        reply = await recv(bot)
        unknown = "error" in reply and reply["error"]["code"] == -32601
        assert unknown == (name not in socket), (name, reply)
