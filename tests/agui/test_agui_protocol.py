"""Seed 003 (AG-UI WebSocket) sans-I/O: the envelope, the 14 event types each way, the errors,
and the core's session events in AG-UI words."""

import json
import re
import uuid

import pytest

from a2ui.agui import PROTOCOL_VERSION, mapping
from a2ui.agui import protocol as p
from a2ui.core.events import Kind


def frame(event, **over):
    return {"version": "0.1.0", "id": str(uuid.uuid4()), "timestamp": "2026-01-09T12:00:00.000Z",
            "event": event, **over}


def refused(obj):
    with pytest.raises(p.AguiError) as info:
        p.parse(obj) if not isinstance(obj, str) else p.parse_text(obj)
    return info.value


# Every example of the seed, sent the way it may travel.
SERVER_EXAMPLES = [
    {"type": "TEXT_MESSAGE", "sender": "user_123", "content": "What is the status?",
     "metadata": {"author_name": "John"}},
    {"type": "TOOL_CALL_REQUEST", "id": "tc_abc123", "tool_name": "grep",
     "parameters": {"pattern": "error", "file": "*.log"}, "agent_id": "agent_main"},
    {"type": "TOOL_CALL_STATUS", "id": "tc_abc123", "status": "RUNNING", "progress": 75,
     "message": "Processing files..."},
    {"type": "TOOL_CALL_RESULT", "id": "tc_abc123",
     "result": {"matches": ["error: connection", "error: timeout"]}},
    {"type": "STATE_DELTA", "path": "user.preferences.theme", "old_value": "light",
     "new_value": "dark"},
    {"type": "RENDER_REQUEST", "component_id": "form_settings",
     "schema": {"type": "form", "fields": []}, "props": {"disabled": False}},
    {"type": "PLAN_CARD", "id": "plan_001", "title": "Analysis Plan",
     "content": "## Steps\n1. Analyze error", "status": "ACTIVE"},
    {"type": "RESOURCE_TREE", "root": {"id": "root_1", "name": "Project", "node_type": "folder",
                                       "children": [{"id": "f1", "name": "src",
                                                     "node_type": "folder", "children": []}]}},
    {"type": "AGENT_ROSTER", "agents": [{"id": "agent_main", "name": "Main Agent",
                                         "status": "BUSY", "metadata": {"version": "1.0"}}]},
    {"type": "ARTIFACT_OPEN", "id": "art_123", "title": "main.rs", "content": "fn main() {}",
     "content_type": "code", "read_only": False, "language": "rust"},
    {"type": "ARTIFACT_UPDATE", "id": "art_123", "content": "fn main() {}",
     "change_type": "full_replace"},
    {"type": "CONNECTION_STATUS", "status": "CONNECTED",
     "message": "Connected to orchestrator v0.1"},
    {"type": "ERROR", "code": "PARSE_ERROR", "message": "Invalid event format",
     "details": {"field": "event.type"}},
]
CLIENT_EXAMPLES = [
    SERVER_EXAMPLES[0],
    {"type": "USER_ACTION", "action_type": "submit", "component_id": "form_settings",
     "payload": {"theme": "dark", "language": "en"}},
]


def test_fourteen_event_types_each_with_an_example():
    names = {e["type"] for e in SERVER_EXAMPLES + CLIENT_EXAMPLES}
    assert names == set(p.EVENTS) and len(names) == 14
    assert all(re.fullmatch(r"[A-Z]+(_[A-Z]+)*", n) for n in names)


@pytest.mark.parametrize("event", SERVER_EXAMPLES, ids=lambda e: e["type"])
def test_server_events_round_trip_in_the_envelope(event):
    text = p.encode(event)
    obj = json.loads(text)
    assert obj["version"] == PROTOCOL_VERSION == "0.1.0"
    assert uuid.UUID(obj["id"]).version == 4
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", obj["timestamp"])
    assert obj["event"] == event
    if event["type"] != "TEXT_MESSAGE":  # only TEXT_MESSAGE travels both ways
        assert refused(obj).code == p.INVALID_EVENT


@pytest.mark.parametrize("event", CLIENT_EXAMPLES, ids=lambda e: e["type"])
def test_client_events_parse(event):
    assert p.parse(frame(event)) == event
    if event["type"] == "USER_ACTION":  # the server never sends it
        with pytest.raises(p.AguiError):
            p.envelope(event)


def test_each_envelope_gets_a_new_id_and_optional_fields_are_left_out():
    a, b = p.envelope(p.connection_status("CONNECTED")), p.envelope(p.error("PARSE_ERROR", "x"))
    assert a["id"] != b["id"]
    assert a["event"] == {"type": "CONNECTION_STATUS", "status": "CONNECTED"}
    assert b["event"] == {"type": "ERROR", "code": "PARSE_ERROR", "message": "x"}
    assert "null" not in p.encode(p.tool_call_status("t", "PENDING"))
    # A null for an optional field on the way in reads as absent.
    assert p.parse(frame({"type": "TEXT_MESSAGE", "sender": "u", "content": "c",
                          "metadata": None})) == {"type": "TEXT_MESSAGE", "sender": "u",
                                                  "content": "c"}


