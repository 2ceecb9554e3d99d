"""Form submissions, ui.update operations, TTLs and unknown components on the user socket."""

import pytest

from tests.wsutil import (
    agent_and_person,
    recv,
    recv_until,
    send,
)

pytestmark = pytest.mark.django_db(transaction=True)


_pair = agent_and_person


async def _call(agent, rpc_id, method, **params):
    await send(agent, {"jsonrpc": "2.0", "id": rpc_id, "method": method, "params": params})
    return await recv_until(agent, lambda m: m.get("id") == rpc_id)


async def test_form_submit_reaches_agent(stream_token, agent_key):
    agent, user, sid = await _pair(stream_token, agent_key)
    reply = await _call(agent, 1, "ui.render", session_id=sid, component_id="f1",
                        component_type="form",
                        data={"fields": [{"name": "q", "type": "text", "label": "Q"}]})
    assert reply["result"]["delivered"] is True
    await recv(user)
    await send(user, {"jsonrpc": "2.0", "id": 5, "method": "user.respond",
                      "params": {"request_id": "f1", "value": {"q": "cats"}}})
    assert (await recv(user))["result"] == {"ok": True}
    note = await recv_until(agent, lambda m: m.get("method") == "user.respond")
    assert note["params"]["component_id"] == "f1" and note["params"]["value"] == {"q": "cats"}


async def test_update_operations_and_unknown_component(stream_token, agent_key):
    agent, user, sid = await _pair(stream_token, agent_key)
    await _call(agent, 1, "ui.render", session_id=sid, component_id="t", component_type="table",
                data={"headers": [{"key": "n", "label": "N"}], "rows": [{"n": 1}]})
    await recv(user)
    for rpc_id, op, data in [(2, "append", {"rows": [{"n": 2}]}),
                             (3, "merge", {"caption": "<b>x</b>"}),
                             (4, "replace", {"headers": [{"key": "n", "label": "M"}],
                                             "rows": []})]:
        reply = await _call(agent, rpc_id, "ui.update", session_id=sid, component_id="t",
                            operation=op, data=data)
        assert "result" in reply, reply
        pushed = await recv(user)
        assert pushed["method"] == "ui.update" and pushed["params"]["operation"] == op
    missing = await _call(agent, 5, "ui.update", session_id=sid, component_id="nope",
                          operation="merge", data={})
    assert missing["error"]["code"] == -32003
    bad = await _call(agent, 6, "ui.update", session_id=sid, component_id="t",
                      operation="append", data={"headers": "x"})
    assert bad["error"]["code"] == -32602


async def test_agent_errors(stream_token, agent_key):
    agent, user, sid = await _pair(stream_token, agent_key)
    cases = [
        ("ui.render", {"session_id": "00000000-0000-0000-0000-000000000000",
                       "component_id": "a", "component_type": "card", "data": {"title": "t"}}, -32000),
        ("ui.render", {"session_id": sid, "component_id": "a", "component_type": "widget",
                       "data": {}}, -32602),
        ("ui.navigate", {"session_id": sid, "url": "javascript:alert(1)"}, -32602),
        ("ui.render", {"component_id": "a", "component_type": "card", "data": {}}, -32602),
        ("user.respond", {"session_id": sid, "request_id": "x", "value": 1}, -32601),
    ]
    for i, (method, params, code) in enumerate(cases):
        reply = await _call(agent, 100 + i, method, **params)
        assert reply["error"]["code"] == code, (method, reply)
    big = "x" * (1024 * 1024 + 1)
    await agent.send_to(text_data=big)
    assert (await recv(agent))["error"]["code"] == -32002
    reply = await _call(agent, 200, "a2ui.sessions")
    assert [s["session_id"] for s in reply["result"]["sessions"]] == [sid]


async def test_xss_is_sanitized_before_the_user_sees_it(stream_token, agent_key):
    agent, user, sid = await _pair(stream_token, agent_key)
    await _call(agent, 1, "ui.render", session_id=sid, component_id="x", component_type="card",
                data={"title": "<script>alert(1)</script>Hi",
                      "description": '<img src=x onerror="alert(1)">ok',
                      "sections": [{"label": "<svg onload=alert(1)>", "value": "v"}]})
    pushed = await recv(user)
    text = str(pushed["params"]["data"])
    assert "<script" not in text and "onerror" not in text and "<svg" not in text
    assert pushed["params"]["data"]["title"] == "Hi"
