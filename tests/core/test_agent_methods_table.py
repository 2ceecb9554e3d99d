"""The agent-facing methods are one table (a2ui.core.agentmethods), declared by the adapters:
every agent path exposes exactly the table's methods (the agent socket, the MCP agent tools,
the Python API, REST), and the agent socket dispatches by it."""

import inspect

import pytest

from a2ui import agents
from a2ui.core import agentmethods
from a2ui.core.content import methods
from a2ui.mcp import tools
from tests.wsutil import connect_agent, recv, send

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_table_is_merged_from_the_adapters_and_names_are_unique():
    table = agentmethods.table()
    assert {e.adapter for e in table.values()} == {"jsonrpc", "v09", "agui", "agui1"}
    assert methods.AGENT_TO_UI <= set(table)
    for entry in table.values():
        assert (entry.validate is None) == (not entry.handled), entry.name
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


# Every path reads the table: a protocol that declares one more method needs no other change --

async def _echo(agent_id, session_id, params, *, key=None, reply_channel="", rpc_id=None,
                where="params"):
    return {"echo": params.get("text"), "session_id": str(session_id), "where": where,
            "agent": agent_id}


def _echo_methods():
    return (agentmethods.AgentMethod(
        "test.echo", agentmethods.session_params, _echo, shape="result", keyed=False,
        tool="echo", sdk="aecho", rest="echo", summary="Echo a text.",
        properties={"text": {"type": "string"}}, required=("text",)),)


@pytest.fixture
def echo_adapter(settings):
    import sys
    import types

    from a2ui.core.adapters import Adapter

    module = types.ModuleType("tests_echo_protocol")
    module.ADAPTER = Adapter(name="echo", agent_methods=_echo_methods)
    sys.modules[module.__name__] = module
    a2ui = dict(getattr(settings, "A2UI", {}))
    a2ui["ADAPTERS"] = [*(a2ui.get("ADAPTERS") or _shipped()), module.__name__]
    settings.A2UI = a2ui
    try:
        yield
    finally:
        del sys.modules[module.__name__]


def _shipped():
    from a2ui.conf import DEFAULTS

    return DEFAULTS["ADAPTERS"]


SID = "00000000-0000-0000-0000-0000000000e1"


async def test_a_declared_method_is_on_the_socket(echo_adapter, agent, agent_key):
    bot = await connect_agent(agent_key)
    await send(bot, {"jsonrpc": "2.0", "id": 1, "method": "test.echo",
                     "params": {"session_id": SID, "text": "hi"}})
    assert (await recv(bot))["result"] == {"echo": "hi", "session_id": SID,
                                           "where": "params", "agent": agent.pk}
    await send(bot, {"jsonrpc": "2.0", "id": 2, "method": "test.echo", "params": {}})
    error = (await recv(bot))["error"]  # the core's session_params, in seed 000's words
    assert error["code"] == -32602 and error["data"] == {"path": "params.session_id"}


async def test_a_declared_method_is_in_the_python_api(echo_adapter, agent):
    assert "aecho" in dir(agents)
    assert await agents.aecho(agent, SID, text="hi") == {
        "echo": "hi", "session_id": SID, "where": "params", "agent": agent.pk}
    assert await agents.apush(agent, SID, "test.echo", {"text": "yo"}) == {
        "echo": "yo", "session_id": SID, "where": "params", "agent": agent.pk}


async def test_a_declared_method_is_an_mcp_tool(echo_adapter, agent):
    import types

    from a2ui.mcp import agent as mcp_agent

    listed = {name: schema for name, _, schema in tools.tool_list("agent")}
    assert listed["echo"]["required"] == ["session_id", "text"]
    assert "idempotency_key" not in listed["echo"]["properties"]  # keyed=False
    result = await mcp_agent.call(None, types.SimpleNamespace(agent=agent), "echo",
                                  {"session_id": SID, "text": "hi"})
    assert result.structured_content == {"echo": "hi", "session_id": SID,
                                         "where": "arguments", "agent": agent.pk}


def test_a_declared_method_with_a_rest_kind_is_a_rest_route(echo_adapter, settings, agent,
                                                             agent_key):
    import sys
    import types

    from rest_framework.test import APIClient

    from a2ui.api import views

    urls = types.ModuleType("tests_echo_urls")
    urls.urlpatterns = views.session_push_urls("api/v4/sessions/<uuid:session_id>/")
    sys.modules[urls.__name__] = urls
    settings.ROOT_URLCONF = urls.__name__
    try:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {agent_key}")
        reply = client.post(f"/api/v4/sessions/{SID}/echo", {"text": "hi"}, format="json")
        assert reply.status_code == 202, reply.content
        assert reply.json() == {"echo": "hi", "session_id": SID, "where": "", "agent": agent.pk}
        reply = client.post(f"/api/v4/sessions/{SID}/echo", [1], format="json")
        assert reply.status_code == 400  # not the params object
        assert {str(p.pattern) for p in urls.urlpatterns} >= {
            "api/v4/sessions/<uuid:session_id>/surfaces", "api/v4/sessions/<uuid:session_id>/agui",
            "api/v4/sessions/<uuid:session_id>/echo"}
    finally:
        del sys.modules[urls.__name__]


def test_session_params_is_a_core_error():
    from a2ui.core.errors import DomainError, Fault
    from a2ui.rpc.errors import ProtocolError

    for params in (None, [], {"x": 1}):
        with pytest.raises(DomainError) as info:
            agentmethods.session_params(params)
        assert not isinstance(info.value, ProtocolError)
        assert info.value.fault is Fault.INVALID_INPUT
        assert info.value.data == {"path": "params.session_id"}
    assert agentmethods.session_params({"session_id": "s", "a": 1}) == ("s", {"a": 1})
