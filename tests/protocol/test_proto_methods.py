import pytest

from a2ui.core.content.methods import (
    AGENT_TO_UI,
    AWAITING,
    FIRE_AND_FORGET,
    UI_TO_AGENT,
    validate_params,
)
from a2ui.core.errors import DomainError
from a2ui.rpc.errors import ErrorCode, ProtocolError

CARD = {"component_id": "c1", "component_type": "card", "data": {"title": "T"}}
INIT = {"client_info": {"name": "W", "version": "1"}}
VALID = {
    "ui.render": CARD,
    "ui.update": {"component_id": "c1", "operation": "merge", "data": {"title": "x"}},
    "ui.request_input": {"request_id": "r1", "input_type": "text", "prompt": "P?"},
    "ui.confirm": {"request_id": "r1", "title": "Sure?"},
    "ui.progress": {"task_id": "t1", "progress_type": "indeterminate"},
    "ui.navigate": {"url": "https://example.com/"},
    "ui.notify": {"level": "info", "title": "Hi"},
    "a2ui.init": INIT,
    "user.respond": {"request_id": "r1", "value": None},
    "user.approve": {"request_id": "r1", "approved": False},
    "user.cancel": {"task_id": "t1"},
}


def invalid(method, params, path):
    with pytest.raises(DomainError) as info:
        validate_params(method, params)
    err = info.value
    assert ProtocolError.of(err).code == ErrorCode.INVALID_PARAMS, err
    assert err.data["path"] == path, err.data
    assert err.data["reason"]
    return err


def test_method_sets():
    assert len(AGENT_TO_UI) == 7 and len(UI_TO_AGENT) == 4
    assert FIRE_AND_FORGET | AWAITING == AGENT_TO_UI
    assert not FIRE_AND_FORGET & AWAITING
    assert AWAITING == {"ui.request_input", "ui.confirm"}


@pytest.mark.parametrize("method", sorted(VALID))
def test_minimal_valid_params(method):
    cleaned = validate_params(method, VALID[method])
    assert cleaned is not VALID[method]


@pytest.mark.parametrize("method", ["ui.nope", "", "rpc.discover", "UI.RENDER"])
def test_unknown_method(method):
    with pytest.raises(DomainError) as info:
        validate_params(method, {})
    assert ProtocolError.of(info.value).code == ErrorCode.METHOD_NOT_FOUND
    assert ProtocolError.of(info.value).message == "Method not found"


def test_allowed_restricts_direction():
    with pytest.raises(DomainError) as info:
        validate_params("ui.render", CARD, allowed=UI_TO_AGENT)
    assert ProtocolError.of(info.value).code == ErrorCode.METHOD_NOT_FOUND
    assert validate_params("ui.render", CARD, allowed=AGENT_TO_UI)["component_id"] == "c1"


def test_params_must_be_object():
    invalid("ui.notify", [1], "params")


def test_defaults_filled():
    assert validate_params("ui.confirm", VALID["ui.confirm"]) | {} == {
        "request_id": "r1",
        "title": "Sure?",
        "severity": "info",
        "timeout_seconds": 30,
    }
    assert validate_params("ui.notify", VALID["ui.notify"])["duration_ms"] == 5000
    assert validate_params("ui.navigate", VALID["ui.navigate"])["new_tab"] is False
    assert validate_params("ui.render", CARD)["metadata"] == {
        "priority": "normal",
        "position": "main",
    }


def test_input_is_not_mutated():
    params = {"level": "info", "title": "<b>x</b>"}
    validate_params("ui.notify", params)
    assert params == {"level": "info", "title": "<b>x</b>"}


@pytest.mark.parametrize("bad_id", ["", "a b", "x" * 129, 5, None, "<script>", "ü", "a/b", "a\n"])
@pytest.mark.parametrize(
    ("method", "key"),
    [
        ("ui.render", "component_id"),
        ("ui.update", "component_id"),
        ("ui.request_input", "request_id"),
        ("ui.confirm", "request_id"),
        ("ui.progress", "task_id"),
        ("user.respond", "request_id"),
        ("user.approve", "request_id"),
        ("user.cancel", "task_id"),
    ],
)
def test_bad_ids(method, key, bad_id):
    invalid(method, {**VALID[method], key: bad_id}, f"params.{key}")


@pytest.mark.parametrize(
    "good_id", ["c1", "550e8400-e29b-41d4-a716-446655440000", "a.b:c_d-e", "x" * 128]
)
def test_good_ids(good_id):
    assert (
        validate_params("ui.render", {**CARD, "component_id": good_id})["component_id"] == good_id
    )


