"""Sans-I/O: the core's session events as AG-UI 1.0 events (a2ui.agui1.translate), the
RunAgentInput body (a2ui.agui1.inputs) and interrupts (a2ui.agui1.interrupts). Every event is
also checked by the official models' round trip and by ag-ui-validate's stream validator."""

import itertools
import json

import jsonpatch
import pytest
from ag_ui.core import ResumeEntry
from ag_ui.encoder import EventEncoder
from ag_ui_validate.pytest_plugin import validate_agui

from a2ui.agui1 import inputs, interrupts
from a2ui.agui1.translate import Run
from a2ui.core import activity as A
from a2ui.core.errors import DomainError

ENCODER = EventEncoder()


def wire(events):
    return [json.loads(ENCODER.encode(e)[len("data: "):]) for e in events]


def new_run(**kw):
    counter = itertools.count(1)
    return Run("t", "r", make_id=lambda: f"id{next(counter)}", **kw)


def valid(events):
    """The stream as a client gets it passes ag-ui-validate with no error or warning."""
    report = validate_agui(wire(events), features=["shared-state", "agentic-chat"])
    bad = [(d.rule, d.message) for d in report.diagnostics if d.severity in ("error", "warning")]
    assert not bad, bad


def test_notify_and_every_message_heard_live_are_text_messages():
    run = new_run()
    out = wire(run.translate("notify", {"level": "info", "title": "Hi", "message": "there"}))
    assert out == [
        {"type": "TEXT_MESSAGE_START", "messageId": "id1", "role": "assistant"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "id1", "delta": "Hi\n\nthere"},
        {"type": "TEXT_MESSAGE_END", "messageId": "id1"}]
    out = wire(run.translate("message", {"message_id": "m", "role": "agent", "sender": "bot",
                                         "content": ""}))
    assert [e["type"] for e in out] == ["TEXT_MESSAGE_START", "TEXT_MESSAGE_END"]  # no empty delta
    # A person's message heard live comes from another client of the session (issue 24: a
    # run's own are recorded before its stream joins): shown with role user.
    user = wire(run.translate("message", {"message_id": "u", "role": "user", "sender": "me",
                                          "content": "x"}))
    assert user[0] == {"type": "TEXT_MESSAGE_START", "messageId": "u", "role": "user"}
    system = wire(run.translate("message", {"message_id": "s", "role": "system",
                                                  "sender": "sys", "content": "y"}))
    assert system[0]["role"] == "system"


def test_progress_is_a_step_closed_when_done_or_at_the_end():
    run = new_run()
    started = wire(run.translate("progress", {"task_id": "a", "value": 1, "total": 4,
                                              "progress_type": "determinate"}))
    assert started[0] == {"type": "STEP_STARTED", "stepName": "a"}
    assert started[1]["activityType"] == "a2ui-progress"
    again = wire(run.translate("progress", {"task_id": "a", "value": 4, "total": 4}))
    assert [e["type"] for e in again] == ["ACTIVITY_SNAPSHOT", "STEP_FINISHED"]
    run.translate("progress", {"task_id": "b", "progress_type": "indeterminate"})
    end = wire(run.finish())
    assert end == [{"type": "STEP_FINISHED", "stepName": "b"},
                   {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}]


