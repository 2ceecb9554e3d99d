"""Reading an AG-UI 1.0 agent (sans-I/O): the event stream (a2ui.remote.agui.sse), the events
as ops (a2ui.remote.agui.mapping) and the RunAgentInput out (a2ui.remote.agui.inputs); hostile
and malformed streams (fuzz: huge deltas, unknown types, invalid JSON, 10k events)."""

import json
import random

import pytest
from ag_ui.core import RunAgentInput

from a2ui.remote import ops
from a2ui.remote.agui import inputs, mapping, sse
from a2ui.remote.clients import AgentConfig, Capabilities, RunContext


def events(chunks, max_event=1000):
    decoder = sse.Decoder(max_event)
    out = []
    for chunk in chunks:
        out += decoder.feed(chunk)
    return out


def test_event_stream_lines_split_anywhere():
    body = b': keepalive\r\n\r\nevent: x\r\ndata: {"a":\r\ndata: 1}\r\nid: 7\r\n\r\ndata: two\n\n'
    whole = events([body])
    assert whole == [("x", '{"a":\n1}', "7"), ("message", "two", "7")]
    for cut in range(1, len(body)):
        assert events([body[:cut], body[cut:]]) == whole
    assert events([bytes([b]) for b in body]) == whole


def test_an_event_or_a_line_past_the_cap_is_refused():
    with pytest.raises(sse.TooLarge):
        events([b"data: " + b"x" * 600 + b"\ndata: " + b"y" * 600 + b"\n\n"])
    with pytest.raises(sse.TooLarge):
        events([b"data: " + b"x" * 2000])  # no line end yet: still refused


def read_all(raw_events, **kw):
    reader = mapping.Reader(**kw)
    out = []
    for raw in raw_events:
        out += reader.read(mapping.parse(json.dumps(raw)))
    return reader, out


def test_text_tools_state_surfaces_and_the_end():
    surface = [{"version": "v0.9", "createSurface": {"surfaceId": "s",
                                                     "catalogId": mapping.BASIC_CATALOG_ID}}]
    reader, out = read_all([
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
        {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "Hel"},
        {"type": "TEXT_MESSAGE_CHUNK", "delta": "lo"},
        {"type": "TEXT_MESSAGE_END", "messageId": "m"},
        {"type": "TEXT_MESSAGE_START", "messageId": "u", "role": "user"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "u", "delta": "not the agent's"},
        {"type": "REASONING_MESSAGE_START", "messageId": "th", "role": "reasoning"},
        {"type": "REASONING_MESSAGE_CONTENT", "messageId": "th", "delta": "hmm"},
        {"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "search"},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "c", "delta": '{"q":'},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "c", "delta": '"x"}'},
        {"type": "TOOL_CALL_END", "toolCallId": "c"},
        {"type": "TOOL_CALL_RESULT", "messageId": "x", "toolCallId": "c",
         "content": json.dumps({"a2ui_operations": surface})},
        {"type": "STATE_SNAPSHOT", "snapshot": {"a": 1}},
        {"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/b", "value": 2}]},
        {"type": "ACTIVITY_SNAPSHOT", "messageId": "a", "activityType": "a2ui-surface",
         "content": {"a2ui_operations": surface}},
        {"type": "ACTIVITY_DELTA", "messageId": "a", "activityType": "a2ui-surface",
         "patch": [{"op": "add", "path": "/a2ui_operations/-",
                    "value": {"version": "v0.9", "deleteSurface": {"surfaceId": "s"}}}]},
        {"type": "SOMETHING_NEWER", "x": 1},
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r", "result": {"ok": True}},
    ])
    assert out == [
        ops.TextDelta("m", "Hel"), ops.TextDelta("m", "lo"), ops.TextEnd("m"),
        ops.Reasoning("th", "hmm"),
        ops.Tool("c", "requested", "search", {"q": "x"}),
        ops.Tool("c", "result", result=json.dumps({"a2ui_operations": surface})),
        ops.Surface(tuple(surface)),
        ops.State({"a": 1}), ops.StatePatch(({"op": "add", "path": "/b", "value": 2},)),
        ops.Surface(tuple(surface)),
        ops.Surface(({"version": "v0.9", "deleteSurface": {"surfaceId": "s"}},)),
        ops.Finished({"ok": True}),
    ]
    assert reader.unknown == 1 and reader.finished


def test_questions_and_interrupts_are_asks():
    _, out = read_all([
        {"type": "TOOL_CALL_START", "toolCallId": "q", "toolCallName": "a2ui_confirm",
         "parentMessageId": "p"},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "q", "delta": '{"title": "Pay 3 EUR?"}'},
        {"type": "TOOL_CALL_END", "toolCallId": "q"},
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r", "outcome": {
            "type": "interrupt", "interrupts": [
                {"id": "i1", "reason": "input_required", "message": "Which size?",
                 "responseSchema": {"type": "string", "enum": ["S", "M"]}}]}},
    ])
    confirm, choose = out
    assert (confirm.kind, confirm.params) == ("confirm", {"title": "Pay 3 EUR?"})
    assert confirm.resume["tool_call"]["id"] == "q" and confirm.resume["parent_message_id"] == "p"
    assert (choose.kind, choose.params, choose.resume) == (
        "input", {"input_type": "select", "prompt": "Which size?", "options": ["S", "M"]},
        {"interrupt_id": "i1"})