@pytest.mark.parametrize(
    ("method", "change", "path"),
    [
        ("ui.render", {"component_type": "widget"}, "params.component_type"),
        ("ui.render", {"data": None}, "params.data"),
        ("ui.render", {"data": "x"}, "params.data"),
        ("ui.render", {"data": {}}, "params.data.title"),
        ("ui.render", {"metadata": {"priority": "urgent"}}, "params.metadata.priority"),
        ("ui.render", {"metadata": {"position": "footer"}}, "params.metadata.position"),
        ("ui.render", {"metadata": {"ttl_seconds": 0}}, "params.metadata.ttl_seconds"),
        ("ui.render", {"metadata": {"ttl_seconds": 7 * 86400 + 1}}, "params.metadata.ttl_seconds"),
        ("ui.render", {"metadata": {"ttl_seconds": "5"}}, "params.metadata.ttl_seconds"),
        ("ui.render", {"metadata": []}, "params.metadata"),
        ("ui.update", {"operation": "delete"}, "params.operation"),
        ("ui.update", {"data": [1]}, "params.data"),
        ("ui.request_input", {"input_type": "color"}, "params.input_type"),
        ("ui.request_input", {"prompt": 3}, "params.prompt"),
        ("ui.request_input", {"input_type": "select"}, "params.options"),
        ("ui.request_input", {"input_type": "select", "options": []}, "params.options"),
        ("ui.request_input", {"options": ["a", 2]}, "params.options[1]"),
        ("ui.request_input", {"validation": {"min": "1"}}, "params.validation.min"),
        ("ui.request_input", {"validation": {"required": 1}}, "params.validation.required"),
        ("ui.request_input", {"validation": 5}, "params.validation"),
        ("ui.request_input", {"timeout_seconds": 0}, "params.timeout_seconds"),
        ("ui.confirm", {"title": None}, "params.title"),
        ("ui.confirm", {"severity": "error"}, "params.severity"),
        ("ui.confirm", {"timeout_seconds": 0}, "params.timeout_seconds"),
        ("ui.confirm", {"timeout_seconds": 3601}, "params.timeout_seconds"),
        ("ui.confirm", {"timeout_seconds": True}, "params.timeout_seconds"),
        ("ui.confirm", {"timeout_seconds": 2.5}, "params.timeout_seconds"),
        ("ui.confirm", {"description": ["x"]}, "params.description"),
        ("ui.progress", {"progress_type": "spinner"}, "params.progress_type"),
        ("ui.progress", {"value": -1}, "params.value"),
        ("ui.progress", {"value": "50"}, "params.value"),
        ("ui.progress", {"total": 0}, "params.total"),
        ("ui.progress", {"message": 1}, "params.message"),
        ("ui.navigate", {"url": None}, "params.url"),
        ("ui.navigate", {"url": "javascript:alert(1)"}, "params.url"),
        ("ui.navigate", {"new_tab": "yes"}, "params.new_tab"),
        ("ui.notify", {"level": "critical"}, "params.level"),
        ("ui.notify", {"title": None}, "params.title"),
        ("ui.notify", {"duration_ms": -1}, "params.duration_ms"),
        ("ui.notify", {"duration_ms": 600_001}, "params.duration_ms"),
        ("a2ui.init", {"client_info": None}, "params.client_info"),
        ("a2ui.init", {"client_info": "web"}, "params.client_info"),
        ("a2ui.init", {"client_info": {"name": "W"}}, "params.client_info.version"),
        (
            "a2ui.init",
            {"client_info": {"name": "W", "version": "1", "viewport": {"width": "x"}}},
            "params.client_info.viewport.width",
        ),
        ("a2ui.init", {"capabilities": []}, "params.capabilities"),
        (
            "a2ui.init",
            {"capabilities": {"supported_components": "card"}},
            "params.capabilities.supported_components",
        ),
        (
            "a2ui.init",
            {"capabilities": {"max_concurrent_components": 0}},
            "params.capabilities.max_concurrent_components",
        ),
        (
            "a2ui.init",
            {"capabilities": {"supports_file_upload": "no"}},
            "params.capabilities.supports_file_upload",
        ),
        ("a2ui.init", {"capabilities": {"v0.9": True}}, "params.capabilities.v0.9"),
        ("a2ui.init", {"session_id": "not-a-uuid"}, "params.session_id"),
        ("a2ui.init", {"session_id": 5}, "params.session_id"),
        ("user.approve", {"approved": "true"}, "params.approved"),
        ("user.approve", {"approved": None}, "params.approved"),
        ("user.approve", {"reason": 5}, "params.reason"),
        ("user.cancel", {"reason": {}}, "params.reason"),
    ],
)
def test_invalid_params_paths(method, change, path):
    invalid(method, {**VALID[method], **change}, path)


