"""a2ui.agui1.inputs, sans-I/O: which messages of a RunAgentInput may be new to the agent."""

import json

import pytest

from a2ui.agui1 import inputs


def parse(messages, max_new=50):
    body = json.dumps({"threadId": "t", "runId": "r", "messages": messages})
    return inputs.parse(body.encode(), 1 << 20, max_new)


def m(mid, role="user", **extra):
    out = {"id": mid, "role": role, "content": mid, **extra}
    if role == "tool":
        out["toolCallId"] = "tc"
    return out


def test_the_candidates_are_the_trailing_user_and_tool_messages_each_id_once_the_last_ones():
    run = parse([m("u0"), m("a0", "assistant"), m("u1"), m("t1", "tool"), m("u1"), m("u2")],
                max_new=2)
    assert run.candidate_ids() == ["t1", "u2"] and run.dropped == 1
    assert [x.id for x in run.new_messages] == ["t1", "u2"]
    run.forget_seen({"t1", "u0"})
    assert [x.id for x in run.new_messages] == ["u2"]
    assert run.notice()["messages"] == [m("u2")]


def test_no_trailing_user_message_no_candidates():
    run = parse([m("u0"), m("a0", "assistant")])
    assert run.candidates == [] and run.dropped == 0


@pytest.mark.parametrize("where", [0, 2])
def test_a_message_id_over_200_characters_is_refused(where):
    messages = [m("a"), m("b", "assistant"), m("c")]
    messages[where]["id"] = "x" * 201
    with pytest.raises(inputs.InputError) as info:
        parse(messages)
    assert info.value.status == 400 and info.value.field == f"messages.{where}.id"
    messages[where]["id"] = "x" * 200
    assert parse(messages)
