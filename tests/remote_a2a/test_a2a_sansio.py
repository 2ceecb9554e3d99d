"""The A2A client's sans-I/O modules: the extension's messages, the card, stream events read into
items, items mapped onto ops, and the byte meter."""

import json
from pathlib import Path

import jsonschema
import pytest

from a2ui.remote import ops
from a2ui.remote.a2a import card as c
from a2ui.remote.a2a import extension as ext
from a2ui.remote.a2a import outgoing
from a2ui.remote.a2a import parts as p
from a2ui.remote.a2a.mapping import RunMapper
from a2ui.remote.clients import Refusal

SCHEMAS = Path(__file__).resolve().parents[2] / "a2ui" / "core" / "surfaces" / "schemas"
V09 = ext.BASIC_CATALOG_V09
V091 = ext.BASIC_CATALOG_V091
CREATE = {"version": "v0.9", "createSurface": {"surfaceId": "s", "catalogId": V091}}
TEXT = {"version": "v0.9", "updateComponents": {"surfaceId": "s", "components": [
    {"id": "root", "component": "Text", "text": "Hi"}]}}


def a2ui_part(data, where="metadata", mime=ext.MIME):
    part = {"data": data}
    if where == "metadata":
        part["metadata"] = {"mimeType": mime}
    else:
        part["mediaType"] = mime
    return part


def status(state, parts=(), mid="m1", task="t1", ctx="c1"):
    return {"statusUpdate": {"taskId": task, "contextId": ctx, "status": {
        "state": state, "message": {"messageId": mid, "role": "ROLE_AGENT", "parts": list(parts)}}}}


# The extension --------------------------------------------------------------------------------


def test_client_capabilities_name_both_basic_ids_under_both_keys():
    caps = ext.client_capabilities([V09, "https://example.com/cat.json", V09])
    assert set(caps) == {"v0.9", "v0.9.1"}
    assert caps["v0.9"]["supportedCatalogIds"] == [V09, V091, "https://example.com/cat.json"]
    assert caps["v0.9.1"] == caps["v0.9"]
    schema = json.loads((SCHEMAS / "client_to_server.json").read_text())
    assert schema  # the capabilities object has no schema here; its shape is the spec's:
    assert all(isinstance(i, str) for i in caps["v0.9"]["supportedCatalogIds"])


def _client_message_schema():
    return json.loads((SCHEMAS / "client_to_server.json").read_text())


@pytest.mark.parametrize("message", [
    ext.action_message({"name": "go", "surfaceId": "s", "sourceComponentId": "b",
                        "timestamp": "2026-01-01T00:00:00Z", "context": {"a": 1}}),
    ext.error_message("VALIDATION_FAILED", "s", "Bad.", "/components/0"),
    ext.error_message("UNKNOWN_CATALOG", "s", "No such catalog."),
])
def test_client_messages_follow_the_official_schema(message):
    jsonschema.validate(message, _client_message_schema())


def test_parts_are_a_list_in_1_0_and_one_object_each_in_0_3():
    msgs = [ext.error_message("X", "s", "a"), ext.error_message("Y", "s", "b")]
    (one,) = ext.parts_for(msgs, as_list=True)
    assert one["data"] == msgs and one["metadata"] == {"mimeType": ext.MIME}
    assert one["mediaType"] == ext.MIME
    legacy = ext.parts_for(msgs, as_list=False)
    assert [q["data"] for q in legacy] == msgs


def test_request_carries_ids_extension_capabilities_and_data_model():
    caps = ext.client_capabilities([V09])
    req = outgoing.request(outgoing.action_parts({"name": "a"}, legacy=False), capabilities=caps,
                           context_id="c", task_id="t",
                           data_model=ext.client_data_model("s", {"x": 1}))
    m = req["message"]
    assert m["contextId"] == "c" and m["taskId"] == "t" and m["role"] == "ROLE_USER"
    assert m["extensions"] == [ext.EXTENSION_URI]
    assert m["metadata"]["a2uiClientCapabilities"] == caps
    assert m["metadata"]["a2uiClientDataModel"] == {"version": "v0.9", "surfaces": {"s": {"x": 1}}}
    fresh = outgoing.request([outgoing.text_part("hi")], capabilities=caps)
    assert "contextId" not in fresh["message"] and "taskId" not in fresh["message"]


