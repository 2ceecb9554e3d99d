"""Sans-I/O: A2UI v0.9.1 surface ids (unique among active surfaces) in AG-UI 1.0 runs. A
surface deleted and created again keeps its activity message ``a2ui-surface-<surfaceId>``;
its operations start again at the new createSurface; a resuming client holding a surface
deleted while it was away is told so."""

import itertools
import json

from ag_ui.encoder import EventEncoder
from ag_ui_validate.pytest_plugin import validate_agui

from a2ui.agui1.translate import Run

ENCODER = EventEncoder()
V = "v0.9"


def wire(events):
    return [json.loads(ENCODER.encode(e)[len("data: "):]) for e in events]


def new_run(**kw):
    counter = itertools.count(1)
    return Run("t", "r", make_id=lambda: f"id{next(counter)}", **kw)


def create(sid="s"):
    return {"version": V, "createSurface": {"surfaceId": sid, "catalogId": "c"}}


def delete(sid="s"):
    return {"version": V, "deleteSurface": {"surfaceId": sid}}


def value(n, sid="s"):
    return {"version": V, "updateDataModel": {"surfaceId": sid, "path": "/", "value": n}}


def ops(events):
    return [e["content"]["a2ui_operations"] for e in wire(events)]


def test_created_again_in_one_batch_starts_its_operations_again():
    run = new_run(surfaces={"s": [create(), value(1)]})
    events = run.start() + run.screen({})
    assert ops(events[2:]) == [[create(), value(1)]]
    live = run.translate("surface.batch", {"messages": [value(2), delete(), create(), value(3)]})
    (delta,) = wire(live)
    # the client (which processes the operations in order) is sent the batch as it is
    assert delta["type"] == "ACTIVITY_DELTA" and [p["value"] for p in delta["patch"]] == [
        value(2), delete(), create(), value(3)]
    # the run keeps the new surface only: a resync shows it from its createSurface
    assert run.surfaces["s"] == [create(), value(3)]
    again = run.resync(activity=None, surfaces={"s": [create(), value(3)]})
    assert ops(again[1:]) == [[create(), value(3)]]
    events += live + again + run.finish()
    report = validate_agui(wire(events), features=["shared-state", "agentic-chat"])
    assert not [d for d in report.diagnostics if d.severity in ("error", "warning")]


def test_a_resuming_client_holding_a_deleted_surface_is_told():
    # the session has "new" and "back" (deleted, then created again) now
    surfaces = {"back": [create("back"), value(2, "back")], "new": [create("new")]}
    known = {
        "a2ui-surface-gone": {"a2ui_operations": [create("gone"), value(1, "gone")]},
        "a2ui-surface-seen": {"a2ui_operations": [create("seen"), delete("seen")]},
        "a2ui-surface-back": {"a2ui_operations": [create("back"), value(1, "back"),
                                                  delete("back")]},
        "a2ui-surface-new": {"a2ui_operations": [create("new")]},
        "m1": None,  # a text message
    }
    shown = wire(new_run(surfaces=surfaces).screen(known))
    by_id = {e["messageId"]: e["content"]["a2ui_operations"] for e in shown}
    assert by_id == {
        # created again: the new surface replaces the deleted one the client holds
        "a2ui-surface-back": [create("back"), value(2, "back")],
        # deleted while the client was away: the deletion
        "a2ui-surface-gone": [delete("gone")],
    }  # the deletion it saw, and the surface it has as it is, are not sent again
    assert all(e["type"] == "ACTIVITY_SNAPSHOT" and e["activityType"] == "a2ui-surface"
               for e in shown)
