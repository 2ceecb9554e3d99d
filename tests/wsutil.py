"""Helpers for in-process WebSocket tests."""

import json

from channels.testing import WebsocketCommunicator

from a2ui_project.asgi import application

INIT = {
    "jsonrpc": "2.0",
    "method": "a2ui.init",
    "id": "1",
    "params": {
        "client_info": {"name": "WebUI", "version": "1.0"},
        "capabilities": {"supported_components": ["card", "table", "markdown"]},
    },
}


def publishes_through_send_group(monkeypatch):
    """Have the push path's publishes (``groups.send_group_soon``, not waited for with Redis)
    go through ``groups.send_group``, awaited, so a spy on it or on the layer's
    ``group_send`` sees every session event with either channel layer."""
    from a2ui.infra import groups

    async def soon(group, event, lost):
        await groups.send_group(group, event)

    monkeypatch.setattr(groups, "send_group_soon", soon)


async def connect_user(token, path="/ws/v4/a2ui"):
    comm = WebsocketCommunicator(application, f"{path}?token={token}")
    connected, _ = await comm.connect()
    assert connected
    return comm


async def connect_agent(key, path="/ws/v4/a2ui/agent"):
    headers = [(b"authorization", f"Bearer {key}".encode())] if key else []
    comm = WebsocketCommunicator(application, path, headers=headers)
    connected, _ = await comm.connect()
    assert connected
    return comm


async def send(comm, obj):
    await comm.send_to(text_data=json.dumps(obj))


async def recv(comm, timeout=3):
    return json.loads(await comm.receive_from(timeout=timeout))


async def init_session(comm, **params):
    msg = json.loads(json.dumps(INIT))
    msg["params"].update(params)
    await send(comm, msg)
    reply = await recv(comm)
    assert "result" in reply, reply
    return reply["result"]["session_id"]


async def agent_and_person(stream_token, agent_key):
    """``(agent socket, person socket, session id)``: the agent connected first, then the
    person's session opened, and the agent told of it (``session.opened``)."""
    agent = await connect_agent(agent_key)
    person = await connect_user(stream_token)
    sid = await init_session(person)
    await recv_until(agent, lambda m: m.get("method") == "session.opened")
    return agent, person, sid


async def recv_until(comm, pred, timeout=3, limit=50):
    for _ in range(limit):
        msg = await recv(comm, timeout)
        if pred(msg):
            return msg
    raise AssertionError("message not received")