def test_the_extension_version_is_named_once():
    root = Path(ext.__file__).parent
    hits = [f.name for f in root.glob("*.py") if "a2ui/v0.9.1" in f.read_text()]
    assert hits == ["extension.py"]


# The card -------------------------------------------------------------------------------------


@pytest.mark.parametrize("url,expected", [
    ("https://a.example/agent", "https://a.example/agent/.well-known/agent-card.json"),
    ("https://a.example/", "https://a.example/.well-known/agent-card.json"),
    ("https://a.example/cards/x.json", "https://a.example/cards/x.json"),
])
def test_card_url(url, expected):
    assert c.card_url(url) == expected


def test_a_1_0_interface_wins_over_0_3_and_rest():
    card = {"supportedInterfaces": [
        {"url": "https://a/v03", "protocolBinding": "JSONRPC", "protocolVersion": "0.3.0"},
        {"url": "https://a/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
        {"url": "https://a/v1", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]}
    assert c.choose(card) == ("https://a/v1", "1.0")


def test_a_0_3_card_form():
    card = {"url": "https://a/rpc", "protocolVersion": "0.3.0", "name": "X",
            "capabilities": {"streaming": True, "extensions": [
                {"uri": ext.EXTENSION_URI, "params": {"supportedCatalogIds": [V091]}}]}}
    info = c.read_card(card)
    assert (info.rpc_url, info.protocol_version, info.legacy) == ("https://a/rpc", "0.3", True)
    assert info.a2ui_current and info.a2ui_params == {"supportedCatalogIds": [V091]}


@pytest.mark.parametrize("card,problem", [
    ({"supportedInterfaces": [{"url": "grpc://a", "protocolBinding": "GRPC"}]}, "no JSON-RPC"),
    ({"url": "https://a", "protocolVersion": "0.2.5"}, "no JSON-RPC"),
    ({"url": "file:///etc/passwd"}, "not an http"),
    ([1, 2], "not a JSON object"),
    ({"supportedInterfaces": "x"}, "no JSON-RPC"),
])
def test_unusable_cards_are_refused_with_a_reason(card, problem):
    with pytest.raises(c.CardError, match=problem):
        c.read_card(card)


# Reading events -------------------------------------------------------------------------------


def test_text_and_surfaces_keep_their_order_and_the_basic_catalog_its_v0_9_id():
    items = p.Reader().read(status("TASK_STATE_WORKING", [
        {"text": "Hi"}, a2ui_part([CREATE, TEXT]), {"text": "after"}]))
    kinds = [type(i).__name__ for i in items]
    assert kinds == ["Ids", "Text", "Surface", "Text", "Status"]
    assert items[1] == p.Text("m1", "Hi") and items[3] == p.Text("m1:2", "after")
    assert items[2].messages[0]["createSurface"]["catalogId"] == V09
    assert items[-1] == p.Status("TASK_STATE_WORKING", "Hi\nafter", True, False)


@pytest.mark.parametrize("part", [
    a2ui_part([CREATE]), a2ui_part(CREATE), a2ui_part([CREATE], where="mediaType"),
    a2ui_part([CREATE], mime=ext.LEGACY_MIME),
])
def test_a2ui_parts_are_found_by_either_mime_field_and_data_form(part):
    (surface,) = [i for i in p.Reader().read(status("TASK_STATE_WORKING", [part]))
                  if isinstance(i, p.Surface)]
    assert surface.messages[0]["createSurface"]["surfaceId"] == "s"


def test_other_data_parts_are_not_surfaces():
    items = p.Reader().read(status("TASK_STATE_WORKING", [
        {"data": [CREATE], "mediaType": "application/json"}, {"data": [CREATE]}]))
    assert not [i for i in items if isinstance(i, p.Surface | p.Refused)]


def test_numbers_come_back_integral():
    msg = {"version": "v0.9", "updateDataModel": {"surfaceId": "s", "path": "/n", "value": 3.0}}
    (surface,) = [i for i in p.Reader().read(status("X", [a2ui_part([msg])]))
                  if isinstance(i, p.Surface)]
    value = surface.messages[0]["updateDataModel"]["value"]
    assert value == 3 and type(value) is int


def test_artifacts_stream_text_and_carry_surfaces():
    r = p.Reader()
    first = r.read({"artifactUpdate": {"taskId": "t", "artifact": {
        "artifactId": "a", "parts": [{"text": "Hel"}, a2ui_part([CREATE])]}}})
    assert p.TextChunk("t:a", "Hel", False) in first
    assert any(isinstance(i, p.Surface) for i in first)
    last = r.read({"artifactUpdate": {"taskId": "t", "append": True, "lastChunk": True,
                                      "artifact": {"artifactId": "a", "parts": [{"text": "lo"}]}}})
    assert p.TextChunk("t:a", "lo", True) in last and r.close_all() == []
    r.read({"artifactUpdate": {"taskId": "t", "artifact": {"artifactId": "b",
                                                           "parts": [{"text": "x"}]}}})
    assert r.close_all() == [p.TextChunk("t:b", "", True)]


def test_a_snapshot_does_not_show_a_status_message_twice():
    r = p.Reader()
    update = status("TASK_STATE_INPUT_REQUIRED", [{"text": "Name?"}, a2ui_part([CREATE])])
    assert any(isinstance(i, p.Surface) for i in r.read(update))
    snap = {"task": {"id": "t1", "contextId": "c1",
                     "status": update["statusUpdate"]["status"],
                     "artifacts": [{"artifactId": "z", "parts": [{"text": "old"}]}]}}
    items = r.read(snap)
    assert not [i for i in items if isinstance(i, p.Surface | p.Text | p.TextChunk)]
    assert items[-1] == p.Status("TASK_STATE_INPUT_REQUIRED", "Name?", True, False)


@pytest.mark.parametrize("data,reason", [
    ("just text", "must be a list"),
    (42, "must be a list"),
    ([["nested"]], "must be a JSON object"),
    ([{"version": "v0.9", "bogus": {}}], "Not an A2UI v0.9 server message"),
    ([{"version": "v0.9", "createSurface": {}, "deleteSurface": {}}], "Not an A2UI"),
    ([{"version": "v0.9", "updateDataModel": {"surfaceId": "s", "value": 2 ** 70}}], "within"),
    ([{"version": "v0.9", "updateDataModel": {"surfaceId": "s", "value": "\ud800"}}],
     "surrogate"),
    ([{"version": "v0.9", "updateDataModel": {"surfaceId": "s", "value": float("nan")}}], "NaN"),
    ([CREATE] * (p.MAX_MESSAGES_PER_PART + 1), "at most"),
])
def test_refused_a2ui(data, reason):
    items = p.Reader().read(status("TASK_STATE_WORKING", [a2ui_part(data)]))
    refused = [i for i in items if isinstance(i, p.Refused)]
    assert refused and reason in refused[0].reason and len(refused[0].reason) < 400
    assert not [i for i in items if isinstance(i, p.Surface)]


def test_a_refusal_keeps_the_good_messages_and_names_the_surface():
    bad = {"version": "v0.9", "updateDataModel": {"surfaceId": "s", "value": 2 ** 70}}
    items = p.Reader().read(status("X", [a2ui_part([CREATE, bad, TEXT])]))
    (surface,) = [i for i in items if isinstance(i, p.Surface)]
    (refused,) = [i for i in items if isinstance(i, p.Refused)]
    assert len(surface.messages) == 2
    assert refused.surface_id == "s" and refused.path == "/1/updateDataModel/value"


def test_unknown_events_are_refused_not_raised():
    assert isinstance(p.Reader().read({"weird": 1})[0], p.Refused)
    assert isinstance(p.Reader().read("x")[0], p.Refused)


# Mapping --------------------------------------------------------------------------------------


def _map(*events):
    m, r, out = RunMapper(), p.Reader(), []
    for e in events:
        out += m.ops(r.read(e))
    return m, out + m.finish()


def test_input_required_with_a_question_asks_the_person():
    m, out = _map(status("TASK_STATE_INPUT_REQUIRED", [{"text": "Your name?"}]))
    assert out[0] == ops.RunIds(context_id="c1", task_id="t1", extra={"task_state": "working"})
    ask = out[-1]
    assert isinstance(ask, ops.Ask) and ask.kind == "input"
    assert ask.params["prompt"] == "Your name?"
    assert ask.resume == {"task_id": "t1", "context_id": "c1", "state": "input-required"}
    assert out[-2] == ops.RunIds(extra={"task_state": "input-required"})


def test_input_required_with_only_a_surface_waits_for_the_person():
    m, out = _map(status("TASK_STATE_INPUT_REQUIRED", [a2ui_part([CREATE])]))
    assert isinstance(out[-1], ops.Finished) and out[-1].outcome["state"] == "input-required"


def test_auth_required_is_a_confirm_failed_a_failure_completed_a_finish():
    assert _map(status("TASK_STATE_AUTH_REQUIRED", [{"text": "Sign in"}]))[1][-1].kind == "confirm"
    failed = _map(status("TASK_STATE_FAILED", [{"text": "Closed"}]))[1][-1]
    assert failed == ops.Failed("The agent failed: Closed", code="task_failed")
    done = _map(status("TASK_STATE_COMPLETED"))[1]
    assert done[-2] == ops.RunIds(task_id="", extra={"task_state": "completed"})
    assert isinstance(done[-1], ops.Finished)


def test_refusals_become_the_extensions_error_messages():
    m, out = _map(status("TASK_STATE_WORKING", [a2ui_part("nope")]))
    assert any(isinstance(o, ops.Notice) and o.level == "warning" for o in out)
    surface_op = ops.Surface((CREATE,))
    m.refusal(Refusal(surface_op, "invalid", "Bad surface", detail={
        "version": "v0.9", "error": {"code": "VALIDATION_FAILED", "surfaceId": "s",
                                     "path": "/components/0", "message": "No root."}}))
    assert m.errors[1] == ext.error_message("VALIDATION_FAILED", "s", "No root.", "/components/0")
    for e in m.errors:
        jsonschema.validate(e, _client_message_schema())


# The byte meter ---------------------------------------------------------------------------------


def test_the_meter_counts_events_and_runs():
    from a2ui.remote.a2a.transport import Meter, TooLarge
    m = Meter(event_bytes=10, run_bytes=100)
    m.count(b"data: 123\n\ndata: ")  # an event of 9 bytes, then the start of the next...
    m.count(b"1\n")
    m.count(b"\ndata: 1\n\n" * 5)  # ...a blank line split between chunks: fine
    with pytest.raises(TooLarge, match="event"):
        Meter(10, 100).count(b"data: 0123456789")
    with pytest.raises(TooLarge, match="event"):  # a whole event in one chunk counts too
        Meter(10, 100).count(b"data: 01234\n\n")
    with pytest.raises(TooLarge, match="event"):  # and one spread over chunks
        meter = Meter(10, 100)
        for piece in (b"data: ", b"0123", b"45\n\n"):
            meter.count(piece)
    with pytest.raises(TooLarge, match="run"):
        big = Meter(1000, 50)
        for _ in range(10):
            big.count(b"data: 1\n\n")


def test_a_final_artifact_repeating_a_status_message_is_not_shown_twice():
    r = p.Reader()
    parts = [{"text": "Here"}, a2ui_part(CREATE)]
    assert any(isinstance(i, p.Surface) for i in r.read(status("TASK_STATE_WORKING", parts)))
    again = r.read({"artifactUpdate": {"taskId": "t", "artifact": {"artifactId": "a",
                                                                   "parts": parts}}})
    assert again == [p.Ids("", "t")]
    other = r.read({"artifactUpdate": {"taskId": "t", "artifact": {
        "artifactId": "b", "parts": [{"text": "Other"}]}}})
    assert p.TextChunk("t:b", "Other", False) in other


def test_an_agent_advertising_the_v0_9_extension_gets_it_activated_too():
    v09 = ext.EXTENSION_BASE + "v0.9"
    card = {"capabilities": {"extensions": [{"uri": v09}, {"uri": ext.EXTENSION_BASE + "v0.8"}]}}
    assert ext.requested_extensions(card) == [ext.EXTENSION_URI, v09]
    assert ext.requested_extensions({"capabilities": "x"}) == [ext.EXTENSION_URI]