@pytest.mark.parametrize("raw, why", [
    ("not json", "not JSON"),
    ("[1, 2]", "not a JSON object"),
    (json.dumps({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m"}), "does not validate"),
    (json.dumps({"type": "RUN_ERROR"}), "does not validate"),
    ("[" * 100000, "not JSON"),
])
def test_malformed_events_are_refused(raw, why):
    with pytest.raises(mapping.Malformed, match=why):
        mapping.parse(raw)


def test_hostile_tool_calls_are_refused():
    reader = mapping.Reader()
    with pytest.raises(mapping.Malformed, match="not started"):
        reader.read(mapping.parse(json.dumps(
            {"type": "TOOL_CALL_ARGS", "toolCallId": "nope", "delta": "x"})))
    reader.read(mapping.parse(json.dumps(
        {"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "t"})))
    with pytest.raises(mapping.Malformed, match="more than"):
        for _ in range(300):
            reader.read(mapping.parse(json.dumps(
                {"type": "TOOL_CALL_ARGS", "toolCallId": "c", "delta": "x" * 1000})))


def test_fuzz_random_streams_never_escape_as_anything_but_malformed():
    rng = random.Random(38)
    types = ["TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END",
             "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_RESULT",
             "STATE_SNAPSHOT", "STATE_DELTA", "ACTIVITY_SNAPSHOT", "ACTIVITY_DELTA",
             "RUN_FINISHED", "RUN_ERROR", "CUSTOM", "RAW", "UNKNOWN_TYPE", None, 7]
    values = ["m", "", "x" * 5000, "<script>alert(1)</script>", "\ud800", 10 ** 30, None,
              [], {}, {"a2ui_operations": [{"createSurface": 1}]}, [{"op": "bad"}]]
    for _ in range(2000):
        reader = mapping.Reader()
        for _ in range(rng.randrange(1, 12)):
            raw = {"type": rng.choice(types)}
            for key in ("messageId", "delta", "toolCallId", "toolCallName", "content",
                        "snapshot", "patch", "activityType", "message", "threadId", "runId"):
                if rng.random() < 0.5:
                    raw[key] = rng.choice(values)
            try:
                text = json.dumps(raw)
            except (TypeError, ValueError):
                continue
            try:
                found = reader.read(mapping.parse(text))
            except mapping.Malformed:
                break
            assert all(isinstance(op, ops.OPS) for op in found)


def test_ten_thousand_events_read_in_order():
    raws = [{"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": f"{i} "}
            for i in range(10_000)]
    _, out = read_all(raws)
    assert len(out) == 10_000 and out[-1] == ops.TextDelta("m", "9999 ")


def context(**kw):
    agent = AgentConfig(agent_id=1, name="a", label="A", kind="agui")
    return RunContext(session_id="s", run_id="r", thread_id="t", agent=agent,
                      transcript=[{"message_id": "1", "role": "user", "content": "hi"},
                                  {"message_id": "2", "role": "agent", "content": "hello"},
                                  {"message_id": "3", "role": "system", "content": "notice"}],
                      state={"a": 1}, capabilities=Capabilities({"v09": 1}, ("c",)), **kw)


def test_the_run_input_validates_and_carries_the_turn():
    run = inputs.build(context(), ops.UserText("hi"))
    again = RunAgentInput.model_validate_json(inputs.body(run))
    assert [m.role for m in again.messages] == ["user", "assistant"]
    assert {t.name for t in again.tools} >= set(mapping.ASK_TOOLS)
    assert again.forwarded_props["a2ui"] == {"protocols": ["v09"], "catalogs": ["c"]}
    answered = inputs.build(context(), ops.Answer("q1", "Ada", {
        "tool_call": {"id": "c1", "name": mapping.ASK_INPUT, "arguments": "{}"},
        "parent_message_id": "p"}))
    assert [m.role for m in answered.messages][-2:] == ["assistant", "tool"]
    assert answered.messages[-1].tool_call_id == "c1"
    assert json.loads(answered.messages[-1].content) == "Ada"
    resumed = inputs.build(context(), ops.Answer("q2", {"size": "M"}, {"interrupt_id": "i1"}))
    assert resumed.resume[0].interrupt_id == "i1" and resumed.resume[0].status == "resolved"
    cancelled = inputs.build(context(), ops.Answer("q2", None, {"interrupt_id": "i1"},
                                                   "cancelled"))
    assert cancelled.resume[0].status == "cancelled"