def test_errors_say_what_and_where():
    assert refused("{not json").code == p.PARSE_ERROR
    assert refused("[1, 2]").code == p.INVALID_EVENT
    nan = refused('{"version": 99999999999999999999}')
    assert (nan.code, nan.details["field"]) == (p.INVALID_EVENT_DATA, "version")
    assert refused('{"version": NaN}').code == p.PARSE_ERROR
    for name in ("version", "id", "timestamp", "event"):
        obj = frame({"type": "TEXT_MESSAGE", "sender": "u", "content": "c"})
        del obj[name]
        err = refused(obj)
        assert (err.code, err.details["field"]) == (p.MISSING_FIELD, name)
    err = refused(frame({"sender": "u"}))
    assert (err.code, err.details["field"]) == (p.MISSING_FIELD, "event.type")
    err = refused(frame({"type": "TEXT_MESSAGE", "sender": "u"}))
    assert (err.code, err.details["field"]) == (p.MISSING_FIELD, "event.content")
    err = refused(frame({"type": "TEXT_MESSAGE", "sender": "u", "content": 5}))
    assert (err.code, err.details["field"]) == (p.INVALID_EVENT_DATA, "event.content")
    err = refused(frame({"type": "USER_ACTION", "action_type": "x", "component_id": ["a"]}))
    assert (err.code, err.details["field"]) == (p.INVALID_EVENT_DATA, "event.component_id")
    assert refused(frame({"type": "NOPE"})).code == p.INVALID_EVENT
    assert refused(frame({"type": 7})).code == p.INVALID_EVENT
    assert refused(frame("TEXT_MESSAGE")).code == p.INVALID_EVENT_DATA


@pytest.mark.parametrize("version,ok", [("0.1.0", True), ("0.2.5", True), ("0.1.0-rc.1", True),
                                        ("1.0.0", False), ("2.1.0", False)])
def test_a_different_major_version_is_refused(version, ok):
    obj = frame({"type": "TEXT_MESSAGE", "sender": "u", "content": "c"}, version=version)
    if ok:
        assert p.parse(obj)["content"] == "c"
    else:
        err = refused(obj)
        assert (err.code, err.details["field"]) == (p.INVALID_VERSION, "version")


@pytest.mark.parametrize("field,value", [
    ("version", "0.1"), ("version", 1), ("id", "not-a-uuid"),
    ("id", "6ba7b810-9dad-11d1-80b4-00c04fd430c8"),  # a version-1 UUID (fixed: xdist collects it)
    ("id", 12), ("timestamp", "2026-01-09"), ("timestamp", "2026-01-09T12:00:00"),
    ("timestamp", "2026-13-09T12:00:00Z"), ("timestamp", 1700000000),
])
def test_bad_envelope_fields(field, value):
    err = refused(frame({"type": "TEXT_MESSAGE", "sender": "u", "content": "c"},
                        **{field: value}))
    assert (err.code, err.details["field"]) == (p.INVALID_EVENT_DATA, field)


@pytest.mark.parametrize("event", [
    {"type": "TOOL_CALL_STATUS", "id": "t", "status": "DONE"},
    {"type": "TOOL_CALL_STATUS", "id": "t", "status": "RUNNING", "progress": 101},
    {"type": "TOOL_CALL_STATUS", "id": "t", "status": "RUNNING", "progress": True},
    {"type": "PLAN_CARD", "id": "p", "title": "t", "content": "c", "status": "RUNNING"},
    {"type": "AGENT_ROSTER", "agents": [{"id": "a", "name": "n", "status": "AWAY"}]},
    {"type": "RESOURCE_TREE", "root": {"id": "r", "name": "n", "node_type": "folder",
                                       "children": [{"id": "c"}]}},
    {"type": "ARTIFACT_UPDATE", "id": "a", "content": "c", "change_type": "patch"},
    {"type": "ARTIFACT_OPEN", "id": "a", "title": "t", "content": "c", "content_type": "code",
     "read_only": "no"},
    {"type": "CONNECTION_STATUS", "status": "UP"},
    {"type": "ERROR", "code": "NOT_A_CODE", "message": "m"},
    {"type": "RENDER_REQUEST", "component_id": "c", "schema": []},
], ids=lambda e: e["type"])
def test_server_events_with_bad_data_are_never_built(event):
    with pytest.raises(p.AguiError) as info:
        p.envelope(event)
    assert info.value.code == p.INVALID_EVENT_DATA


# Mapping of the core's session events --------------------------------------------------------


def out(kind, data):
    return [p.envelope(e)["event"] for e in mapping.translate(kind, data)]


