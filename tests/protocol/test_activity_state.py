"""The activity reducer (a2ui.core.activity, through a2ui.core.state), pure: each kind, the
limits, purity, and the snapshot invariant for the activity kinds and random sequences."""

import copy
import random

import pytest

from a2ui.core import activity as A
from a2ui.core import state as S
from a2ui.core.events import Kind
from tests.activityops import ACTIVITY_EXAMPLES, TREE, ActivityOps

LIMITS = A.Limits(transcript=3, tool_calls=2, plans=2)


def fold(events, limits=LIMITS):
    return S.fold(S.SessionState(limits=limits), events)


def msg(mid, content="x", role="agent"):
    return (Kind.MESSAGE, {"message_id": mid, "role": role, "sender": "s", "content": content})


def test_the_transcript_keeps_the_newest_messages_and_replaces_a_known_id_in_place():
    state = fold([msg("m1"), msg("m2"), msg("m3"), msg("m2", "edited")])
    assert [m["message_id"] for m in state.activity.transcript.values()] == ["m1", "m2", "m3"]
    assert state.activity.transcript["m2"]["content"] == "edited"
    assert state.activity.transcript["m1"]["metadata"] == {}
    state = S.apply(state, *msg("m4"))
    assert list(state.activity.transcript) == ["m2", "m3", "m4"]


def test_a_tool_call_merges_its_phases_and_a_new_request_starts_over():
    state = fold(ACTIVITY_EXAMPLES[Kind.TOOL_CALL])
    assert state.activity.tool_calls["tc1"] == {
        "call_id": "tc1", "tool_name": "grep", "parameters": {"pattern": "error"},
        "status": "COMPLETED", "progress": 50, "message": "half", "result": {"matches": 2}}
    state = S.apply(state, Kind.TOOL_CALL, {"call_id": "tc1", "phase": "requested",
                                             "tool_name": "ls", "parameters": {},
                                             "status": "PENDING"})
    assert state.activity.tool_calls["tc1"] == {"call_id": "tc1", "tool_name": "ls",
                                                "parameters": {}, "status": "PENDING"}
    for cid in ("tc2", "tc3"):
        state = S.apply(state, Kind.TOOL_CALL, {"call_id": cid, "phase": "status",
                                                 "status": "RUNNING"})
    assert list(state.activity.tool_calls) == ["tc2", "tc3"]  # the oldest went


def test_a_state_delta_sets_creates_and_removes_along_the_dot_path():
    state = fold([(Kind.STATE_DELTA, {"path": "user.prefs.theme", "new_value": "dark",
                                      "removed": False}),
                  (Kind.STATE_DELTA, {"path": "user.name", "new_value": None, "removed": False})])
    assert state.activity.state == {"user": {"prefs": {"theme": "dark"}, "name": None}}
    state = S.apply(state, Kind.STATE_DELTA, {"path": "user.prefs", "removed": True})
    assert state.activity.state == {"user": {"name": None}}


def test_path_problems_and_lookups():
    doc = {"a": {"b": 1}, "n": None}
    assert A.get_path(doc, "a.b") == 1 and A.get_path(doc, "a.x") is A.ABSENT
    assert A.get_path(doc, "a.b.c") is A.ABSENT
    assert A.path_problem(doc, "a.b.c", False) == "a.b is not an object"
    assert A.path_problem(doc, "n.x", False) == "n is not an object"
    assert A.path_problem(doc, "z.y", False) is None
    assert A.path_problem(doc, "z.y", True) == "there is no value to remove"
    assert A.path_problem(doc, "a.q", True) == "there is no value to remove"
    assert A.path_problem(doc, "a.b", True) is None


def test_json_equal_tells_booleans_from_numbers():
    assert A.json_equal(1, 1.0) and A.json_equal({"a": [1, {"b": None}]}, {"a": [1.0, {"b": None}]})
    assert not A.json_equal(True, 1) and not A.json_equal(0, False) and not A.json_equal(None, 0)
    assert not A.json_equal([1], [1, 2]) and not A.json_equal({"a": 1}, {"b": 1})
    assert not A.json_equal("1", 1)


def test_plans_keep_their_place_and_a_new_one_pushes_out_the_oldest_finished():
    def plan(pid, status="ACTIVE"):
        return (Kind.PLAN, {"plan_id": pid, "title": pid, "content": "c", "status": status})

    state = fold([plan("p1", "COMPLETED"), plan("p2"), plan("p1", "COMPLETED"), plan("p3")])
    assert list(state.activity.plans) == ["p2", "p3"]
    state = S.apply(state, *plan("p2", "FAILED"))
    assert list(state.activity.plans) == ["p2", "p3"]


