"""The activity kinds in seed-003 words (a2ui.agui.mapping), sans-I/O: every example is a
valid server event, the agent's events come back as they were sent, and a resuming client's
state events rebuild the activity they show."""

import json

import pytest

from a2ui.agui import inbound, mapping
from a2ui.agui import protocol as p
from a2ui.core import activity as A
from a2ui.core.events import Kind
from tests.activityops import ACTIVITY_EXAMPLES, ActivityOps
from tests.agui.test_agui_agent_paths import EVENTS

TYPES = {Kind.MESSAGE: {"TEXT_MESSAGE"}, Kind.MESSAGE_BATCH: {"TEXT_MESSAGE"},
         Kind.TOOL_CALL: {"TOOL_CALL_REQUEST", "TOOL_CALL_STATUS", "TOOL_CALL_RESULT"},
         Kind.STATE_DELTA: {"STATE_DELTA"}, Kind.PLAN: {"PLAN_CARD"},
         Kind.RESOURCES: {"RESOURCE_TREE"}, Kind.ROSTER: {"AGENT_ROSTER"},
         Kind.ARTIFACT: {"ARTIFACT_OPEN", "ARTIFACT_UPDATE"}}


@pytest.mark.parametrize("kind", sorted(A.KINDS))
def test_each_kind_is_a_valid_seed_event(kind):
    seen = set()
    for k, data in ACTIVITY_EXAMPLES[kind]:
        events = mapping.translate(k, data)
        # One event each; a batch is one event per message it holds.
        assert len(events) == len(data.get("messages") or [None])
        for event in events:
            frame = json.loads(p.encode(event))  # validated as a server event, nulls left out
            assert "null" not in json.dumps(frame)
            seen.add(event["type"])
    assert seen == TYPES[kind]


def test_the_adapter_translates_every_activity_kind():
    from a2ui.agui.adapter import ADAPTER

    assert A.KINDS <= ADAPTER.kinds


@pytest.mark.parametrize("event", EVENTS, ids=[e["type"] for e in EVENTS])
def test_an_agents_event_comes_back_as_it_was_sent(event):
    kind, data = inbound.to_core(event)
    if kind is Kind.TOOL_CALL and data["phase"] == "requested":
        data.pop("status")
    (back,) = mapping.translate(kind, data)
    if back["type"] == "TEXT_MESSAGE":
        assert back["metadata"]["role"] == "agent"
        back.pop("metadata")
    assert back == event


def test_a_removal_and_a_failed_call():
    assert mapping.translate(Kind.STATE_DELTA, {"path": "a", "old_value": 1, "removed": True}) \
        == [{"type": "STATE_DELTA", "path": "a", "old_value": 1}]
    (result,) = mapping.translate(Kind.TOOL_CALL, {"call_id": "t", "phase": "result",
                                                   "status": "FAILED", "error": "boom"})
    assert result == {"type": "TOOL_CALL_RESULT", "id": "t", "error": "boom"}
    (opened,) = mapping.translate(Kind.ARTIFACT, {"artifact_id": "a", "phase": "opened",
                                                  "content": ""})
    assert opened["title"] == "a" and opened["content_type"] == "text"


def fold_agui(events):
    """What an AG-UI client that keeps the last of each thing shows."""
    shown = {"messages": [], "calls": {}, "state": {}, "plans": {}, "tree": None,
             "roster": None, "artifacts": {}}
    for e in events:
        t = e["type"]
        if t == "TEXT_MESSAGE":
            shown["messages"].append(e["content"])
        elif t.startswith("TOOL_CALL"):
            shown["calls"].setdefault(e["id"], {}).update(
                {k: v for k, v in e.items() if k not in ("type", "id")})
        elif t == "STATE_DELTA":
            if "new_value" in e:
                shown["state"] = A.set_path(shown["state"], e["path"], e["new_value"])
            else:
                shown["state"] = A.set_path(shown["state"], e["path"], None, removed=True)
        elif t == "PLAN_CARD":
            shown["plans"][e["id"]] = e["status"]
        elif t == "RESOURCE_TREE":
            shown["tree"] = e["root"]
        elif t == "AGENT_ROSTER":
            shown["roster"] = e["agents"]
        elif t == "ARTIFACT_OPEN":
            shown["artifacts"][e["id"]] = e["content"]
        elif t == "ARTIFACT_UPDATE":
            before = shown["artifacts"][e["id"]]
            shown["artifacts"][e["id"]] = A.artifact_content(before, e["change_type"],
                                                             e["content"])
    return shown


def calls(records):
    return {cid: {k: v for k, v in c.items() if k in ("status", "result", "error", "tool_name")}
            for cid, c in records.items()}


@pytest.mark.parametrize("seed", range(30))
def test_resume_state_shows_what_the_live_events_showed(seed):
    """A client that saw every event and one that resumed at the end show the same (up to
    the transcript and tool calls the server trimmed, which the live client still has)."""
    ops = ActivityOps(seed, A.Limits(transcript=1000, tool_calls=1000, plans=3, artifacts=3))
    events = [e for k, d in ops.many(40) for e in mapping.translate(k, d)]
    for e in events:
        p.encode(e)
    live = fold_agui(events)
    resumed = fold_agui(mapping.activity_state(A.to_dict(ops.activity)))
    # null values travel as removals (the seed has no null): compare without them
    live["state"], resumed["state"] = _drop_none(live["state"]), _drop_none(resumed["state"])
    for part in ("state", "tree", "roster", "artifacts"):
        assert resumed[part] == live[part], part
    assert calls(resumed["calls"]) == calls(ops.activity.tool_calls)
    assert set(resumed["plans"]).issubset(live["plans"])
    assert all(resumed["plans"][k] == live["plans"][k] for k in resumed["plans"])


def _drop_none(value):
    if isinstance(value, dict):
        return {k: _drop_none(v) for k, v in value.items() if v is not None}
    return value
