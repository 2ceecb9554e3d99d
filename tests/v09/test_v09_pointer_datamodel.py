"""JSON Pointer syntax and pure data-model updates."""

from __future__ import annotations

import pytest
from v09_helpers import create, data, text, update

from a2ui.core.surfaces import ValidationFailed, datamodel, validate_batch
from a2ui.core.surfaces.pointer import is_absolute_pointer, is_valid_path, split_path


@pytest.mark.parametrize("path", ["", "/", "/a/b", "/a~0b/c~1d", "a", "a/b", "/a//b", "/ä"])
def test_valid_paths(path: str) -> None:
    assert is_valid_path(path)


@pytest.mark.parametrize("path", ["/a~", "/a~2", "a~b", "~"])
def test_invalid_paths(path: str) -> None:
    assert not is_valid_path(path)


def test_absolute_pointer() -> None:
    assert is_absolute_pointer("/x") and is_absolute_pointer("")
    assert not is_absolute_pointer("x") and not is_absolute_pointer("/x~3")


def test_split_unescapes_and_drops_empty_segments() -> None:
    assert split_path("/a~1b/~0c//d/") == ["a/b", "~c", "d"]


def test_binding_with_bad_escape_is_refused() -> None:
    with pytest.raises(ValidationFailed) as info:
        validate_batch({}, [create(), update(text("root", {"path": "/a~2"}))])
    assert info.value.path == "/updateComponents/components/0/text/path"


def test_update_data_model_needs_absolute_path() -> None:
    with pytest.raises(ValidationFailed) as info:
        validate_batch({}, [create(), data("user/name", value=1)])
    assert info.value.path == "/updateDataModel/path"


def test_upsert_creates_and_copies_path_only() -> None:
    model = {"a": {"b": 1}, "other": {"big": [1, 2]}}
    new = datamodel.upsert(model, "/a/c/d", 2)
    assert new == {"a": {"b": 1, "c": {"d": 2}}, "other": {"big": [1, 2]}}
    assert model == {"a": {"b": 1}, "other": {"big": [1, 2]}}
    assert new["other"] is model["other"]


def test_root_replace_and_delete() -> None:
    assert datamodel.upsert({"a": 1}, "/", {"b": 2}) == {"b": 2}
    assert datamodel.upsert({"a": 1}, "", [1]) == [1]
    assert datamodel.remove({"a": 1}, "/") == {}


def test_arrays() -> None:
    model = {"l": [1, 2]}
    assert datamodel.upsert(model, "/l/0", 9) == {"l": [9, 2]}
    assert datamodel.upsert(model, "/l/2", 3) == {"l": [1, 2, 3]}
    assert datamodel.upsert(model, "/l/-", 3) == {"l": [1, 2, 3]}
    assert datamodel.remove(model, "/l/0") == {"l": [2]}
    with pytest.raises(datamodel.DataModelError):
        datamodel.upsert(model, "/l/5", 0)
    with pytest.raises(datamodel.DataModelError):
        datamodel.upsert(model, "/l/x", 0)


def test_delete_missing_is_a_no_op() -> None:
    assert datamodel.remove({"a": 1}, "/b/c") == {"a": 1}


def test_omitted_value_deletes_in_batch() -> None:
    changes = validate_batch({}, [create(), data(value={"a": 1, "b": 2}), data("/a")])
    assert changes.states["s1"].data_model == {"b": 2}


def test_default_path_is_root() -> None:
    changes = validate_batch({}, [create(), data(value={"x": 1})])
    assert changes.states["s1"].data_model == {"x": 1}


def test_bad_array_index_is_a_validation_error() -> None:
    with pytest.raises(ValidationFailed) as info:
        validate_batch({}, [create(), data(value={"l": []}), data("/l/3", value=1)])
    assert info.value.path == "/updateDataModel/path" and info.value.index == 2


def test_value_depth_limited() -> None:
    deep: list = []
    for _ in range(60):
        deep = [deep]
    with pytest.raises(ValidationFailed) as info:
        validate_batch({}, [create(), data(value=deep)])
    assert info.value.path == "/updateDataModel/value"
