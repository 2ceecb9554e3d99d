"""A host project's settings with its own components (tests/browser/test_extend.py): the example
project's, plus a seed-000 component type with its schema, a v0.9 catalog with a component of
its own, and the module that registers both renderers in the page."""

from pathlib import Path

from a2ui_project.settings import *  # noqa: F403
from a2ui_project.settings import A2UI, STATICFILES_DIRS

HERE = Path(__file__).resolve().parent
COMMON = "https://a2ui.org/specification/v0_9/common_types.json#/$defs/"
SHOP_CATALOG = "https://example.com/catalogs/shop.json"

STATICFILES_DIRS = [*STATICFILES_DIRS, HERE / "static"]

A2UI = {
    **A2UI,
    "COMPONENT_TYPES": {
        "rating": {"schema": {
            "type": "object",
            "properties": {"title": {"type": "string", "maxLength": 200},
                           "stars": {"type": "integer", "minimum": 0, "maximum": 5}},
            "required": ["title", "stars"],
            "additionalProperties": False,
        }},
    },
    "CATALOGS": [{
        "catalogId": SHOP_CATALOG,
        "components": {
            "Rating": {"type": "object", "allOf": [
                {"$ref": COMMON + "ComponentCommon"},
                {"properties": {"component": {"const": "Rating"},
                                "label": {"$ref": COMMON + "DynamicString"},
                                "stars": {"$ref": COMMON + "DynamicNumber"}},
                 "required": ["component", "label", "stars"]}],
                "unevaluatedProperties": False},
            "Column": {"type": "object", "allOf": [
                {"$ref": COMMON + "ComponentCommon"},
                {"properties": {"component": {"const": "Column"},
                                "children": {"$ref": COMMON + "ChildList"}},
                 "required": ["component", "children"]}],
                "unevaluatedProperties": False},
        },
        "functions": {},
        "$defs": {"theme": {"type": "object"}},
    }],
    "CLIENT_MODULES": ["extend/components.js"],
}
