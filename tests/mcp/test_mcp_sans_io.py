"""The sans-I/O parts of a2ui.mcp, tested directly: URIs, the HTML renderer, negotiation,
event mapping, tool schemas."""

import base64
import hashlib
import json
import re
import uuid

import jsonschema
import pytest

from a2ui.core import events
from a2ui.mcp import changes, negotiation, render, tools, uris

SID = uuid.UUID("12345678-1234-5678-1234-56781234abcd")


@pytest.mark.parametrize("item", ["c1", "a/b c%", "ünï", "x?y#z", "..", "a" * 200])
@pytest.mark.parametrize("kind", ["components", "apps", "surfaces"])
def test_uris_round_trip_any_id(kind, item):
    uri = uris.build(kind, SID, item)
    ref = uris.parse(uri)
    assert ref == uris.Ref(kind, SID, item) and ref.uri() == uri
    assert ref.mime_type == {"components": "text/html", "apps": "text/html;profile=mcp-app",
                             "surfaces": "application/a2ui+json"}[kind]


@pytest.mark.parametrize("uri", [
    None, 5, "", "ui://sessions", f"http://sessions/{SID}/components/c1",
    f"a2ui://sessions/{SID}/components/c1",  # wrong scheme for the kind
    f"ui://sessions/{SID}/surfaces/s1",
    f"ui://sessions/{str(SID).upper()}/components/c1",  # another spelling of the id
    "ui://sessions/not-a-uuid/components/c1", f"ui://sessions/{SID}/components/",
    f"ui://sessions/{SID}/components/a%2Fb/c", f"ui://sessions/{SID}/components/a b",
    f"ui://sessions/{SID}/components/%ff", "ui://sessions/" + "x" * 3000,
    f"a2ui://sessions/{SID}/client",
])
def test_uris_refuse_what_is_not_ours(uri):
    assert uris.parse(uri) is None


def test_client_uri():
    assert uris.parse(f"ui://sessions/{SID}/client") == uris.Ref("client", SID)


COMPONENTS = {
    "card": {"title": "T<script>alert(1)</script>", "description": "d",
             "sections": [{"label": "L", "value": 3}],
             "actions": [{"label": "Docs", "action": "navigate", "url": "https://e.test/x"},
                         {"label": "Later", "action": "later"}]},
    "table": {"headers": [{"key": "a", "label": "A"}], "rows": [{"a": "<i>1</i>"}, [2]]},
    "form": {"fields": [{"name": "n</script><script>x", "type": "text", "required": True},
                        {"name": "k", "type": "select", "options": ["a", "b"]},
                        {"name": "c", "type": "checkbox"}], "submit_label": "Go"},
    "chart": {"chart_type": "bar", "title": "C", "x_axis": {"values": ["a", "b"]},
              "series": [{"name": "s", "data": [1, None]}]},
    "markdown": {"content": "# Hi <img src=x onerror=alert(1)>"},
    "code": {"code": "print('<b>')", "language": "python"},
    "image": {"url": "https://img.example.com:8443/a.png", "alt": "a\"b", "width": 10},
    "alert": {"severity": "error", "title": "Oops", "message": "m"},
    "steps": {"steps": [{"label": "one", "status": "completed"}]},
}


@pytest.mark.parametrize("kind", sorted(COMPONENTS))
@pytest.mark.parametrize("mode", ["mcp-ui", "mcp-app"])
def test_every_component_renders_a_strict_document(kind, mode):
    doc = render.document(SID, {"component_id": "c1", "component_type": kind,
                                "data": COMPONENTS[kind]}, mode)
    assert doc.startswith("<!DOCTYPE html>")
    # Exactly our two script elements: the data block and the hashed script.
    assert doc.count("<script") == 2
    scripts = re.findall(r"<script>(.*?)</script>", doc, re.S)
    assert len(scripts) == 1
    digest = base64.b64encode(hashlib.sha256(scripts[0].encode()).digest()).decode()
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', doc).group(1)
    assert f"script-src 'sha256-{digest}'" in csp and csp.startswith("default-src 'none'")
    assert "onerror=" not in doc.replace("onerror=alert(1)&gt;", "")
    blob = re.search(r'id="a2ui-data">(.*?)</script>', doc, re.S).group(1)
    state = json.loads(blob)
    assert state["mode"] == mode and state["session_id"] == str(SID)
    assert state["component_id"] == "c1"


