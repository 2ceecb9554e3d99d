import json

import pytest

from a2ui.core.errors import DomainError
from a2ui.rpc.errors import ErrorCode, ProtocolError
from a2ui.rpc.jsonrpc import (
    Message,
    encode,
    error_response,
    notification,
    parse,
    parse_incoming,
    parse_response,
    request,
    result,
)

MAX = 1024


def raises(raw, code, *, request_id=None, max_size=MAX):
    with pytest.raises(DomainError) as info:
        parse(raw, max_size=max_size)
    err = info.value
    assert ProtocolError.of(err).code == code, err
    assert err.request_id == request_id
    assert err.to_response()["id"] == request_id
    return err


def test_minimal_request_and_notification():
    msg = parse('{"jsonrpc":"2.0","method":"ui.notify","params":{"a":1},"id":5}', max_size=MAX)
    assert msg == Message("ui.notify", {"a": 1}, 5)
    assert not msg.is_notification
    msg = parse(b'{"jsonrpc":"2.0","method":"x"}', max_size=MAX)
    assert msg.params == {} and msg.id is None and msg.is_notification


def test_null_id_is_a_notification():
    assert parse('{"jsonrpc":"2.0","method":"x","id":null}', max_size=MAX).is_notification


@pytest.mark.parametrize(
    "raw",
    ["{", "", "nope", '{"a":NaN}', '{"a":Infinity}', b"\xff\xfe{}", '{"a":1}{"b":2}', "[" * 5000],
)
def test_parse_error(raw):
    err = raises(raw, ErrorCode.PARSE_ERROR, max_size=10_000)
    assert err.message == "Parse error"


def test_deep_nesting_is_parse_error_not_crash():
    raises("[" * 200_000 + "]" * 200_000, ErrorCode.PARSE_ERROR, max_size=1_000_000)


def test_lone_surrogate_str_is_parse_error():
    raises('{"jsonrpc":"2.0","method":"\ud800"}', ErrorCode.PARSE_ERROR)


@pytest.mark.parametrize("as_bytes", [False, True])
def test_size_limit_checked_on_utf8_bytes_before_json(as_bytes):
    body = '{"jsonrpc":"2.0","method":"x","params":{"t":"' + "é" * 20 + '"}}'
    raw = body.encode() if as_bytes else body
    size = len(body.encode())
    assert parse(raw, max_size=size).params["t"] == "é" * 20
    err = raises(raw, ErrorCode.PAYLOAD_TOO_LARGE, max_size=size - 1)
    assert err.data["max_size"] == size - 1
    # too large *and* not JSON: the size check wins
    raises("x" * (MAX + 1), ErrorCode.PAYLOAD_TOO_LARGE)


def test_batch_is_refused():
    err = raises('[{"jsonrpc":"2.0","method":"x","id":1}]', ErrorCode.INVALID_REQUEST)
    assert err.data["reason"] == "Batch requests are not supported"
    raises("[]", ErrorCode.INVALID_REQUEST)


@pytest.mark.parametrize("raw", ['"s"', "1", "null", "true"])
def test_non_object_is_invalid_request(raw):
    raises(raw, ErrorCode.INVALID_REQUEST)


@pytest.mark.parametrize(
    ("raw", "request_id"),
    [
        ('{"method":"x","id":"a"}', "a"),
        ('{"jsonrpc":"1.0","method":"x","id":"a"}', "a"),
        ('{"jsonrpc":2.0,"method":"x","id":3}', 3),
        ('{"jsonrpc":"2.0","id":"a"}', "a"),
        ('{"jsonrpc":"2.0","method":7,"id":"a"}', "a"),
        ('{"jsonrpc":"2.0","method":"","id":"a"}', "a"),
        ('{"jsonrpc":"2.0","method":"x","params":"p","id":"a"}', "a"),
        ('{"jsonrpc":"2.0","method":"x","params":3,"id":9}', 9),
        ('{"jsonrpc":"2.0","method":"x","id":true}', None),
        ('{"jsonrpc":"2.0","method":"x","id":1.5}', None),
        ('{"jsonrpc":"2.0","method":"x","id":{"a":1}}', None),
        ('{"jsonrpc":"2.0","method":"x","id":[1]}', None),
        # NUL in a string id: PostgreSQL's jsonb cannot store it with the request it opens
        ('{"jsonrpc":"2.0","method":"x","id":"a\\u0000b"}', None),
        ('{"jsonrpc":"2.0","method":"x","id":"\\u0000"}', None),
    ],
)
def test_invalid_request_keeps_readable_id(raw, request_id):
    raises(raw, ErrorCode.INVALID_REQUEST, request_id=request_id)