def test_tool_calls_start_args_end_result_and_status():
    run = new_run()
    out = wire(run.translate("tool_call", {"call_id": "c", "phase": "requested",
                                           "tool_name": "search", "parameters": {"q": "x"},
                                           "status": "PENDING"}))
    assert out == [{"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "search"},
                   {"type": "TOOL_CALL_ARGS", "toolCallId": "c", "delta": '{"q":"x"}'},
                   {"type": "TOOL_CALL_END", "toolCallId": "c"}]
    status = wire(run.translate("tool_call", {"call_id": "c", "phase": "status",
                                              "status": "RUNNING", "progress": 50}))
    assert status[0]["activityType"] == "a2ui-tool-status" and status[0]["content"] == {
        "call_id": "c", "status": "RUNNING", "progress": 50}
    result = wire(run.translate("tool_call", {"call_id": "c", "phase": "result",
                                              "status": "COMPLETED", "result": [1, 2]}))
    assert result == [{"type": "TOOL_CALL_RESULT", "messageId": "id1", "toolCallId": "c",
                       "content": "[1,2]", "role": "tool"}]
    # A result for a call this run never saw: started and ended first, so the order holds.
    other = wire(run.translate("tool_call", {"call_id": "d", "phase": "result",
                                             "error": "boom", "tool_name": "x"}))
    assert [e["type"] for e in other] == ["TOOL_CALL_START", "TOOL_CALL_END",
                                         "TOOL_CALL_RESULT"]
    assert other[-1]["content"] == '{"error":"boom"}'


def test_state_delta_is_a_json_patch_from_the_snapshot_and_applies():
    start = A.Activity(state={"a": {"b": 1}, "keep": True})
    run = new_run(activity=start)
    events = run.start()
    snapshot = wire(events)[1]["snapshot"]
    assert snapshot == {"a": {"b": 1}, "keep": True}
    doc = snapshot
    for delta in ({"path": "a.b", "old_value": 1, "new_value": 2},
                  {"path": "x.y.z", "new_value": [1]},
                  {"path": "a", "removed": True}):
        (event,) = wire(run.translate("state.delta", delta))
        doc = jsonpatch.apply_patch(doc, event["delta"])
    assert doc == {"keep": True, "x": {"y": {"z": [1]}}} == run.activity.state
    assert run.translate("state.delta", {"path": "keep", "new_value": True}) == []  # no change


def test_surfaces_are_a2ui_activities_snapshot_then_delta():
    before = [{"version": "v0.9", "createSurface": {"surfaceId": "old", "catalogId": "c"}}]
    run = new_run(surfaces={"old": before})
    create = {"version": "v0.9", "createSurface": {"surfaceId": "s", "catalogId": "c"}}
    update = {"version": "v0.9", "updateComponents": {"surfaceId": "s", "components": []}}
    (snap,) = wire(run.translate("surface.batch", {"first_seq": 1, "messages": [create]}))
    assert snap == {"type": "ACTIVITY_SNAPSHOT", "messageId": "a2ui-surface-s",
                    "activityType": "a2ui-surface", "content": {"a2ui_operations": [create]}}
    (delta,) = wire(run.translate("surface.batch", {"first_seq": 2, "messages": [update]}))
    assert delta["type"] == "ACTIVITY_DELTA" and delta["patch"] == [
        {"op": "add", "path": "/a2ui_operations/-", "value": update}]
    assert jsonpatch.apply_patch(snap["content"], delta["patch"]) == {
        "a2ui_operations": [create, update]}
    # A surface made before the run: shown whole the first time the run touches it.
    touch = {"version": "v0.9", "updateDataModel": {"surfaceId": "old", "value": {}}}
    (old,) = wire(run.translate("surface.batch", {"first_seq": 3, "messages": [touch]}))
    assert old["content"] == {"a2ui_operations": [*before, touch]}


def test_components_are_activities_updates_are_patches():
    run = new_run(components=[{"component_id": "k", "component_type": "card",
                               "data": {"title": "a"}, "metadata": {}}])
    (first,) = wire(run.translate("component.updated", {"component_id": "k",
                                                        "operation": "merge",
                                                        "data": {"description": "d"}}))
    assert first["type"] == "ACTIVITY_SNAPSHOT" and first["content"] == {
        "componentType": "card", "data": {"title": "a", "description": "d"}}
    (second,) = wire(run.translate("component.updated", {"component_id": "k",
                                                         "operation": "replace",
                                                         "data": {"title": "b"}}))
    assert second["type"] == "ACTIVITY_DELTA"
    assert jsonpatch.apply_patch(first["content"], second["patch"]) == {
        "componentType": "card", "data": {"title": "b"}}
    (gone,) = wire(run.translate("component.removed", {"component_id": "k"}))
    assert gone["content"] == {"componentType": "card", "removed": True}
    assert run.translate("component.updated", {"component_id": "zz", "operation": "merge",
                                               "data": {}}) == []


def test_plan_roster_resources_artifact_are_activities_of_the_reduced_record():
    run = new_run()
    (plan,) = wire(run.translate("plan", {"plan_id": "p", "title": "T", "content": "# x",
                                          "status": "ACTIVE"}))
    assert plan["messageId"] == "a2ui-plan-p" and plan["content"]["status"] == "ACTIVE"
    (roster,) = wire(run.translate("roster", {"agents": [{"id": "a", "name": "A",
                                                          "status": "ONLINE"}]}))
    assert roster["activityType"] == "a2ui-roster" and roster["content"]["agents"][0]["id"] == "a"
    run.translate("artifact", {"artifact_id": "f", "phase": "opened", "title": "f.py",
                               "content": "a", "content_type": "code"})
    (art,) = wire(run.translate("artifact", {"artifact_id": "f", "phase": "updated",
                                             "change_type": "partial", "content": "b"}))
    assert art["activityType"] == "a2ui-artifact" and art["content"]["content"] == "ab"


def test_a_request_ends_the_run_with_an_interrupt():
    run = new_run()
    run.translate("tool_call", {"call_id": "c", "phase": "requested", "tool_name": "t",
                                "parameters": {}})
    assert run.translate("request.opened", {"kind": "confirm", "params": {
        "request_id": "q", "title": "Delete?", "description": "3 files"}}) == []
    assert [i.id for i in run.pending] == ["q"]
    (final,) = wire(run.interrupt())
    assert final["outcome"]["type"] == "interrupt"
    (interrupt,) = final["outcome"]["interrupts"]
    assert interrupt["reason"] == "confirmation_required"
    assert interrupt["message"] == "Delete?\n\n3 files"
    assert interrupt["responseSchema"]["required"] == ["approved"]
    assert run.translate("notify", {"title": "late"}) == []  # nothing after the end


def test_a_question_read_at_the_start_and_heard_again_is_one_interrupt():
    """A run reads the session's open questions when it starts and may also hear one of them
    as its event (asked while the run joined): one interrupt each, in the order asked."""
    run = new_run()
    for request_id in ("a", "b", "a"):
        run.translate("request.opened", {"kind": "input", "params": {
            "request_id": request_id, "input_type": "text", "prompt": request_id}})
    assert [i.id for i in run.pending] == ["a", "b"]
    (final,) = wire(run.interrupt())
    assert [i["id"] for i in final["outcome"]["interrupts"]] == ["a", "b"]


def test_events_of_another_run_are_not_this_runs():
    run = new_run()
    assert run.translate("notify", {"title": "x", "run_id": "other"}) == []
    assert run.translate("notify", {"title": "x", "run_id": "r"})


def test_a_whole_run_passes_ag_ui_validate_and_has_no_nulls():
    run = new_run(activity=A.Activity(state={"n": 0}))
    events = run.start()
    events += run.translate("notify", {"title": "Hi"})
    events += run.translate("progress", {"task_id": "w", "value": 1, "total": 3})
    events += run.translate("tool_call", {"call_id": "c", "phase": "requested",
                                          "tool_name": "t", "parameters": {"a": 1}})
    events += run.translate("state.delta", {"path": "n", "new_value": 1})
    events += run.translate("surface.batch", {"first_seq": 1, "messages": [
        {"version": "v0.9", "createSurface": {"surfaceId": "s", "catalogId": "c"}}]})
    events += run.translate("navigate", {"url": "https://example.com", "new_tab": False})
    events += run.finish({"ok": True})
    valid(events)
    text = "".join(ENCODER.encode(e) for e in events)
    assert "null" not in text


@pytest.mark.parametrize("interrupt_kind,entry,expected", [
    ("input", {"status": "resolved", "payload": "Ada"}, ("answer", "Ada")),
    ("input", {"status": "resolved", "payload": {"value": 3}}, ("answer", 3)),
    ("input", {"status": "cancelled"}, ("cancel",)),
    ("confirm", {"status": "resolved", "payload": True}, ("answer", {"approved": True,
                                                                      "reason": ""})),
    ("confirm", {"status": "resolved", "payload": {"approved": False, "reason": "no"}},
     ("answer", {"approved": False, "reason": "no"})),
    ("confirm", {"status": "cancelled"}, ("answer", {"approved": False,
                                                     "reason": "cancelled"})),
])
def test_resume_entries_as_answers(interrupt_kind, entry, expected):
    resume = ResumeEntry.model_validate({"interruptId": "q", **entry})
    assert interrupts.answer(interrupt_kind, 0, resume) == expected


@pytest.mark.parametrize("interrupt_kind,payload", [
    ("input", None), ("confirm", "yes"), ("confirm", {"approved": "yes"}),
    ("confirm", {"approved": True, "reason": 3})])
def test_bad_resume_payloads_name_the_field(interrupt_kind, payload):
    resume = ResumeEntry.model_validate({"interruptId": "q", "status": "resolved",
                                         "payload": payload})
    with pytest.raises(DomainError) as info:
        interrupts.answer(interrupt_kind, 2, resume)
    assert info.value.data["path"].startswith("resume.2.payload")


def test_input_interrupt_schemas():
    select = interrupts.of_request("input", {"request_id": "a", "input_type": "select",
                                             "prompt": "Pick", "options": ["x", "y"]})
    assert select.response_schema == {"type": "string", "enum": ["x", "y"]}
    number = interrupts.of_request("input", {"request_id": "b", "input_type": "number",
                                             "prompt": "N", "validation": {"min": 1}})
    assert number.response_schema == {"type": "number", "minimum": 1}


def body(**extra):
    base = {"threadId": "t", "runId": "r", "messages": [
        {"id": "1", "role": "user", "content": "old"},
        {"id": "2", "role": "assistant", "content": "reply"},
        {"id": "3", "role": "user", "content": "new"},
        {"id": "4", "role": "tool", "toolCallId": "c", "content": "42"}]}
    base.update(extra)
    return json.dumps(base).encode()


def test_input_new_messages_and_notice_without_nulls():
    parsed = inputs.parse(body(state={"a": 1}, forwardedProps={"x": 1}), 10**6)
    assert [m.id for m in parsed.new_messages] == ["3", "4"]
    notice = parsed.notice()
    assert notice["messages"][0] == {"id": "3", "role": "user", "content": "new"}
    assert notice["state"] == {"a": 1} and notice["forwarded_props"] == {"x": 1}
    assert "resume" not in notice and "null" not in json.dumps(notice)


@pytest.mark.parametrize("raw,status,field", [
    (b"\xff", 400, None), (b"{", 400, None), (b"1", 400, None),
    (b'{"threadId": "t", "runId": "r", "messages": [], "state": {"n": 99999999999999999999}}',
     400, "state.n"),
    (b'{"threadId": "t", "runId": "r", "messages": [], "state": {"a\\u0000": 1}}', 400, None),
    (b'{"threadId": "t", "runId": "r", "messages": [{"id": "m", "role": "user", '
     b'"content": "\\udc00"}]}', 400, "messages[0].content"),
    (b'{"threadId": "", "runId": "r", "messages": []}', 400, "threadId"),
    # NUL in any text of the run's notice (stored as jsonb, which refuses it): the fuzz tier.
    (b'{"threadId": "t", "runId": "r", "messages": [], "state": {"a": ["x", "a\\u0000"]}}',
     400, "state.a[1]"),
    (b'{"threadId": "t", "runId": "r", "messages": [{"id": "m", "role": "user", '
     b'"content": "hi"}], "tools": [{"name": "t", "description": "\\u0000", '
     b'"parameters": {}}]}', 400, "tools[0].description"),
    (b'{"threadId": "t", "runId": "r", "messages": [], "forwardedProps": {"x": "\\u0000"}}',
     400, "forwardedProps.x"),
    (b'{"threadId": "t", "runId": "r", "messages": [], "state": [1]}', 400, "state"),
    (b'{"threadId": "t", "runId": "r"}', 400, "messages"),
    (b'{"threadId": "t", "runId": "r", "messages": [], "resume": [{"status": "resolved"}]}',
     400, "resume.0.interruptId"),
])
def test_bad_bodies_are_400_with_the_field(raw, status, field):
    with pytest.raises(inputs.InputError) as info:
        inputs.parse(raw, 10**6)
    assert info.value.status == status
    body = info.value.body()
    json.dumps(body, ensure_ascii=False).encode()  # encodable
    if field:
        assert body["error"]["field"] == field


def test_a_body_over_the_limit_is_413():
    with pytest.raises(inputs.InputError) as info:
        inputs.parse(b"x" * 11, 10)
    assert info.value.status == 413


def test_resync_after_a_lost_event_sends_the_state_and_what_the_run_showed_whole():
    """A run that lost events (a gap, or a counter Redis lost) is sent the state document and a
    fresh snapshot of every activity it has shown that changed meanwhile; nothing else."""
    comps = [{"component_id": "c1", "component_type": "card", "data": {"title": "A"}}]
    surfaces = {"s1": [{"version": "v0.9", "createSurface": {"surfaceId": "s1",
                                                              "catalogId": "c"}}]}
    run = new_run(activity=A.Activity(state={"n": 1}), components=comps, surfaces=surfaces)
    stream = run.start()
    stream += run.translate("component.updated", {"component_id": "c1", "operation": "merge",
                                        "data": {"title": "B"}})
    stream += run.translate("surface.batch", {"messages": [
        {"version": "v0.9", "updateDataModel": {"surfaceId": "s1", "path": "/", "value": 1}}]})
    stream += run.translate("plan", {"plan_id": "p", "title": "Plan", "content": "1", "status": "ACTIVE"})
    stream += run.translate("progress", {"task_id": "t", "value": 1, "total": 3})
    # Lost meanwhile: the state changed, c1 was removed, s1 deleted, the plan completed.
    fresh = A.apply(A.Activity(state={"n": 2}), "plan", {
        "plan_id": "p", "title": "Plan", "content": "done", "status": "COMPLETED"})
    resynced = run.resync(activity=fresh, components=[], surfaces={})
    stream += resynced
    out = wire(resynced)
    assert out[0] == {"type": "STATE_SNAPSHOT", "snapshot": {"n": 2}}
    by_id = {e["messageId"]: e for e in out[1:]}
    assert set(by_id) == {"a2ui-component-c1", "a2ui-surface-s1", "a2ui-plan-p"}
    assert by_id["a2ui-component-c1"]["content"] == {"componentType": "card", "removed": True}
    assert by_id["a2ui-surface-s1"]["content"] == {"a2ui_operations": [
        {"version": "v0.9", "deleteSurface": {"surfaceId": "s1"}}]}
    assert by_id["a2ui-plan-p"]["content"]["status"] == "COMPLETED"
    assert all(e["type"] == "ACTIVITY_SNAPSHOT" for e in out[1:])
    # Nothing lost since: a second resync sends only the state.
    assert [e["type"] for e in wire(run.resync(activity=fresh, components=[], surfaces={}))] \
        == ["STATE_SNAPSHOT"]
    # The run goes on patching from what the resync sent.
    patched = run.translate("state.delta", {"path": "n", "old_value": 2, "new_value": 3})
    (delta,) = wire(patched)
    assert jsonpatch.apply_patch({"n": 2}, delta["delta"]) == {"n": 3}
    valid([*stream, *patched, *run.finish()])
