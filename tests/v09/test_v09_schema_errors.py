"""The jsonschema-rs schema layer: keywords, error choice (a2ui/core/surfaces/schema_errors.py), catalogs.

Ported from what the hand-written compiler guaranteed: every JSON Schema
keyword a catalog uses is enforced (JSON equality, not Python's: ``true`` is not
``1``), closed shapes across ``allOf``, formats, and exactly one error with a
JSON Pointer, chosen deterministically.
"""

from __future__ import annotations

import pytest
from v09_helpers import update

from a2ui.core.surfaces import (
    CatalogError,
    CatalogRegistry,
    ValidationFailed,
    validate_server_message,
)

COMMON = "https://a2ui.org/specification/v0_9/common_types.json#/$defs/"
CID = "urn:test:widgets"


def _widget() -> dict:
    return {
        "type": "object",
        "allOf": [
            {"$ref": COMMON + "ComponentCommon"},
            {"properties": {
                "component": {"const": "Widget"},
                "size": {"type": "integer", "minimum": 1, "exclusiveMaximum": 10,
                         "multipleOf": 1},
                "ratio": {"type": "number", "maximum": 2, "exclusiveMinimum": 0},
                "flag": {"const": True},
                "mode": {"enum": [1, "one", None]},
                "code": {"type": "string", "pattern": "^[A-Z]{3}$", "minLength": 3,
                         "maxLength": 3},
                "day": {"type": "string", "format": "date"},
                "at": {"type": "string", "format": "date-time"},
                "clock": {"type": "string", "format": "time"},
                "link": {"type": "string", "format": "uri"},
                "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1,
                         "maxItems": 2, "uniqueItems": True},
                "opts": {"type": "object", "minProperties": 1, "maxProperties": 1},
                "either": {"anyOf": [{"required": ["a"]}, {"required": ["b"]}]},
                "nested": {"$ref": "#/$defs/node"},
            }, "required": ["component"]},
        ],
        "unevaluatedProperties": False,
    }


def _catalog() -> dict:
    return {
        "catalogId": CID,
        "components": {"Widget": _widget()},
        "functions": {},
        "$defs": {"node": {"type": "object", "properties": {
            "child": {"$ref": COMMON + "ComponentId"},
            "next": {"$ref": "#/$defs/node"}}, "additionalProperties": False}},
    }


@pytest.fixture(scope="module")
def registry() -> CatalogRegistry:
    reg = CatalogRegistry()
    reg.register(_catalog())
    return reg


def widget(**props) -> dict:
    return update({"id": "root", "component": "Widget", **props})


def refused(registry: CatalogRegistry, message: dict) -> ValidationFailed:
    with pytest.raises(ValidationFailed) as info:
        validate_server_message(message, registry, catalog_id=CID)
    return info.value


@pytest.mark.parametrize("props", [
    {}, {"size": 9}, {"size": 3.0}, {"ratio": 2}, {"flag": True}, {"mode": None},
    {"mode": 1}, {"code": "ABC"}, {"day": "2024-02-29"}, {"at": "2024-01-02T03:04:05Z"},
    {"clock": "12:30:00Z"}, {"link": "https://a2ui.org/x"}, {"tags": ["a", "b"]},
    {"opts": {"k": 1}}, {"either": {"b": 1}}, {"nested": {"child": "x", "next": {"child": "y"}}},
])
def test_accepted(registry: CatalogRegistry, props: dict) -> None:
    validate_server_message(widget(**props), registry, catalog_id=CID)


