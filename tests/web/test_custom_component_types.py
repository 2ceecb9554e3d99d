"""A host project's own seed-000 component type (``A2UI['COMPONENT_TYPES']``): validated by its
JSON Schema like the built-ins (the refusal names the field), sanitized the same way, listed in
the server's capabilities, re-checked after an update, shown to v0.9 clients as its title, and
a bad definition is a system check error. Its rendering in Chromium: tests/browser/test_extend.py.
"""

import pytest

from a2ui.core.content import customtypes
from a2ui.core.content.methods import validate_params
from a2ui.core.content.updates import apply_update
from a2ui.core.errors import DomainError
from a2ui.core.surfaces.translate import component_tree
from a2ui.jsonrpc.capabilities import server_capabilities

RATING = {"rating": {"schema": {
    "type": "object",
    "properties": {
        "title": {"type": "string", "maxLength": 200},
        "stars": {"type": "integer", "minimum": 0, "maximum": 5},
        "url": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 5},
    },
    "required": ["stars"],
    "additionalProperties": False,
}}}


@pytest.fixture
def rating(settings):
    settings.A2UI = {**getattr(settings, "A2UI", {}), "COMPONENT_TYPES": RATING}
    yield
    assert customtypes.is_custom("rating")


def render(data, component_type="rating"):
    return validate_params("ui.render", {"session_id": "s", "component_id": "r1",
                                         "component_type": component_type, "data": data})


def refusal(call):
    with pytest.raises(DomainError) as info:
        call()
    return info.value.data["path"], info.value.data["reason"]


def test_a_custom_type_is_validated_by_its_schema(rating):
    out = render({"title": "Our service", "stars": 4, "tags": ["fast"]})
    assert out["component_type"] == "rating" and out["data"]["stars"] == 4
    assert refusal(lambda: render({"stars": 9}))[0] == "params.data.stars"
    assert refusal(lambda: render({"stars": 2, "tags": ["a", 3]}))[0] == "params.data.tags[1]"
    assert refusal(lambda: render({"title": "no stars"}))[0] == "params.data"
    assert refusal(lambda: render({"stars": 1, "colour": "red"}))[0] == "params.data.colour"
    assert refusal(lambda: render([1]))[0] == "params.data"


def test_a_custom_type_is_sanitized_like_the_builtins(rating):
    out = render({"title": "<b>Bold</b><script>x()</script>", "stars": 3})
    assert "<script" not in out["data"]["title"] and "<b>" not in out["data"]["title"]
    # A key named like a URL goes through the URL policy, whatever the schema says.
    path, _ = refusal(lambda: render({"stars": 3, "url": "javascript:alert(1)"}))
    assert path == "params.data.url"


def test_unknown_types_are_still_refused_and_named(rating):
    path, reason = refusal(lambda: render({}, "carousel"))
    assert path == "params.component_type" and "rating" in reason and "card" in reason


def test_capabilities_and_updates(rating):
    assert "rating" in server_capabilities(1024, 60)["supported_components"]
    current = render({"stars": 2})["data"]
    assert apply_update("rating", current, "merge", {"stars": 5})["stars"] == 5
    with pytest.raises(DomainError):
        apply_update("rating", current, "merge", {"stars": 6})


def test_a_v09_client_is_shown_its_title(rating):
    components, _ = component_tree("rating", {"title": "Our service", "stars": 4})
    assert any(c.get("text") == "Our service" for c in components)


def test_without_the_setting_the_type_is_unknown(settings):
    settings.A2UI = {**getattr(settings, "A2UI", {}), "COMPONENT_TYPES": {}}
    assert refusal(lambda: render({"stars": 1}))[0] == "params.component_type"


@pytest.mark.parametrize("bad", [
    {"Rating": {"schema": {}}},             # not lowercase
    {"card": {"schema": {}}},               # a built-in
    {"rating": {}},                         # no schema
    {"rating": {"schema": {"type": "nope"}}},  # does not compile
    {"rating": {"schema": {"$ref": "https://example.com/s.json"}}},  # remote ref
])
def test_a_bad_definition_is_a_system_check_error(settings, bad):
    from a2ui.checks import check_a2ui_settings

    settings.A2UI = {**getattr(settings, "A2UI", {}), "COMPONENT_TYPES": bad}
    assert [e.id for e in check_a2ui_settings(None)] == ["a2ui.E040"]
    assert customtypes.names() == ()  # nothing installed until it is fixed