@pytest.mark.parametrize(
    ("method", "key"),
    [
        ("ui.render", "component_type"),
        ("ui.render", "data"),
        ("ui.update", "operation"),
        ("ui.update", "data"),
        ("ui.request_input", "input_type"),
        ("ui.request_input", "prompt"),
        ("ui.confirm", "title"),
        ("ui.progress", "progress_type"),
        ("ui.navigate", "url"),
        ("ui.notify", "level"),
        ("ui.notify", "title"),
        ("a2ui.init", "client_info"),
        ("user.respond", "value"),
        ("user.approve", "approved"),
    ],
)
def test_missing_required(method, key):
    params = {k: v for k, v in VALID[method].items() if k != key}
    err = invalid(method, params, f"params.{key}")
    assert err.data["reason"] == "is required"


def test_init_keeps_unknown_capabilities_sanitized_and_normalizes_session():
    cleaned = validate_params(
        "a2ui.init",
        {
            "client_info": {
                "name": "<b>Web</b>",
                "version": "1.0",
                "viewport": {"width": 1, "height": 2},
            },
            "capabilities": {
                "supported_components": ["card", "<i>x</i>"],
                "v0.9": {"catalogs": ["https://a2ui.org/basic"], "note": "<script>x</script>ok"},
                "future_flag": "<img src=x onerror=alert(1)>",
            },
            "session_id": "550E8400-E29B-41D4-A716-446655440000",
        },
    )
    assert cleaned["client_info"]["name"] == "Web"
    assert cleaned["capabilities"]["supported_components"] == ["card", "x"]
    assert cleaned["capabilities"]["v0.9"]["note"] == "ok"
    assert cleaned["capabilities"]["future_flag"] == ""
    assert cleaned["session_id"] == "550e8400-e29b-41d4-a716-446655440000"


def test_init_capabilities_optional():
    assert validate_params("a2ui.init", INIT)["capabilities"] == {}


def test_user_respond_value_is_raw_json():
    value = {"text": "a < b && c", "n": [1, 2.5, True, None], "nested": {"k": "<b>"}}
    cleaned = validate_params("user.respond", {"request_id": "r1", "value": value})
    assert cleaned["value"] == value


def test_user_respond_value_made_encodable():
    cleaned = validate_params("user.respond", {"request_id": "r1", "value": "a\ud800b\x00c"})
    assert cleaned["value"] == "a\ufffdbc"


def test_too_deep_value():
    value = []
    for _ in range(40):
        value = [value]
    with pytest.raises(DomainError) as info:
        validate_params("user.respond", {"request_id": "r1", "value": value})
    assert ProtocolError.of(info.value).code == ErrorCode.INVALID_PARAMS
    assert info.value.data["path"].startswith("params.value[0][0]")


def test_approve_and_cancel_reasons_sanitized():
    assert (
        validate_params(
            "user.approve", {"request_id": "r", "approved": True, "reason": "<b>ok</b>"}
        )["reason"]
        == "ok"
    )
    assert (
        validate_params("user.cancel", {"task_id": "t", "reason": "<script>x</script>"})["reason"]
        == ""
    )


def test_unknown_params_kept_and_sanitized():
    cleaned = validate_params("ui.notify", {**VALID["ui.notify"], "icon": "<svg onload=alert(1)>"})
    assert cleaned["icon"] == ""


def test_integral_float_timeout_accepted():
    assert (
        validate_params("ui.confirm", {**VALID["ui.confirm"], "timeout_seconds": 60.0})[
            "timeout_seconds"
        ]
        == 60
    )


def test_request_input_optional_timeout():
    assert "timeout_seconds" not in validate_params("ui.request_input", VALID["ui.request_input"])
    params = {**VALID["ui.request_input"], "timeout_seconds": 120}
    assert validate_params("ui.request_input", params)["timeout_seconds"] == 120


def test_update_data_sanitized_but_not_typed():
    cleaned = validate_params(
        "ui.update",
        {"component_id": "c1", "operation": "append", "data": {"rows": [{"n": "<b>x</b>"}]}},
    )
    assert cleaned["data"] == {"rows": [{"n": "x"}]}
