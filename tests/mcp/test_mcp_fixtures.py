"""The MCP conformance suite's fixtures (a2ui.mcp.fixtures): test-only, off by default, refused
by a system check with DEBUG off, and offered only to agent keys when on."""

import json

import pytest
from django.core.checks import run_checks
from django.test import override_settings

from a2ui.conf import DEFAULTS, defaults
from a2ui.mcp import fixtures, server
from a2ui.mcp.app import Principal


def ids(errors):
    return {e.id for e in errors}


def test_off_by_default_and_refused_with_debug_off():
    assert defaults()["MCP_CONFORMANCE_FIXTURES"] is False  # a2ui.mcp.adapter's default
    assert "MCP_CONFORMANCE_FIXTURES" not in DEFAULTS
    with override_settings(DEBUG=False, A2UI={"MCP_CONFORMANCE_FIXTURES": True}):
        assert "a2ui.E006" in ids(run_checks())
    with override_settings(DEBUG=True, A2UI={"MCP_CONFORMANCE_FIXTURES": True}):
        assert "a2ui.E006" not in ids(run_checks())
    with override_settings(DEBUG=False):
        assert "a2ui.E006" not in ids(run_checks())


def test_only_agents_get_them_and_only_with_the_setting():
    agent, person = Principal("agent"), Principal("person")
    assert server.fixtures_for(agent) is None
    assert server.conformance_handlers() == {}
    with override_settings(A2UI={"MCP_CONFORMANCE_FIXTURES": True}):
        assert server.fixtures_for(agent) is fixtures
        assert server.fixtures_for(person) is None
        assert set(server.conformance_handlers()) == {
            "on_list_prompts", "on_get_prompt", "on_completion", "on_set_logging_level"}


def test_resources_templates_and_prompts():
    assert fixtures.read("test://static-text")[0].text.startswith("This is the content")
    assert fixtures.read("test://static-binary")[0].blob == fixtures.PNG
    body = json.loads(fixtures.read("test://template/123/data")[0].text)
    assert body == {"id": "123", "templateTest": True, "data": "Data for ID: 123"}
    for missing in ("test://nope", "test://template//data", "test://template/1/x"):
        assert fixtures.read(missing) is None
    got = fixtures.get_prompt("test_prompt_with_arguments", {"arg1": "a", "arg2": "b"})
    assert got.messages[0].content.text == "Prompt with arguments: arg1='a', arg2='b'"
    with pytest.raises(ValueError):
        fixtures.get_prompt("test_prompt_with_arguments", {"arg1": "a"})
    assert fixtures.get_prompt("nope", {}) is None
    schema = next(t for t in fixtures.tools() if t.name == "json_schema_2020_12_tool").input_schema
    assert schema["$schema"].endswith("2020-12/schema") and schema["additionalProperties"] is False
