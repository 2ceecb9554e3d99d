"""No frame crashes a consumer: every malformed one gets a JSON-RPC error and the socket lives."""

import json

import pytest

from tests.wsutil import connect_agent, connect_user, init_session, recv, send

pytestmark = [
    pytest.mark.django_db(transaction=True),
    # Hundreds of frames from one session: the rate limit is tested elsewhere.
    pytest.mark.usefixtures("_generous_rate_limit"),
]


@pytest.fixture
def _generous_rate_limit(settings):
    settings.A2UI = {"RATE_LIMIT_PER_MINUTE": 100000}

KNOWN = {-32700, -32600, -32601, -32602, -32000, -32002, -32003}


def _frames(sid):
    def rpc(method, params, rpc_id=1):
        return json.dumps({"jsonrpc": "2.0", "id": rpc_id, "method": method, "params": params})

    weird = [None, 1, "x", [], [1], {"a": {"b": [None]}}, True, 1e308, -1, "\u0000", "💥" * 100]
    frames = [" ", "\x00", "{", "[" * 50000, "{}" * 3, "[]", "null", "1e999",
              '{"jsonrpc":"1.0","id":1,"method":"a"}', '{"jsonrpc":"2.0","id":{},"method":"a"}',
              '{"jsonrpc":"2.0","id":1,"method":5}', '{"jsonrpc":"2.0","id":1,"method":"ui.render",'
              '"params":"x"}']
    for method in ("ui.render", "ui.update", "ui.request_input", "ui.confirm", "ui.progress",
                   "ui.navigate", "ui.notify", "user.respond", "user.approve", "user.cancel",
                   "a2ui.init", "a2ui.v09", "user.consent"):
        for value in weird:
            frames.append(rpc(method, {"session_id": sid, "component_id": value,
                                       "component_type": value, "data": value,
                                       "request_id": value, "value": value, "url": value,
                                       "messages": value, "metadata": value}))
            frames.append(rpc(method, {"session_id": value}))
    return frames


async def _survives(comm, frames, alive):
    for frame in frames:
        await comm.send_to(text_data=frame)
        reply = await recv(comm)
        if "error" in reply:
            assert reply["error"]["code"] in KNOWN | {-32010}, (frame[:200], reply)
            assert "Traceback" not in json.dumps(reply)
    await send(comm, alive)
    assert "result" in await recv(comm)


async def test_user_socket_survives_garbage(stream_token):
    comm = await connect_user(stream_token)
    sid = await init_session(comm)
    await _survives(comm, _frames(sid), {"jsonrpc": "2.0", "id": "ok", "method": "user.cancel",
                                         "params": {"task_id": "t"}})


async def test_agent_socket_survives_garbage(agent_key, stream_token):
    user = await connect_user(stream_token)
    sid = await init_session(user)
    agent = await connect_agent(agent_key)
    told = await recv(agent)  # it is told of the live session first
    assert told["method"] == "session.resumed" and told["params"]["session_id"] == sid
    await _survives(agent, _frames(sid), {"jsonrpc": "2.0", "id": "ok",
                                          "method": "a2ui.sessions", "params": {}})