def test_escaping_and_actions():
    card = render.document(SID, {"component_id": "c", "component_type": "card",
                                 "data": COMPONENTS["card"]})
    assert "<script>alert(1)" not in card and "T&lt;script&gt;" in card
    assert 'data-a2ui-url="https://e.test/x"' in card
    assert "MCP_UI_ACTION" in card and "NAVIGATE" in card and "CALL_TOOL" in card
    form = render.document(SID, {"component_id": "f", "component_type": "form",
                                 "data": COMPONENTS["form"]})
    blob = re.search(r'id="a2ui-data">(.*?)</script>', form, re.S).group(1)
    assert "</script>" not in blob
    assert json.loads(blob)["fields"][0]["name"] == "n</script><script>x"
    image = render.document(SID, {"component_id": "i", "component_type": "image",
                                  "data": COMPONENTS["image"]})
    assert "img-src https://img.example.com:8443;" in image
    assert render.csp("image", {"url": "javascript:alert(1)"}).count("img-src 'none'") == 1
    assert render.app_meta("image", COMPONENTS["image"])["ui"]["csp"]["resourceDomains"] == [
        "https://img.example.com:8443"]


V09 = {"v0.9": {"supportedCatalogIds": ["urn:c"]}}


def test_negotiation_forms():
    assert negotiation.client_capabilities({"a2ui": {"clientCapabilities": V09}}) == V09
    assert negotiation.client_capabilities(
        {"extensions": {"a2ui": {"clientCapabilities": V09}}}) == V09
    assert negotiation.client_capabilities(
        {"extensions": {"org.example/a2ui": {"clientCapabilities": V09}}}) == V09
    other = {"v0.9": {"supportedCatalogIds": []}}
    assert negotiation.client_capabilities(
        {"a2ui": {"clientCapabilities": V09}}, {"a2ui": {"clientCapabilities": other}}) == other
    for nothing in (None, {}, {"a2ui": 5}, {"a2ui": {"clientCapabilities": []}},
                    {"extensions": []}):
        assert negotiation.client_capabilities(nothing, "x") is None
    assert negotiation.wants_apps({"extensions": {negotiation.APPS_EXTENSION: {}}})
    assert not negotiation.wants_apps({"extensions": {}}) and not negotiation.wants_apps(None)


def test_changes_of_each_event_shape():
    rendered = events.to_message(events.Kind.COMPONENT_RENDERED, {"component_id": "c1"}, 1, "e")
    assert changes.affected(rendered) == ({("components", "c1")}, True)
    updated = events.to_message(events.Kind.COMPONENT_UPDATED, {"component_id": "c1"}, 2, "e")
    assert changes.affected(updated) == ({("components", "c1")}, False)
    batch = events.to_message(events.Kind.SURFACE_BATCH, {"first_seq": 1, "messages": [
        {"version": "v0.9", "createSurface": {"surfaceId": "s1", "catalogId": "x"}},
        {"version": "v0.9", "updateDataModel": {"surfaceId": "s2", "path": "/"}}]})
    assert changes.affected(batch) == ({("surfaces", "s1"), ("surfaces", "s2")}, True)
    assert changes.affected(events.to_message(events.Kind.NOTIFY, {})) == (set(), False)
    assert changes.affected({"type": "a2ui.event", "kind": "future.kind"}) == (set(), False)
    removed = events.to_message(events.Kind.COMPONENT_REMOVED, {"component_id": "c9"})
    assert changes.affected(removed) == ({("components", "c9")}, True)
    assert changes.affected({"type": "a2ui.close", "code": 4010}) == (set(), False)


@pytest.mark.parametrize("kind", ["agent", "person"])
def test_tool_schemas_are_valid_json_schema(kind):
    listed = tools.tool_list(kind)
    assert listed
    for name, description, schema in listed:
        jsonschema.Draft202012Validator.check_schema(schema)
        assert description and schema["type"] == "object"
        # the session is optional there (show_session: the person's most recent one)
        if name not in ("list_sessions", "list_runs", "pending_requests", "show_session"):
            assert "session_id" in schema["required"]


def test_defaults_paths_and_session_split():
    assert tools.with_defaults("notify", {"title": "x"})["level"] == "info"
    assert tools.with_defaults("notify", {"level": "error"})["level"] == "error"
    assert tools.argument_path("params.data.title") == "arguments.data.title"
    assert tools.split_session({"session_id": "s", "a": 1}) == ("s", {"a": 1})
    for bad in (None, [], {}, {"session_id": 5}, {"session_id": ""}):
        with pytest.raises(ValueError):
            tools.split_session(bad)