def test_tree_and_roster_are_replaced():
    state = fold([(Kind.RESOURCES, {"root": TREE}), *ACTIVITY_EXAMPLES[Kind.ROSTER],
                  (Kind.ROSTER, {"agents": []})])
    assert state.activity.resources == TREE and state.activity.roster == []


def test_artifact_updates_by_change_type():
    opened = ACTIVITY_EXAMPLES[Kind.ARTIFACT][0]
    state = fold([opened])
    art = state.activity.artifacts["art1"]
    assert art["content"] == "fn main() {}\n" and art["language"] == "rust"

    def update(change, content, **extra):
        return (Kind.ARTIFACT, {"artifact_id": "art1", "phase": "updated",
                                "change_type": change, "content": content, **extra})

    assert S.apply(state, *update("partial", "x")).activity.artifacts["art1"]["content"] == \
        "fn main() {}\nx"
    replaced = S.apply(state, *update("full_replace", "new", title="lib.rs"))
    assert replaced.activity.artifacts["art1"]["content"] == "new"
    assert replaced.activity.artifacts["art1"]["title"] == "lib.rs"
    diff = "--- a/main.rs\n+++ b/main.rs\n@@ -1 +1 @@\n-fn main() {}\n+fn main() { run() }\n"
    assert S.apply(state, *update("diff", diff)).activity.artifacts["art1"]["content"] == \
        "fn main() { run() }\n"
    assert S.apply(state, *update("diff", diff, full_content="given")).activity.artifacts[
        "art1"]["content"] == "given"
    unknown = (Kind.ARTIFACT, {"artifact_id": "nope", "phase": "updated",
                               "change_type": "partial", "content": "x"})
    assert S.apply(state, *unknown) is state


@pytest.mark.parametrize("diff", [
    "not a diff", "",
    "--- a\n+++ b\n@@ -1 +1 @@\n-something else\n+x\n",
    "--- a\n+++ b\n@@ -1 +1 @@\n-a\n+b\n--- c\n+++ d\n@@ -1 +1 @@\n-a\n+b\n",
])
def test_a_diff_that_does_not_apply_is_a_diff_error(diff):
    with pytest.raises(A.DiffError):
        A.apply_unified_diff("a\n", diff)


def test_apply_never_changes_the_activity_it_is_given():
    state = fold([ev for evs in ACTIVITY_EXAMPLES.values() for ev in evs[:1]])
    before = copy.deepcopy(S.snapshot(state))
    for events in ACTIVITY_EXAMPLES.values():
        for event in events:
            assert S.apply(state, *event) is not state
            assert S.snapshot(state) == before


def resumed(state, events):
    snap = S.comparable(S.snapshot(state))
    return S.fold(S.from_snapshot(snap, limits=state.limits), events)


@pytest.mark.parametrize("kind", sorted(A.KINDS))
def test_snapshot_plus_the_events_of_each_kind_is_the_state_after_them(kind):
    base = fold([ev for evs in ACTIVITY_EXAMPLES.values() for ev in evs[:1]])
    events = ACTIVITY_EXAMPLES[kind]
    assert S.comparable(S.snapshot(resumed(base, events))) == \
        S.comparable(S.snapshot(S.fold(base, events)))


@pytest.mark.parametrize("seed", range(60))
def test_snapshot_at_any_point_plus_the_activity_after_it(seed):
    ops = ActivityOps(seed, LIMITS)
    events = ops.many(50)
    full = S.comparable(S.snapshot(fold(events)))
    cut = random.Random(seed).randrange(len(events) + 1)
    assert S.comparable(S.snapshot(resumed(fold(events[:cut]), events[cut:]))) == full


@pytest.mark.parametrize("seed", range(20))
def test_the_invariant_notices_a_lost_activity_event(seed):
    events = ActivityOps(500 + seed, LIMITS).many(30)
    states = [S.comparable(S.snapshot(fold(events[:i]))) for i in range(len(events) + 1)]
    lost = max(i for i in range(len(events)) if states[i + 1] != states[i])
    kept = events[:lost] + events[lost + 1:]
    assert S.comparable(S.snapshot(fold(kept))) != states[-1]