@pytest.mark.parametrize(("props", "path", "words"), [
    ({"size": 0}, "/size", "at least 1"),
    ({"size": 10}, "/size", "less than 10"),
    ({"size": 1.5}, "/size", "integer"),
    ({"size": True}, "/size", "integer"),  # a boolean is no number
    ({"ratio": 0}, "/ratio", "greater than 0"),
    ({"ratio": 2.5}, "/ratio", "at most 2"),
    ({"flag": 1}, "/flag", "Must be true"),  # JSON equality: 1 is not true
    ({"mode": True}, "/mode", "Must be one of"),
    ({"mode": "two"}, "/mode", "Must be one of"),
    ({"code": "abc"}, "/code", "pattern"),
    ({"code": "ABCD"}, "/code", "at most 3"),
    ({"day": "2024-02-30"}, "/day", "valid date"),
    ({"at": "yesterday"}, "/at", "valid date-time"),
    ({"clock": "25:00"}, "/clock", "valid time"),
    ({"link": "not a uri"}, "/link", "valid uri"),
    ({"tags": []}, "/tags", "at least 1"),
    ({"tags": ["a", "b", "c"]}, "/tags", "at most 2"),
    ({"tags": ["a", "a"]}, "/tags", "unique"),
    ({"tags": ["a", 1]}, "/tags/1", "string"),
    ({"opts": {}}, "/opts", "at least 1"),
    ({"either": {"c": 1}}, "/either", "Needs at least one of 'a', 'b'"),
    ({"nested": {"next": {"next": {"oops": 1}}}}, "/nested/next/next/oops", "Unknown property"),
    ({"colour": "red"}, "/colour", "Unknown property 'colour'"),  # closed across allOf
])
def test_refused(registry: CatalogRegistry, props: dict, path: str, words: str) -> None:
    err = refused(registry, widget(**props))
    assert err.path == "/updateComponents/components/0" + path
    assert words in err.message


def test_deepest_error_wins(registry: CatalogRegistry) -> None:
    # several problems: the deepest pointer is reported, unknown keys only when alone
    err = refused(registry, widget(size=0, nested={"next": {"child": 5}}, colour="red"))
    assert err.path == "/updateComponents/components/0/nested/next/child"
    err = refused(registry, widget(size=0, colour="red"))
    assert err.path == "/updateComponents/components/0/size"


def test_equal_depth_takes_first_in_message_order(registry: CatalogRegistry) -> None:
    err = refused(registry, widget(ratio=5, size=0))
    assert err.path == "/updateComponents/components/0/ratio"
    err = refused(registry, widget(size=0, ratio=5))
    assert err.path == "/updateComponents/components/0/size"
    err = refused(registry, widget(tags=[1, 2]))
    assert err.path == "/updateComponents/components/0/tags/0"


def test_recursive_schema_refs_are_collected(registry: CatalogRegistry) -> None:
    msg = widget(nested={"child": "a", "next": {"child": "root"}})
    with pytest.raises(ValidationFailed) as info:  # root -> root via the recursive def
        validate_server_message(msg, registry, catalog_id=CID)
    assert "itself" in info.value.message


def test_function_call_in_catalog_without_functions() -> None:
    reg = CatalogRegistry()
    reg.register({"catalogId": "urn:test:bare", "components": {"Label": {
        "type": "object",
        "allOf": [{"$ref": COMMON + "ComponentCommon"},
                  {"properties": {"component": {"const": "Label"},
                                  "text": {"$ref": COMMON + "DynamicString"}}}],
        "unevaluatedProperties": False}}})
    msg = update({"id": "root", "component": "Label",
                  "text": {"call": "formatString", "args": {"value": "x"}}})
    with pytest.raises(ValidationFailed):  # formatString is a basic function, not this one's
        validate_server_message(msg, reg, catalog_id="urn:test:bare")
    msg["updateComponents"]["components"][0]["text"] = {"path": "/t"}
    validate_server_message(msg, reg, catalog_id="urn:test:bare")


def test_not_json_is_a_clean_refusal() -> None:
    with pytest.raises(ValidationFailed) as info:
        validate_server_message(update({"id": "root", "component": "Text", "text": b"x"}))
    assert info.value.path == "/updateComponents/components/0"


def test_bad_catalog_is_a_catalog_error() -> None:
    with pytest.raises(CatalogError):
        CatalogRegistry(include_basic=False).register(
            {"catalogId": "urn:x", "components": {"X": {"minimum": "zero"}}})
