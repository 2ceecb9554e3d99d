"""The session-state reducer (a2ui.core.state), pure: each event kind, purity, and the invariant
that a snapshot plus the events after it equals the state folded from the start."""

import copy
import random

import pytest

from a2ui.core import state as S
from a2ui.core.content.updates import apply_update
from a2ui.core.errors import DomainError
from a2ui.core.events import STATEFUL, TRANSIENT, Kind
from a2ui.core.surfaces import SessionSurfaces
from tests.activityops import ACTIVITY_EXAMPLES
from tests.sessionops import Ops, all_events, surface_create

V = "v0.9"


def rendered(cid, kind="card", data=None, metadata=None):
    event = {"component_id": cid, "component_type": kind, "data": data or {"title": cid}}
    if metadata is not None:
        event["metadata"] = metadata
    return (Kind.COMPONENT_RENDERED, event)


def opened(rid, kind="input"):
    return (Kind.REQUEST_OPENED, {"kind": kind, "params": {"request_id": rid, "prompt": "?"}})


def batch(messages):
    return (Kind.SURFACE_BATCH, {"first_seq": 1, "messages": messages})


def ids(state):
    return list(state.components)


@pytest.fixture
def base():
    return S.fold(S.SessionState(), [
        rendered("a"), rendered("b", "table", {"headers": [{"key": "n", "label": "N"}],
                                               "rows": [{"n": 1}]}),
        opened("r1"), opened("r2", "confirm"), batch(surface_create("s1", 1)),
    ])


def test_a_new_component_goes_last_and_a_rerender_keeps_its_place(base):
    state = S.apply(base, *rendered("c"))
    assert ids(state) == ["a", "b", "c"]
    state = S.apply(state, *rendered("a", "markdown", {"content": "x"}, {"priority": "high"}))
    assert ids(state) == ["a", "b", "c"]
    assert state.components["a"] == {"component_type": "markdown", "data": {"content": "x"},
                                     "metadata": {"priority": "high"}}
    assert state.components["c"]["metadata"] == {}  # no metadata: {} like the stored row


@pytest.mark.parametrize("operation, data", [
    ("append", {"rows": [{"n": 2}]}),
    ("merge", {"caption": "c"}),
    ("replace", {"headers": [{"key": "m", "label": "M"}], "rows": []}),
])
def test_an_update_is_apply_update_on_the_stored_data(base, operation, data):
    state = S.apply(base, Kind.COMPONENT_UPDATED,
                    {"component_id": "b", "operation": operation, "data": data})
    expected = apply_update("table", base.components["b"]["data"], operation, data)
    assert state.components["b"]["data"] == expected
    assert ids(state) == ids(base) and state.components["a"] is base.components["a"]


def test_an_update_the_protocol_refuses_raises_and_one_of_an_unknown_id_changes_nothing(base):
    with pytest.raises(DomainError):
        S.apply(base, Kind.COMPONENT_UPDATED,
                {"component_id": "b", "operation": "append", "data": {"headers": "x"}})
    assert S.apply(base, Kind.COMPONENT_UPDATED,
                   {"component_id": "zz", "operation": "merge", "data": {}}) is base


def test_removed_drops_the_component(base):
    assert ids(S.apply(base, Kind.COMPONENT_REMOVED, {"component_id": "a"})) == ["b"]
    assert S.apply(base, Kind.COMPONENT_REMOVED, {"component_id": "zz"}) is base


def test_requests_open_and_close_whatever_the_status(base):
    assert list(base.requests) == ["r1", "r2"]
    assert base.requests["r2"] == {"kind": "confirm", "params": {"request_id": "r2",
                                                                  "prompt": "?"}}
    for status in ("answered", "timed_out", "cancelled"):
        closed = S.apply(base, Kind.REQUEST_CLOSED, {"request_id": "r1", "status": status})
        assert list(closed.requests) == ["r2"]
    assert S.apply(base, Kind.REQUEST_CLOSED, {"request_id": "zz", "status": "answered"}) is base


@pytest.mark.parametrize("kind", sorted(TRANSIENT) + ["session.future_kind"])
def test_transient_and_unknown_kinds_change_nothing(base, kind):
    assert S.apply(base, kind, {"anything": 1}) is base


def test_a_surface_batch_is_the_v09_reducer(base):
    messages = [
        {"version": V, "updateDataModel": {"surfaceId": "s1", "path": "/name", "value": "Ada"}},
        {"version": V, "updateComponents": {"surfaceId": "s1", "components": [
            {"id": "title", "component": "Text", "text": "New"}]}},
        *surface_create("s2", 2),
        {"version": V, "deleteSurface": {"surfaceId": "s2"}},
    ]
    reference = SessionSurfaces()
    reference.apply_batch(surface_create("s1", 1))
    reference.apply_batch(messages)
    state = S.apply(base, *batch(messages))
    assert sorted(state.surfaces) == sorted(reference.states) == ["s1"]
    assert state.surfaces["s1"].to_dict() == reference.states["s1"].to_dict()
    assert state.surfaces["s1"].data_model == {"name": "Ada"}


