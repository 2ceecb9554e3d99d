"""Envelope rules, component/property errors, the catalog registry, error form."""

from __future__ import annotations

import copy

import pytest
from v09_helpers import text, update

from a2ui.core.surfaces import (
    BASIC_CATALOG_ID,
    CatalogError,
    CatalogRegistry,
    ValidationFailed,
    validate_batch,
    validate_server_message,
)
from a2ui.core.surfaces.catalog import basic_catalog_definition


def refused(message: dict, **kw) -> ValidationFailed:
    with pytest.raises(ValidationFailed) as info:
        validate_server_message(message, **kw)
    return info.value


def test_error_form() -> None:
    err = refused(update(text("root", 5)))
    assert err.to_error_message() == {"version": "v0.9", "error": {
        "code": "VALIDATION_FAILED", "surfaceId": "s1",
        "path": "/updateComponents/components/0/text",
        "message": 'Expected a string, a {"path": ...} binding or a function call.'}}
    assert err.surfaceId == "s1"


@pytest.mark.parametrize(("message", "path"), [
    ({"createSurface": {"surfaceId": "s", "catalogId": BASIC_CATALOG_ID}}, "/version"),
    ({"version": "v1.0", "deleteSurface": {"surfaceId": "s"}}, "/version"),
    ({"version": "v0.9", "deleteSurface": {"surfaceId": "s"}, "x": 1}, "/x"),
    ({"version": "v0.9", "deleteSurface": {"surfaceId": "s"},
      "createSurface": {"surfaceId": "s"}}, "/createSurface"),
    ({"version": "v0.9"}, ""),
    ({"version": "v0.9", "deleteSurface": {"surfaceId": "s", "x": 1}}, "/deleteSurface/x"),
    ({"version": "v0.9", "deleteSurface": {}}, "/deleteSurface"),
    ({"version": "v0.9", "updateComponents": {"surfaceId": "s", "components": []}},
     "/updateComponents/components"),
    ({"version": "v0.9", "createSurface": {"surfaceId": "s", "catalogId": "urn:nope"}},
     "/createSurface/catalogId"),
    ({"version": "v0.9", "createSurface": {"surfaceId": "s", "catalogId": BASIC_CATALOG_ID,
                                           "sendDataModel": "yes"}},
     "/createSurface/sendDataModel"),
])
def test_envelope(message: dict, path: str) -> None:
    assert refused(message).path == path


def test_version_091_accepted() -> None:
    validate_server_message({"version": "v0.9.1", "deleteSurface": {"surfaceId": "s"}})


@pytest.mark.parametrize(("component", "path", "words"), [
    ({"id": "root", "component": "Marquee"}, "/component", "Unknown component type"),
    ({"id": "root", "component": "Text"}, "", "'text'"),
    ({"component": "Text", "text": "x"}, "", "'id'"),
    ({"id": "root", "component": "Text", "text": "x", "usageHint": "h1"}, "/usageHint",
     "Unknown property"),
    ({"id": "root", "component": "Row", "children": ["a"], "distribution": "start"},
     "/distribution", "Unknown property"),
    ({"id": "root", "component": "Icon", "name": "nope"}, "/name", "Must be one of"),
    ({"id": "root", "component": "Icon", "name": {"svgPath": "M0"}}, None, None),
    ({"id": "root", "component": "Button", "child": "t", "action": {"name": "x"}},
     "/action", "event"),
    ({"id": "root", "component": "Button", "child": "t",
      "action": {"event": {"name": "x", "context": {"a": {"nope": 1}}}}},
     "/action/event/context/a", "binding"),
    ({"id": "root", "component": "Text", "text": {"path": "/a", "extra": 1}}, "/text/extra",
     "Unknown property"),
    ({"id": "root", "component": "Text", "text": {"call": "nope", "args": {}}}, "/text/call",
     "Unknown function"),
    ({"id": "root", "component": "Text", "text": {"call": "required", "args": {"value": 1}}},
     "/text/call", "returns boolean"),
    ({"id": "root", "component": "Slider", "value": 1, "max": "10"}, "/max", "number"),
    ({"id": "root", "component": "ChoicePicker", "options": [{"label": "a"}], "value": []},
     "/options/0", "'value'"),
    ({"id": "root", "component": "DateTimeInput", "value": "", "min": "2024-13-45"}, "/min",
     None),
    ({"id": "root", "component": "DateTimeInput", "value": "", "min": "2024-01-02"}, None,
     None),
    ({"id": "root", "component": "Text", "text": "x", "weight": "1"}, "/weight", "number"),
    ({"id": "root", "component": "Text", "text": "x", "accessibility": {"label": 1}},
     "/accessibility/label", None),
    ({"id": "", "component": "Text", "text": "x"}, "/id", "empty"),
    ({"id": "root", "component": "TextField", "label": "l", "checks": [{"message": "m",
      "condition": {"call": "length", "args": {"value": "x"}}}]},
     "/checks/0/condition/args", "Needs at least one of 'min', 'max'"),
])
def test_component_errors(component: dict, path: str | None, words: str | None) -> None:
    if path is None:
        validate_server_message(update(component))
        return
    err = refused(update(component))
    assert err.path == "/updateComponents/components/0" + path
    if words:
        assert words in err.message


