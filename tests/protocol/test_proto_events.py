"""Seed 000's codec for the core's session events (a2ui.jsonrpc.events), sans-I/O."""

import json

import pytest

from a2ui.core import events
from a2ui.core.content import methods
from a2ui.core.errors import DomainError
from a2ui.core.events import Kind
from a2ui.jsonrpc import events as wire
from a2ui.rpc.errors import ErrorCode, ProtocolError

RENDER = {"component_id": "c1", "component_type": "card", "data": {"title": "Hi"}}
ASK = {"request_id": "r1", "input_type": "text", "prompt": "Name?", "timeout_seconds": 60}


@pytest.mark.parametrize("method,params", [
    ("ui.render", RENDER),
    ("ui.update", {"component_id": "c1", "operation": "merge", "data": {"title": "Ho"}}),
    ("ui.request_input", ASK),
    ("ui.confirm", {"request_id": "r2", "title": "Sure?", "severity": "info",
                    "timeout_seconds": 30}),
    ("ui.progress", {"task_id": "t", "progress_type": "indeterminate"}),
    ("ui.navigate", {"url": "https://example.com/", "new_tab": False}),
    ("ui.notify", {"level": "info", "title": "Hi", "duration_ms": 5000}),
])
def test_every_agent_method_round_trips_through_its_event(method, params):
    kind, data = methods.to_event(method, params)
    assert isinstance(kind, Kind)
    text = wire.encode(kind, data)
    assert json.loads(text) == {"jsonrpc": "2.0", "method": method, "params": params}


def test_kinds_seed_000_does_not_show_encode_to_nothing():
    assert wire.encode(Kind.RUN_ENDED, {"run_id": "r", "status": "finished"}) is None
    assert wire.encode(Kind.SURFACE_BATCH, {"first_seq": 1, "messages": []}) is None


def test_a_removed_component_is_ui_remove():
    """An expired (ttl_seconds) or withdrawn component: the client drops it (issue 24)."""
    assert json.loads(wire.encode(Kind.COMPONENT_REMOVED, {"component_id": "c1"})) == {
        "jsonrpc": "2.0", "method": "ui.remove", "params": {"component_id": "c1"}}


def test_request_closed_and_consent_required_keep_their_notifications():
    closed = json.loads(wire.encode(Kind.REQUEST_CLOSED, {"request_id": "r", "status": "answered"}))
    assert closed["method"] == "a2ui.request_closed"
    prompt = json.loads(wire.encode(Kind.CONSENT_REQUIRED, {"consent_types": []}))
    assert prompt["method"] == "a2ui.consent_required"


def test_a_value_json_cannot_hold_is_not_encoded():
    assert wire.encode(Kind.NOTIFY, {"level": "info", "title": float("nan")}) is None


def test_encode_cached_encodes_once_per_session_epoch_and_number(monkeypatch):
    calls = []
    real = wire.encode
    monkeypatch.setattr(wire, "encode", lambda k, d: calls.append(k) or real(k, d))
    message = events.to_message(Kind.NOTIFY, {"level": "info", "title": "x"}, 7, "e1")
    first = wire.encode_cached("s1", message)
    assert wire.encode_cached("s1", dict(message)) == first  # another socket, same event
    assert len(calls) == 1
    wire.encode_cached("s1", {**message, "epoch": "e2"})  # a new counter: another event
    wire.encode_cached("s2", message)  # another session
    assert len(calls) == 3
    unnumbered = events.to_message(Kind.NOTIFY, {"level": "info", "title": "y"})
    wire.encode_cached("s1", unnumbered)
    wire.encode_cached("s1", unnumbered)
    assert len(calls) == 5  # not numbered: never cached


def test_agent_message_refuses_before_validating():
    with pytest.raises(DomainError) as info:
        methods.agent_message("ui.nope", {"session_id": "s"})
    assert ProtocolError.of(info.value).code == ErrorCode.METHOD_NOT_FOUND
    with pytest.raises(DomainError) as info:
        methods.agent_message("ui.render", {"component_id": "c"})
    assert ProtocolError.of(info.value).code == ErrorCode.INVALID_PARAMS
    assert info.value.data == {"path": "params.session_id"}
    sid, params = methods.agent_message("ui.render", {**RENDER, "session_id": "s"})
    assert sid == "s" and "session_id" not in params


def test_unknown_kinds_are_ignored_by_everyone():
    assert events.kind_of({"kind": "hologram.projected"}) is None
    assert events.kind_of({}) is None
    assert events.kind_of({"kind": "notify"}) is Kind.NOTIFY


def test_domain_faults_map_to_seed_codes():
    from a2ui.core.errors import DomainError, Fault

    err = ProtocolError.of(DomainError(Fault.SESSION_NOT_FOUND, data={"session_id": "x"}))
    assert ProtocolError.of(err).code == ErrorCode.SESSION_NOT_FOUND and err.close_code == 4000
    assert err.message == "Session not found" and err.data == {"session_id": "x"}
    for fault in Fault:
        assert ProtocolError.of(DomainError(fault)).fault == fault
    same = ProtocolError(ErrorCode.RATE_LIMITED)
    assert ProtocolError.of(same) is same and same.fault == Fault.RATE_LIMITED
