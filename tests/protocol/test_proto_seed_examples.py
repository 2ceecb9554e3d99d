"""Seed 000's own examples (§4, §5, §10), extracted verbatim into seed000_examples.json.

§4 uses ``"a | b | c"`` placeholders for enums; every alternative is expanded and must
validate. The §4 ``ui.update`` block contains ``{ ... }`` and is not JSON at all.
"""

import itertools
import json
import re
from pathlib import Path

import pytest

from a2ui.core.content.components import COMPONENT_TYPES, validate_component
from a2ui.core.content.methods import validate_params
from a2ui.core.errors import DomainError
from a2ui.rpc.errors import ErrorCode, ProtocolError
from a2ui.rpc.jsonrpc import parse, parse_incoming, parse_response

EXAMPLES = json.loads((Path(__file__).parent / "seed000_examples.json").read_text("utf-8"))
PLACEHOLDER = re.compile(r'"([a-z_]+(?: \| [a-z_]+)+)"')


def expand(text):
    """Every combination of the ``"a | b"`` placeholder alternatives in ``text``."""
    slots = PLACEHOLDER.findall(text)
    choices = [slot.split(" | ") for slot in slots]
    for combo in itertools.product(*choices):
        out = text
        for slot, pick in zip(slots, combo, strict=True):
            out = out.replace(f'"{slot}"', f'"{pick}"', 1)
        yield out


SECTION4 = [e for e in EXAMPLES["section4"] if '"result"' not in e["text"]]


@pytest.mark.parametrize("example", SECTION4, ids=[e["heading"] for e in SECTION4])
def test_section4_requests_parse_and_validate(example):
    text = example["text"]
    if "{ ... }" in text:  # the ui.update block: pseudo-JSON in the seed
        with pytest.raises(DomainError) as info:
            parse(text)
        assert ProtocolError.of(info.value).code == ErrorCode.PARSE_ERROR
        text = text.replace("{ ... }", '{"title": "x"}')
    msg = parse(text)
    assert msg.method == example["heading"]
    for variant in expand(text):
        msg = parse(variant)
        if msg.method == "ui.render" and msg.params["component_type"] != "card":
            continue  # the generic data {title, content} is a card; §5 covers the others
        cleaned = validate_params(msg.method, msg.params)
        assert isinstance(cleaned, dict)


def test_section4_init_response_parses():
    (response,) = [e for e in EXAMPLES["section4"] if '"result"' in e["text"]]
    parsed = parse_response(response["text"])
    assert parsed.id == "1"
    assert parsed.result["server_capabilities"]["max_payload_size"] == 1048576
    assert parsed.result["server_capabilities"]["supported_components"] == list(COMPONENT_TYPES)


@pytest.mark.parametrize("component_type", list(EXAMPLES["section5"]))
def test_section5_components_validate(component_type):
    for variant in expand(EXAMPLES["section5"][component_type]):
        data = json.loads(variant)
        cleaned = validate_component(component_type, data)
        render = {"component_id": "c1", "component_type": component_type, "data": data}
        assert validate_params("ui.render", render)["data"] == cleaned


def test_section5_covers_every_type():
    assert tuple(EXAMPLES["section5"]) == COMPONENT_TYPES


@pytest.mark.parametrize("line", EXAMPLES["section10"])
def test_section10_wire_examples(line):
    parsed = parse_incoming(line)
    if hasattr(parsed, "method"):
        cleaned = validate_params(parsed.method, parsed.params)
        if parsed.method != "a2ui.init":
            # nothing in the wire examples needs sanitizing: values come out unchanged
            assert {k: cleaned[k] for k in parsed.params} == parsed.params
    else:
        assert parsed.result["session_id"] == "550e8400-e29b-41d4-a716-446655440000"


def test_section10_init_is_a_request_and_respond_a_notification():
    init = parse(EXAMPLES["section10"][0])
    assert init.id == "1" and not init.is_notification
    respond = parse(EXAMPLES["section10"][4])
    assert respond.method == "user.respond" and respond.is_notification