def _custom_catalog() -> dict:
    return {
        "catalogId": "https://example.com/catalogs/mine.json",
        "components": {
            "Badge": {
                "type": "object",
                "allOf": [
                    {"$ref": "https://a2ui.org/specification/v0_9/common_types.json#/$defs/"
                             "ComponentCommon"},
                    {"properties": {
                        "component": {"const": "Badge"},
                        "label": {"$ref": "https://a2ui.org/specification/v0_9/"
                                          "common_types.json#/$defs/DynamicString"},
                        "count": {"type": "integer", "minimum": 0},
                        "child": {"$ref": "https://a2ui.org/specification/v0_9/"
                                          "common_types.json#/$defs/ComponentId"}},
                     "required": ["component", "label"]},
                ],
                "unevaluatedProperties": False,
            },
            "Text": {"$ref": f"{BASIC_CATALOG_ID}#/components/Text"},
        },
        "functions": {},
        "$defs": {"theme": {"type": "object", "properties": {"accent": {"type": "string"}},
                            "additionalProperties": False}},
    }


def test_custom_catalog_registry() -> None:
    registry = CatalogRegistry()
    assert BASIC_CATALOG_ID in registry
    compiled = registry.register(_custom_catalog())
    cid = compiled.catalog_id
    assert cid in registry.ids()
    msgs = [{"version": "v0.9", "createSurface": {"surfaceId": "s1", "catalogId": cid,
                                                  "theme": {"accent": "red"}}},
            update({"id": "root", "component": "Badge", "label": "x", "count": 2,
                    "child": "t"}, text("t"))]
    changes = validate_batch({}, msgs, registry, strict=True)
    assert changes.states["s1"].catalog_id == cid
    bad = copy.deepcopy(msgs)
    bad[1]["updateComponents"]["components"][0]["color"] = "red"
    with pytest.raises(ValidationFailed) as info:
        validate_batch({}, bad, registry)
    assert info.value.path == "/updateComponents/components/0/color"
    bad = copy.deepcopy(msgs)
    bad[1]["updateComponents"]["components"][0]["component"] = "Column"
    with pytest.raises(ValidationFailed):
        validate_batch({}, bad, registry)
    bad = copy.deepcopy(msgs)
    bad[0]["createSurface"]["theme"] = {"primaryColor": "#000000"}
    with pytest.raises(ValidationFailed):
        validate_batch({}, bad, registry)
    with pytest.raises(ValidationFailed):  # unknown to a registry without it
        validate_batch({}, msgs)
    registry.unregister(cid)
    assert cid not in registry


def test_surface_keeps_its_catalog() -> None:
    registry = CatalogRegistry()
    cid = registry.register(_custom_catalog()).catalog_id
    create_custom = {"version": "v0.9", "createSurface": {"surfaceId": "s1", "catalogId": cid}}
    with pytest.raises(ValidationFailed) as info:  # Column is not in the custom catalog
        validate_batch({}, [create_custom, update({"id": "root", "component": "Column",
                                                   "children": []})], registry)
    assert "Unknown component type" in info.value.message


_COMMON = "https://a2ui.org/specification/v0_9/common_types.json#/$defs/"


@pytest.mark.parametrize("bad", [
    # a child reference the graph rules could not see (jsonschema-rs itself knows the keyword)
    {"components": {"X": {"type": "object", "patternProperties": {
        "^c": {"$ref": _COMMON + "ComponentId"}}}}},
    {"components": {"X": {"$ref": "#/nope"}}},
    {"components": {"X": {"$ref": "https://example.com/elsewhere.json"}}},  # never fetched
    {"components": {"X": {"type": "widget"}}},  # not a valid JSON Schema
    {"components": {"X": {"oneOf": [{"$ref": _COMMON + "DynamicString"},
                                    {"$ref": _COMMON + "ComponentId"}]}}},  # ambiguous
    {"components": []},
    {"components": {}},
])
def test_uncompilable_catalog(bad: dict) -> None:
    with pytest.raises(CatalogError):
        CatalogRegistry(include_basic=False).register({"catalogId": "urn:x", **bad}
                                                      if bad.get("components") != {} else bad)


def test_basic_catalog_shape() -> None:
    definition = basic_catalog_definition()
    assert len(definition["components"]) == 18 and len(definition["functions"]) == 14
    registry = CatalogRegistry()
    basic = registry.get(BASIC_CATALOG_ID)
    assert basic is not None and len(basic.components) == 18 and len(basic.functions) == 14
