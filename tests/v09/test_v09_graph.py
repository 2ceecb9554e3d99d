"""Graph rules JSON Schema cannot express, and their error pointers."""

from __future__ import annotations

import pytest
from v09_helpers import card, column, create, text, update

from a2ui.core.surfaces import ValidationFailed, validate_batch, validate_server_message


def refused(messages: list, strict: bool = False, states: dict | None = None) -> ValidationFailed:
    with pytest.raises(ValidationFailed) as info:
        validate_batch(states or {}, messages, strict=strict)
    return info.value


def test_self_reference() -> None:
    err = refused([create(), update(column("root", "root"))])
    assert "references itself" in err.message
    assert err.path == "/updateComponents/components/0/children/0"
    assert err.index == 1 and err.surface_id == "s1"


def test_cycle() -> None:
    err = refused([create(), update(column("root", "a"), column("a", "b"), card("b", "a"))])
    assert "cycle" in err.message and "a -> b -> a" in err.message


def test_cycle_across_updates() -> None:
    err = refused([create(), update(column("root", "a"), column("a", "b")),
                   update(card("b", "root"))])
    assert "cycle" in err.message and err.index == 2
    assert err.path == "/updateComponents/components/0/child"


def test_duplicate_ids_in_one_update() -> None:
    err = refused([create(), update(text("root"), text("root"))])
    assert err.path == "/updateComponents/components/1/id"
    assert "Duplicate" in err.message


def test_same_id_in_later_update_replaces() -> None:
    changes = validate_batch({}, [create(), update(text("root", "a")), update(text("root", "b"))])
    assert changes.states["s1"].components["root"]["text"] == "b"


def test_dangling_reference_allowed_incrementally_refused_strictly() -> None:
    msgs = [create(), update(column("root", "later"))]
    validate_batch({}, msgs)
    err = refused(msgs, strict=True)
    assert err.path == "/updateComponents/components/0/children/0"
    assert "unknown component 'later'" in err.message


def test_orphans_allowed_incrementally_refused_strictly() -> None:
    msgs = [create(), update(text("root"), text("orphan"))]
    validate_batch({}, msgs)
    err = refused(msgs, strict=True)
    assert err.path == "/updateComponents/components/1"
    assert "not reachable" in err.message


def test_missing_root_only_strict() -> None:
    validate_batch({}, [create(), update(text("a"))])
    err = refused([create(), update(text("a"))], strict=True)
    assert "root" in err.message


def test_tree_depth_limit() -> None:
    ok = [card("root", "c1")] + [card(f"c{i}", f"c{i + 1}") for i in range(1, 49)] + [text("c49")]
    validate_batch({}, [create(), update(*ok)], strict=True)  # exactly 50 levels
    deep = [card("root", "c1")] + [card(f"c{i}", f"c{i + 1}") for i in range(1, 50)] + [text("c50")]
    err = refused([create(), update(*deep)])
    assert "deeper than 50" in err.message


def _nested_not(levels: int) -> dict:
    cond: dict = {"path": "/ok"}
    for _ in range(levels):
        cond = {"call": "not", "args": {"value": cond}}
    return cond


def test_function_call_nesting_limit() -> None:
    def field(levels: int) -> dict:
        return {"id": "root", "component": "TextField", "label": "x",
                "checks": [{"condition": _nested_not(levels), "message": "m"}]}

    validate_server_message(update(field(5)))
    with pytest.raises(ValidationFailed) as info:
        validate_server_message(update(field(6)))
    assert "nest at most 5" in info.value.message


def _list_with_template(template_text: dict) -> list[dict]:
    return [
        {"id": "root", "component": "List", "children": {"componentId": "row", "path": "/items"}},
        {"id": "row", "component": "Column", "children": ["label"]},
        template_text,
    ]


def test_relative_path_inside_template_scope() -> None:
    comps = _list_with_template(text("label", {"path": "name"}))
    validate_batch({}, [create(), update(*comps)], strict=True)


def test_relative_path_outside_template_scope() -> None:
    err = refused([create(), update(column("root", "t"), text("t", {"path": "name"}))])
    assert "relative path" in err.message
    assert err.path == "/updateComponents/components/1/text/path"


def test_component_shared_inside_and_outside_template_is_refused() -> None:
    comps = _list_with_template(text("label", {"path": "name"}))
    comps[0] = column("root", "list", "label")
    comps.insert(1, {"id": "list", "component": "List",
                     "children": {"componentId": "row", "path": "/items"}})
    err = refused([create(), update(*comps)])
    assert "relative path" in err.message


def test_relative_template_path_needs_outer_template() -> None:
    err = refused([create(), update(
        {"id": "root", "component": "List", "children": {"componentId": "x", "path": "items"}},
        text("x"))])
    assert err.path == "/updateComponents/components/0/children/path"


def test_relative_path_in_orphan_is_judged_once_linked() -> None:
    msgs = [create(), update(column("root")), update(text("t", {"path": "name"}))]
    validate_batch({}, msgs)  # orphan: not judged yet
    err = refused(msgs + [update(column("root", "t"))])
    assert err.index == 3 and "relative path" in err.message