def test_nul_in_id_is_named_and_not_echoed():
    err = raises('{"jsonrpc":"2.0","method":"x","id":"a\\u0000b"}', ErrorCode.INVALID_REQUEST)
    assert "NUL" in err.data["reason"]
    # a document refused for another reason does not echo a NUL id either
    raises('{"jsonrpc":"2.0","method":"x","params":{"v":"\\ud800"},"id":"a\\u0000"}',
           ErrorCode.INVALID_PARAMS, request_id=None)
    # NUL elsewhere in a string id's neighbours is fine: only the id is stored verbatim
    assert parse('{"jsonrpc":"2.0","method":"x","id":"a","params":{"v":"\\u0000"}}').id == "a"


def test_positional_params_are_invalid_params():
    err = raises(
        '{"jsonrpc":"2.0","method":"x","params":[1,2],"id":"q"}',
        ErrorCode.INVALID_PARAMS,
        request_id="q",
    )
    assert err.data["path"] == "params"


def test_builders():
    assert notification("ui.notify", {"a": 1}) == {
        "jsonrpc": "2.0",
        "method": "ui.notify",
        "params": {"a": 1},
    }
    assert request(1, "a2ui.init")["id"] == 1
    assert result("1", {"ok": True}) == {"jsonrpc": "2.0", "id": "1", "result": {"ok": True}}
    assert error_response(None, ErrorCode.PARSE_ERROR) == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32700, "message": "Parse error"},
    }
    assert error_response(2, -32602, "bad", {"path": "params.x"})["error"] == {
        "code": -32602,
        "message": "bad",
        "data": {"path": "params.x"},
    }


def test_encode_is_compact_and_utf8():
    assert encode({"a": [1, 2], "t": "é"}) == '{"a":[1,2],"t":"é"}'
    with pytest.raises(ValueError):
        encode({"x": float("nan")})


def test_round_trip():
    wire = encode(request("r", "ui.confirm", {"request_id": "r1", "title": "T"}))
    msg = parse(wire, max_size=MAX)
    assert (msg.method, msg.id, msg.params["title"]) == ("ui.confirm", "r", "T")


def test_parse_response_result_and_error():
    ok = parse_response('{"jsonrpc":"2.0","id":"1","result":{"session_id":"s"}}')
    assert not ok.is_error and ok.raise_for_error() == {"session_id": "s"}
    bad = parse_response(encode(error_response(4, -32003, data={"component_id": "c"})))
    assert bad.is_error and bad.error.code == -32003 and bad.id == 4
    with pytest.raises(DomainError) as info:
        bad.raise_for_error()
    assert ProtocolError.of(info.value).code == ErrorCode.COMPONENT_NOT_FOUND and info.value.request_id == 4


@pytest.mark.parametrize(
    "raw",
    [
        '{"jsonrpc":"2.0","id":1}',
        '{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"m"}}',
        '{"jsonrpc":"2.0","id":1,"error":"boom"}',
        '{"jsonrpc":"2.0","id":1,"error":{"code":"1","message":"m"}}',
        '{"jsonrpc":"2.0","id":1,"error":{"code":1}}',
        '{"id":1,"result":1}',
    ],
)
def test_parse_response_rejects_malformed(raw):
    with pytest.raises(DomainError) as info:
        parse_response(raw)
    assert ProtocolError.of(info.value).code == ErrorCode.INVALID_REQUEST


def test_parse_incoming_dispatches():
    assert isinstance(parse_incoming('{"jsonrpc":"2.0","method":"m"}'), Message)
    assert parse_incoming('{"jsonrpc":"2.0","id":1,"result":null}').result is None


def test_wrong_raw_type_is_a_programming_error():
    with pytest.raises(TypeError):
        parse({"jsonrpc": "2.0"}, max_size=MAX)  # type: ignore[arg-type]


def test_error_response_is_json():
    assert json.loads(encode(ProtocolError(-32001, request_id="x").to_response()))["id"] == "x"
