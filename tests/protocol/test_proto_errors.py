import json

import pytest

from a2ui.rpc.errors import (
    CLOSE_CODES,
    CLOSE_REASONS,
    CloseCode,
    ErrorCode,
    ProtocolError,
    default_message,
)

SEED_TABLE = [
    (-32700, "Parse error"),
    (-32600, "Invalid request"),
    (-32601, "Method not found"),
    (-32602, "Invalid params"),
    (-32603, "Internal error"),
    (-32000, "Session not found"),
    (-32001, "Rate limit exceeded"),
    (-32002, "Payload too large"),
    (-32003, "Component not found"),
    (-32004, "Request timeout"),
    (-32005, "Session expired"),
    (-32006, "Auth failed"),
    (-32007, "Max sessions exceeded"),
]


@pytest.mark.parametrize(("code", "message"), SEED_TABLE)
def test_codes_and_messages_match_seed(code, message):
    assert default_message(code) == message
    err = ProtocolError(code)
    assert err.code == code and err.message == message
    assert err.to_response() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": code, "message": message},
    }


def test_enum_names():
    assert ErrorCode.RATE_LIMITED == -32001
    assert ErrorCode.MAX_SESSIONS == -32007
    assert len(ErrorCode) == 14  # the seed's 13 and -32010 Consent required
    assert ErrorCode.CONSENT_REQUIRED == -32010


def test_to_response_carries_id_and_data():
    err = ProtocolError(ErrorCode.INVALID_PARAMS, data={"path": "params.x"}, request_id="7")
    response = err.to_response()
    assert response["id"] == "7"
    assert response["error"]["data"] == {"path": "params.x"}
    assert json.loads(json.dumps(response)) == response
    assert err.with_request_id(3).to_response()["id"] == 3


def test_custom_message_and_unknown_code():
    assert ProtocolError(-32002, "too big").to_response()["error"]["message"] == "too big"
    assert ProtocolError(-31999).message == "Server error"


@pytest.mark.parametrize(
    ("code", "close"),
    [
        (-32000, 4000),
        (-32001, 4001),
        (-32002, 4002),
        (-32003, 4003),
        (-32004, 4004),
        (-32005, 4005),
        (-32006, 4006),
        (-32007, 4007),
    ],
)
def test_close_codes(code, close):
    assert CLOSE_CODES[code] == close
    assert ProtocolError(code).close_code == close


def test_operator_close_codes():
    assert CLOSE_CODES.TERMINATED == CloseCode.TERMINATED == 4010
    assert CLOSE_CODES.REVOKED == CloseCode.REVOKED == 4011
    assert CLOSE_REASONS[CloseCode.TERMINATED] == "Session terminated by an operator"
    assert ProtocolError(ErrorCode.PARSE_ERROR).close_code is None
    with pytest.raises(AttributeError):
        CLOSE_CODES.NOPE  # noqa: B018
