"""The one JSON value policy (a2ui.core.content.jsonvalue) and its use by jsonrpc.parse."""

import json

import pytest

from a2ui.core.content import jsonvalue
from a2ui.core.content.methods import validate_params
from a2ui.core.content.sanitize import MAX_DEPTH, clean_tree, sanitize_tree
from a2ui.core.errors import DomainError
from a2ui.rpc.errors import ErrorCode, ProtocolError
from a2ui.rpc.jsonrpc import encode, parse

MAX = jsonvalue.MAX_SAFE_INTEGER


@pytest.mark.parametrize("text", [
    f"{MAX}", f"-{MAX}", "0", "-0", "1.5", "1e308", "-1e308", "1e-400", "12345678901234567.5",
    '"\\ud83d\\ude00"', '"a\\u0000b"', '{"k": "\\u0000"}', '"1234567890123456789"',
    '"\\\\ud800"', '{"a": [1, {"b": null}], "c": true}', '"1e999"',
])
def test_accepted(text):
    assert jsonvalue.loads(text) == json.loads(text)


@pytest.mark.parametrize(("text", "path"), [
    (f"{MAX + 1}", ()),
    (f"-{MAX + 1}", ()),
    ("1" + "0" * 30, ()),
    ("1" + "0" * 5000, ()),  # beyond Python's int-string conversion limit
    ('{"a": [0, 100000000000000000000]}', ("a", 1)),
    ("1e400", ()),
    ("-1e400", ()),
    ("1" + "0" * 400 + ".0", ()),
    ('{"x": {"y": "\\ud800"}}', ("x", "y")),
    ('["\\uDFFF"]', (0,)),
    ('["a\\ud83d"]', (0,)),
    ('{"\\ud800": 1}', ("\ud800",)),
    ('{"k\\u0000": 1}', ("k\x00",)),
])
def test_refused_with_path(text, path):
    with pytest.raises(jsonvalue.JSONValueError) as info:
        jsonvalue.loads(text)
    assert info.value.path == path
    json.dumps({"path": info.value.dotted, "p": info.value.pointer}).encode("utf-8")


@pytest.mark.parametrize("text", ["NaN", "[Infinity]", '{"a": -Infinity}'])
def test_non_finite_literals_are_not_json(text):
    with pytest.raises(ValueError) as info:
        jsonvalue.loads(text)
    assert not isinstance(info.value, jsonvalue.JSONValueError)


def test_raw_surrogate_in_str_refused():
    with pytest.raises(jsonvalue.JSONValueError):
        jsonvalue.loads('["\ud800"]')


def test_paths_are_encodable_and_short():
    err = jsonvalue.JSONValueError("r", ("params", "k\ud800\x00" + "x" * 500, 3, "a/b~c"))
    assert err.dotted.startswith("params.k\ufffd\ufffd") and err.dotted.endswith("\u2026[3].a/b~c")
    assert err.pointer.endswith("/3/a~1b~0c")
    assert len(err.dotted) < 100
    err.dotted.encode("utf-8")


def test_check_for_python_values():
    assert jsonvalue.check({"a": [1, 2.5, None, True, "x"]})
    for bad, path in (({"a": 2**64}, ("a",)), ([float("nan")], (0,)), ({"k": {1: 2}}, ("k",)),
                      ({"a": b"x"}, ("a",)), ({"a\x00": 1}, ("a\x00",))):
        with pytest.raises(jsonvalue.JSONValueError) as info:
            jsonvalue.check(bad)
        assert info.value.path == path


def test_one_depth_constant():
    assert MAX_DEPTH == jsonvalue.MAX_DEPTH
    from a2ui import surfaces
    from a2ui.core.surfaces import dynamic
    assert dynamic.MAX_VALUE_DEPTH == jsonvalue.MAX_DEPTH
    assert surfaces.MAX_JSON_DEPTH == 2 * jsonvalue.MAX_DEPTH


# jsonrpc.parse: refused values are -32602 with the path, and the reply is encodable ---------


def _refused(raw):
    with pytest.raises(DomainError) as info:
        parse(raw)
    exc = info.value
    encode(exc.to_response()).encode("utf-8")  # never unencodable
    return exc


@pytest.mark.parametrize(("raw", "path", "rid"), [
    ('{"jsonrpc":"2.0","id":1,"method":"user.respond","params":{"request_id":"r","value":'
     + str(10**30) + '}}', "params.value", 1),
    ('{"jsonrpc":"2.0","id":"i","method":"a2ui.init","params":{"client_info":{"name":"n",'
     '"version":"1","build":' + str(10**20) + '}}}', "params.client_info.build", "i"),
    ('{"jsonrpc":"1.0","id":"\\ud800"}', "id", None),
    ('{"jsonrpc":"2.0","id":' + str(10**20) + ',"method":"x"}', "id", None),
    ('{"jsonrpc":"2.0","id":2,"method":"x\\ud800"}', "method", 2),
    ('{"jsonrpc":"2.0","id":3,"method":"ui.render","params":{"session_id":"\\ud800"}}',
     "params.session_id", 3),
    ('{"jsonrpc":"2.0","id":4,"method":"x","params":{"a":[1e400]}}', "params.a[0]", 4),
    ('{"jsonrpc":"2.0","id":5,"method":"x","params":{"\\ud800":1}}', "params.\ufffd", 5),
    ('{"jsonrpc":"2.0","id":6,"method":"x","params":{"k\\u0000":1}}', "params.k\ufffd", 6),
])
def test_parse_refuses_values_with_path(raw, path, rid):
    exc = _refused(raw)
    assert ProtocolError.of(exc).code == ErrorCode.INVALID_PARAMS
    assert exc.data["path"] == path and exc.data["reason"]
    assert exc.request_id == rid


def test_parse_fast_path_unchanged():
    msg = parse('{"jsonrpc":"2.0","id":1,"method":"m","params":{"n":9007199254740991,'
                '"f":-2.5e-3,"s":"\\u00e9\\ud83d\\ude00","z":"a\\u0000"}}')
    assert msg.params == {"n": MAX, "f": -2.5e-3, "s": "\u00e9\U0001f600", "z": "a\x00"}


# The cleaners (for values that did not come through a parser) follow the same policy ------


@pytest.mark.parametrize("bad", [2**53, -(2**64), float("inf"), float("nan")])
def test_cleaners_refuse_numbers(bad):
    for clean in (sanitize_tree, clean_tree):
        with pytest.raises(DomainError) as info:
            clean({"a": [bad]}, path="params")
        assert info.value.data["path"] == "params.a[0]"
    with pytest.raises(DomainError):
        validate_params("user.respond", {"request_id": "r", "value": bad})


def test_find_nul_names_the_first_string_holding_nul():
    assert jsonvalue.find_nul({"a": ["x", {"b": "ok"}], "c": "fine"}) is None
    assert jsonvalue.find_nul({"a": ["x", {"b": "o\x00k"}], "c": "\x00"}) == ("a", 1, "b")
    assert jsonvalue.find_nul("\x00") == ()
    deep = "\x00"
    for _ in range(5000):  # iterative: no recursion limit
        deep = [deep]
    assert len(jsonvalue.find_nul(deep)) == 5000
