"""SurfaceState apply/storage/snapshot and atomic batches."""

from __future__ import annotations

import json

import pytest
from v09_helpers import card, column, create, data, delete, text, update

from a2ui.core.surfaces import SessionSurfaces, SurfaceState, ValidationFailed, validate_batch


def test_create_then_apply_without_validation() -> None:
    state = SurfaceState.from_create(create(theme={"primaryColor": "#112233"},
                                            sendDataModel=True))
    state.apply(update(column("root", "t"), text("t")))
    state.apply(data("/user", value={"name": "A"}))
    assert state.theme == {"primaryColor": "#112233"} and state.send_data_model
    assert state.reachable_ids() == ["root", "t"]
    assert state.data_model == {"user": {"name": "A"}}
    state.apply(delete())
    assert state.deleted


def test_apply_refuses_create() -> None:
    with pytest.raises(ValueError):
        SurfaceState.from_create(create()).apply(create())


def test_to_dict_round_trip_through_json() -> None:
    changes = validate_batch({}, [create(), update(column("root", "t"), text("t")),
                                  data(value={"a": [1, 2]})])
    state = changes.states["s1"]
    stored = json.loads(json.dumps(state.to_dict()))
    again = SurfaceState.from_dict(stored)
    assert again == state
    del stored["graph"]  # metadata is recomputed from the catalog when missing
    assert SurfaceState.from_dict(stored).meta == state.meta


def test_snapshot_after_placeholders_replaced_is_strict_valid() -> None:
    msgs = [create(theme={"agentDisplayName": "x"}),
            update(column("root", "a", "b")),        # a, b: placeholders
            update(text("a"), text("b")),
            update(column("root", "c"), text("c")),  # a, b now orphans
            data("/k", value=1)]
    state = validate_batch({}, msgs).states["s1"]
    assert set(state.components) == {"root", "a", "b", "c"}
    snap = state.snapshot_messages()
    assert [next(k for k in m if k != "version") for m in snap] == [
        "createSurface", "updateComponents", "updateDataModel"]
    assert [c["id"] for c in snap[1]["updateComponents"]["components"]] == ["root", "c"]
    assert snap[2]["updateDataModel"] == {"surfaceId": "s1", "path": "/", "value": {"k": 1}}
    assert state.is_complete()
    validate_batch({}, snap, strict=True)


def test_snapshot_without_root_has_no_update_components() -> None:
    state = validate_batch({}, [create(), update(text("a"))]).states["s1"]
    snap = state.snapshot_messages()
    assert "updateComponents" not in json.dumps(snap) and not state.is_complete()


def test_create_twice_refused_but_allowed_after_delete() -> None:
    with pytest.raises(ValidationFailed) as info:
        validate_batch({}, [create(), create()])
    assert info.value.index == 1 and info.value.path == "/createSurface/surfaceId"
    changes = validate_batch({}, [create(), delete(), create()])
    assert "s1" in changes.states


def test_create_existing_surface_from_states_refused() -> None:
    states = validate_batch({}, [create()]).states
    with pytest.raises(ValidationFailed):
        validate_batch(states, [create()])


@pytest.mark.parametrize("message", [update(text("root")), data(value=1), delete()])
def test_unknown_surface_refused(message: dict) -> None:
    with pytest.raises(ValidationFailed) as info:
        validate_batch({}, [message])
    assert info.value.surface_id == "s1"
    assert info.value.path.endswith("/surfaceId")
    assert "Unknown surface" in info.value.message


def test_invalid_batch_changes_nothing() -> None:
    session = SessionSurfaces()
    session.apply_batch([create(), update(column("root", "t"), text("t")), data(value={"a": 1})])
    before = json.dumps(session.to_dict(), sort_keys=True)
    with pytest.raises(ValidationFailed) as info:
        session.apply_batch([update(text("t", "changed")), data("/a", value=2),
                             delete(), update(text("x"))])
    assert info.value.index == 3
    assert json.dumps(session.to_dict(), sort_keys=True) == before


def test_changes_report_states_deleted_and_messages() -> None:
    states = validate_batch({}, [create("a"), create("b")]).states
    changes = validate_batch(states, [delete("a"), update(text("root"), sid="b")])
    assert changes.deleted == ["a"] and list(changes.states) == ["b"]
    assert len(changes.messages) == 2
    assert states["b"].components == {}  # inputs untouched


def test_session_round_trip_and_snapshot() -> None:
    session = SessionSurfaces()
    session.apply_batch([create("a"), update(card("root", "t"), text("t"), sid="a")])
    session.apply_batch([delete("a"), create("b")])
    assert list(session.states) == ["b"]
    again = SessionSurfaces.from_dict(json.loads(json.dumps(session.to_dict())))
    assert again.snapshot_messages() == session.snapshot_messages()


def test_deleted_state_counts_as_absent() -> None:
    state = SurfaceState.from_create(create())
    state.apply(delete())
    changes = validate_batch({"s1": state}, [create()])
    assert not changes.states["s1"].deleted