def test_components_and_requests_become_render_requests():
    assert out(Kind.COMPONENT_RENDERED, {"component_id": "c1", "component_type": "form",
                                         "data": {"fields": []}, "metadata": {}}) == [
        {"type": "RENDER_REQUEST", "component_id": "c1", "schema": {"type": "form",
                                                                    "fields": []}}]
    assert out(Kind.COMPONENT_RENDERED, {"component_id": "c1", "component_type": "card",
                                         "data": {}, "metadata": {"ttl": 5}})[0]["props"] == {
        "ttl": 5}
    assert out(Kind.REQUEST_OPENED, {"kind": "confirm", "params": {
        "request_id": "r1", "title": "Sure?"}}) == [
        {"type": "RENDER_REQUEST", "component_id": "r1",
         "schema": {"type": "confirm", "title": "Sure?"}}]
    assert out(Kind.REQUEST_CLOSED, {"request_id": "r1", "status": "answered"}) == [
        {"type": "STATE_DELTA", "path": "requests.r1.status", "new_value": "answered"}]
    assert out(Kind.COMPONENT_UPDATED, {"component_id": "c1", "operation": "merge",
                                        "data": {"a": 1}}) == [
        {"type": "STATE_DELTA", "path": "components.c1.merge", "new_value": {"a": 1}}]
    assert out(Kind.COMPONENT_REMOVED, {"component_id": "c1"}) == [
        {"type": "STATE_DELTA", "path": "components.c1"}]


def test_progress_notify_and_consent():
    assert out(Kind.PROGRESS, {"task_id": "t", "progress_type": "determinate", "value": 3,
                               "total": 4, "message": "busy"}) == [
        {"type": "TOOL_CALL_STATUS", "id": "t", "status": "RUNNING", "progress": 75,
         "message": "busy"}]
    assert out(Kind.PROGRESS, {"task_id": "t", "progress_type": "determinate", "value": 4,
                               "total": 4})[0]["status"] == "COMPLETED"
    assert "progress" not in out(Kind.PROGRESS, {"task_id": "t", "progress_type":
                                                 "indeterminate"})[0]
    assert out(Kind.NOTIFY, {"level": "info", "title": "Hi", "message": "there"}) == [
        {"type": "TEXT_MESSAGE", "sender": "agent", "content": "there",
         "metadata": {"level": "info", "title": "Hi"}}]
    assert out(Kind.CONSENT_REQUIRED, {"consent_types": [{"type": "x"}]})[0]["metadata"] == {
        "consent_required": [{"type": "x"}]}


def test_every_kind_is_translated():
    """Every core kind has a seed-003 form (issue 24; navigate and surface.batch had none):
    tests/agui/test_agui_every_kind.py has each one's events."""
    assert mapping.NOT_TRANSLATED == frozenset()
    assert out(Kind.NAVIGATE, {"url": "https://example.com", "new_tab": False}) == [
        {"type": "TEXT_MESSAGE", "sender": "agent", "content": "https://example.com",
         "metadata": {"navigate": {"url": "https://example.com", "new_tab": False}}}]
    assert out(Kind.SURFACE_BATCH, {"first_seq": 1, "messages": []}) == []


def test_frame_is_the_envelope_of_encode_and_events_are_encoded_once_per_sequence_number():
    event = p.build("TEXT_MESSAGE", sender="agent", content="héllo \ud800")
    one, two = json.loads(p.encode(event)), json.loads(p.frame(p.encode_event(event)))
    assert list(one) == list(two) == ["version", "id", "timestamp", "event"]
    assert one["event"] == two["event"] and one["id"] != two["id"]
    assert uuid.UUID(two["id"]).version == 4 and two["version"] == p.PROTOCOL_VERSION

    message = {"kind": "notify", "seq": 7, "epoch": "e1",
               "data": {"level": "info", "title": "T", "message": "M"}}
    first = mapping.encoded_cached("s" * 32, Kind.NOTIFY, message)
    assert first and mapping.encoded_cached("s" * 32, Kind.NOTIFY, message) is first
    assert [json.loads(t) for t in first] == [
        p.validate_event(e, p.OUT) for e in mapping.translate(Kind.NOTIFY, message["data"])]
    other = mapping.encoded_cached("s" * 32, Kind.NOTIFY, {**message, "seq": 8})
    assert other is not first
    unnumbered = {**message, "seq": None}
    assert mapping.encoded_cached("s" * 32, Kind.NOTIFY, unnumbered) is not \
        mapping.encoded_cached("s" * 32, Kind.NOTIFY, unnumbered)


@pytest.mark.parametrize("field,value", [
    ("action_type", "\x00"), ("action_type", "a\x00b"), ("action_type", ""),
    ("action_type", "x" * 257), ("action_type", "\x1b[31m"), ("component_id", "c\x00"),
    ("component_id", "\u0085"), ("component_id", 7)])
def test_user_action_names_are_names_not_text(field, value):
    """NUL and other control characters are refused in an action type or component id (no
    database stores NUL; they are echoed into the audit trail and to the agent)."""
    event = {"type": "USER_ACTION", "action_type": "submit", "component_id": "c1", field: value}
    with pytest.raises(p.AguiError) as refused:
        p.validate_event(event, p.IN)
    assert refused.value.code == p.INVALID_EVENT_DATA
    assert refused.value.details["field"] == f"event.{field}"
