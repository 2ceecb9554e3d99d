"""-32603: an unexpected failure answers with no internal detail and the socket lives on."""

import json

import pytest

from a2ui.push import answers
from a2ui.push import entry as pushentry
from tests.wsutil import connect_agent, connect_user, init_session, recv, recv_until, send

pytestmark = pytest.mark.django_db(transaction=True)


async def test_agent_socket_internal_error_leaks_nothing(stream_token, agent_key, monkeypatch):
    agent = await connect_agent(agent_key)
    user = await connect_user(stream_token)
    sid = await init_session(user)
    await recv_until(agent, lambda m: m.get("method") == "session.opened")
    real = pushentry.apush

    async def broken(*args, **kwargs):
        raise RuntimeError("password=hunter2 at /srv/secret.py")

    monkeypatch.setattr(pushentry, "apush", broken)
    await send(agent, {"jsonrpc": "2.0", "id": 1, "method": "ui.notify",
                       "params": {"session_id": sid, "level": "info", "title": "x"}})
    reply = await recv_until(agent, lambda m: m.get("id") == 1)
    assert reply["error"] == {"code": -32603, "message": "Internal error"}
    assert "hunter2" not in json.dumps(reply)
    monkeypatch.setattr(pushentry, "apush", real)
    await send(agent, {"jsonrpc": "2.0", "id": 2, "method": "ui.notify",
                       "params": {"session_id": sid, "level": "info", "title": "y"}})
    assert "result" in await recv_until(agent, lambda m: m.get("id") == 2)


async def test_user_socket_internal_error_leaks_nothing(stream_token, monkeypatch):
    user = await connect_user(stream_token)
    await init_session(user)

    async def broken(*args, **kwargs):
        raise KeyError("internal table a2ui_secret")

    monkeypatch.setattr(answers, "arespond", broken)
    await send(user, {"jsonrpc": "2.0", "id": 9, "method": "user.respond",
                      "params": {"request_id": "r1", "value": 1}})
    reply = await recv(user)
    assert reply == {"jsonrpc": "2.0", "id": 9,
                     "error": {"code": -32603, "message": "Internal error"}}
    await send(user, {"jsonrpc": "2.0", "id": 10, "method": "user.cancel",
                      "params": {"task_id": "t"}})
    assert (await recv(user))["result"] == {"ok": True}