def test_apply_never_changes_the_state_it_is_given(base):
    before = copy.deepcopy(S.snapshot(base))
    events = [
        rendered("a", "markdown", {"content": "x"}), rendered("z"),
        (Kind.COMPONENT_UPDATED, {"component_id": "b", "operation": "append",
                                  "data": {"rows": [{"n": 9}]}}),
        (Kind.COMPONENT_REMOVED, {"component_id": "a"}),
        opened("r3"), (Kind.REQUEST_CLOSED, {"request_id": "r1", "status": "answered"}),
        batch([{"version": V, "updateDataModel": {"surfaceId": "s1", "path": "/name",
                                                  "value": "Bo"}},
               {"version": V, "deleteSurface": {"surfaceId": "s1"}}]),
    ]
    for event in events:
        assert S.apply(base, *event) is not base
        assert S.snapshot(base) == before


def test_snapshot_has_the_service_shape(base):
    snap = S.snapshot(base)
    assert [c["component_id"] for c in snap["components"]] == ["a", "b"]
    assert set(snap["components"][0]) == {"component_id", "component_type", "data", "metadata",
                                          "expires_at"}
    assert snap["requests"][0] == {"kind": "input", "params": {"request_id": "r1",
                                                                 "prompt": "?"}}
    assert snap["surfaces"][0]["surfaceId"] == "s1" and "graph" in snap["surfaces"][0]


def test_comparable_ignores_time_and_undefined_order_only(base):
    snap = S.snapshot(base)
    timed = copy.deepcopy(snap)
    timed["components"][0]["expires_at"] = "2030-01-01T00:00:00Z"
    timed["requests"][0]["params"]["timeout_seconds"] = 7
    timed["requests"].reverse()
    assert S.comparable(timed) == S.comparable(snap)
    moved = copy.deepcopy(snap)
    moved["components"].reverse()  # render order is part of the state
    assert S.comparable(moved) != S.comparable(snap)


# The invariant --------------------------------------------------------------------------------

EXAMPLES = {
    Kind.COMPONENT_RENDERED: [rendered("a", "markdown", {"content": "y"}), rendered("new")],
    Kind.COMPONENT_UPDATED: [(Kind.COMPONENT_UPDATED, {"component_id": "b", "operation": "append",
                                                       "data": {"rows": [{"n": 5}]}})],
    Kind.COMPONENT_REMOVED: [(Kind.COMPONENT_REMOVED, {"component_id": "a"})],
    Kind.REQUEST_OPENED: [opened("r9", "confirm")],
    Kind.REQUEST_CLOSED: [(Kind.REQUEST_CLOSED, {"request_id": "r2", "status": "timed_out"})],
    Kind.PROGRESS: [(Kind.PROGRESS, {"task_id": "t", "progress_type": "indeterminate"})],
    Kind.NAVIGATE: [(Kind.NAVIGATE, {"url": "https://example.com/", "new_tab": True})],
    Kind.NOTIFY: [(Kind.NOTIFY, {"level": "info", "title": "Hi"})],
    Kind.RUN_ENDED: [(Kind.RUN_ENDED, {"run_id": "r", "status": "finished", "result": [1]})],
    Kind.CONSENT_REQUIRED: [(Kind.CONSENT_REQUIRED, {"consent_types": [
        {"type": "data_collection", "description": "May we?"}]})],
    Kind.SURFACE_BATCH: [batch([{"version": V, "updateDataModel": {
        "surfaceId": "s1", "path": "/name", "value": "Cy"}}]),
        batch([{"version": V, "deleteSurface": {"surfaceId": "s1"}}]), batch(surface_create("s7", 7))],
    **ACTIVITY_EXAMPLES,
}


def resumed(state, events):
    """From a snapshot of ``state`` (as stored JSON), plus ``events``."""
    return S.fold(S.from_snapshot(S.comparable(S.snapshot(state))), events)


def test_every_kind_has_an_example():
    assert set(EXAMPLES) == set(Kind) and STATEFUL | TRANSIENT == set(Kind)


@pytest.mark.parametrize("kind", list(Kind))
def test_snapshot_plus_one_event_is_the_state_after_it(base, kind):
    for event in EXAMPLES[kind]:
        expected = S.comparable(S.snapshot(S.apply(base, *event)))
        assert S.comparable(S.snapshot(resumed(base, [event]))) == expected


@pytest.mark.parametrize("seed", range(60))
def test_snapshot_at_any_point_plus_the_events_after_it(seed):
    events = all_events(Ops(seed).many(40))
    full = S.fold(S.SessionState(), events)
    expected = S.comparable(S.snapshot(full))
    cut = random.Random(seed).randrange(len(events) + 1)
    before = S.fold(S.SessionState(), events[:cut])
    assert S.comparable(S.snapshot(resumed(before, events[cut:]))) == expected


@pytest.mark.parametrize("seed", range(20))
def test_the_invariant_notices_a_lost_event(seed):
    """Dropping the last event that changed anything changes the result (the check can fail)."""
    events = all_events(Ops(1000 + seed).many(30))
    full = S.comparable(S.snapshot(S.fold(S.SessionState(), events)))
    states = [S.comparable(S.snapshot(S.fold(S.SessionState(), events[:i])))
              for i in range(len(events) + 1)]
    lost = max(i for i in range(len(events)) if states[i + 1] != states[i])  # the last change
    kept = events[:lost] + events[lost + 1:]
    assert S.comparable(S.snapshot(S.fold(S.SessionState(), kept))) != full
