"""Client-to-server messages."""

from __future__ import annotations

import pytest

from a2ui.core.surfaces import ValidationFailed, validate_client_message

ACTION = {"name": "submit", "surfaceId": "s", "sourceComponentId": "b",
          "timestamp": "2025-01-02T03:04:05.678Z", "context": {"x": 1}}


def test_action_ok() -> None:
    msg = {"version": "v0.9", "action": ACTION}
    assert validate_client_message(msg) == msg


@pytest.mark.parametrize("field", list(ACTION))
def test_all_five_action_fields_required(field: str) -> None:
    action = {k: v for k, v in ACTION.items() if k != field}
    with pytest.raises(ValidationFailed) as info:
        validate_client_message({"version": "v0.9", "action": action})
    assert field in info.value.message and info.value.path == "/action"


def test_bad_timestamp_and_context() -> None:
    with pytest.raises(ValidationFailed) as info:
        validate_client_message({"version": "v0.9", "action": {**ACTION, "timestamp": "now"}})
    assert info.value.path == "/action/timestamp"
    with pytest.raises(ValidationFailed):
        validate_client_message({"version": "v0.9", "action": {**ACTION, "context": []}})


def test_user_action_alias_normalized() -> None:
    assert validate_client_message({"userAction": ACTION}) == {"version": "v0.9",
                                                                "action": ACTION}
    assert validate_client_message({"version": "v0.9.1", "userAction": ACTION})["action"]


def test_envelope_rules() -> None:
    for bad in [{"action": ACTION}, {"version": "v0.8", "action": ACTION},
                {"version": "v0.9", "action": ACTION, "extra": 1},
                {"version": "v0.9", "action": ACTION, "error": {}}, [], {"version": "v0.9"}]:
        with pytest.raises(ValidationFailed):
            validate_client_message(bad)


def test_errors() -> None:
    ok = {"code": "VALIDATION_FAILED", "surfaceId": "s", "path": "/a", "message": "m"}
    validate_client_message({"version": "v0.9", "error": ok})
    generic = {"code": "RENDER", "surfaceId": "s", "message": "m", "details": {"a": 1}}
    validate_client_message({"version": "v0.9", "error": generic})
    for bad in [{**ok, "extra": 1}, {k: v for k, v in ok.items() if k != "path"},
                {"code": "X", "message": "m"}]:
        with pytest.raises(ValidationFailed):
            validate_client_message({"version": "v0.9", "error": bad})
