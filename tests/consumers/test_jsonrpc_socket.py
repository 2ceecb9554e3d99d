"""Tier 1: the seed-000 exchange through the real ASGI application, in-process."""

import asyncio
import json

import pytest
from channels.db import database_sync_to_async

from a2ui.models import A2UISessionLog
from tests.wsutil import connect_agent, connect_user, init_session, recv, recv_until, send

pytestmark = pytest.mark.django_db(transaction=True)

SEED_INIT = (
    '{"jsonrpc":"2.0","method":"a2ui.init","id":"1","params":{"client_info":{"name":"WebUI",'
    '"version":"1.0"},"capabilities":{"supported_components":["card","table","markdown"]}}}'
)


async def test_section_10_exchange_verbatim(stream_token, agent_key):
    agent = await connect_agent(agent_key)
    user = await connect_user(stream_token)
    await user.send_to(text_data=SEED_INIT)
    reply = await recv(user)
    assert reply["id"] == "1"
    caps = reply["result"]["server_capabilities"]
    assert caps["max_payload_size"] == 1048576
    assert caps["rate_limit_per_minute"] == 60
    sid = reply["result"]["session_id"]

    opened = await recv(agent)
    assert opened["method"] == "session.opened" and opened["params"]["session_id"] == sid

    await send(agent, {"jsonrpc": "2.0", "method": "ui.render", "params": {
        "session_id": sid, "component_id": "c1", "component_type": "card",
        "data": {"title": "Welcome", "description": "Your agent is ready."}}})
    msg = await recv(user)
    assert msg == {"jsonrpc": "2.0", "method": "ui.render", "params": {
        "component_id": "c1", "component_type": "card",
        "data": {"title": "Welcome", "description": "Your agent is ready."},
        "metadata": msg["params"].get("metadata")} if "metadata" in msg["params"] else {
        "component_id": "c1", "component_type": "card",
        "data": {"title": "Welcome", "description": "Your agent is ready."}}}

    await send(agent, {"jsonrpc": "2.0", "id": 7, "method": "ui.request_input", "params": {
        "session_id": sid, "request_id": "r1", "input_type": "text",
        "prompt": "What would you like to search for?"}})
    ask = await recv(user)
    assert ask["method"] == "ui.request_input" and ask["params"]["request_id"] == "r1"
    await user.send_to(text_data='{"jsonrpc":"2.0","method":"user.respond","params":'
                                 '{"request_id":"r1","value":"machine learning datasets"}}')
    answer = await recv_until(agent, lambda m: m.get("id") == 7)
    assert answer["result"] == "machine learning datasets"
    closed = await recv(user)
    assert closed["method"] == "a2ui.request_closed"

    await send(agent, {"jsonrpc": "2.0", "method": "ui.notify", "params": {
        "session_id": sid, "level": "success", "title": "Search Complete",
        "message": "Found 2 results.", "duration_ms": 3000}})
    note = await recv(user)
    assert note["params"]["title"] == "Search Complete"
    assert user.output_queue.empty()  # the notification user.respond got no response
    await user.disconnect()
    await agent.disconnect()


async def test_bad_token_is_rejected_with_auth_error(db):
    comm = await connect_user("not-a-token")
    reply = await recv(comm)
    assert reply["error"]["code"] == -32006 and reply["id"] is None
    out = await comm.receive_output()
    assert out["type"] == "websocket.close" and out["code"] == 4006


async def test_confirm_times_out_with_minus_32004(stream_token, agent_key):
    user = await connect_user(stream_token)
    sid = await init_session(user)
    agent = await connect_agent(agent_key)
    await send(agent, {"jsonrpc": "2.0", "id": "c", "method": "ui.confirm", "params": {
        "session_id": sid, "request_id": "k1", "title": "Sure?", "timeout_seconds": 1}})
    reply = await recv_until(agent, lambda m: m.get("id") == "c", timeout=5)
    assert reply["error"]["code"] == -32004
    assert reply["error"]["data"]["approved"] is False
    await send(user, {"jsonrpc": "2.0", "id": 3, "method": "user.approve",
                      "params": {"request_id": "k1", "approved": True}})
    late = await recv_until(user, lambda m: m.get("id") == 3)
    assert late["error"]["code"] == -32004


async def test_resume_restores_components_and_pending(stream_token, agent_key, user, agent):
    from a2ui import tokens

    comm = await connect_user(stream_token)
    sid = await init_session(comm)
    agent_ws = await connect_agent(agent_key)
    for cid in ("a", "b"):
        await send(agent_ws, {"jsonrpc": "2.0", "id": cid, "method": "ui.render", "params": {
            "session_id": sid, "component_id": cid, "component_type": "markdown",
            "data": {"content": f"# {cid}"}}})
        await recv_until(agent_ws, lambda m, c=cid: m.get("id") == c)
    await send(agent_ws, {"jsonrpc": "2.0", "method": "ui.request_input", "params": {
        "session_id": sid, "request_id": "q", "input_type": "number", "prompt": "How many?"}})
    await recv_until(comm, lambda m: m.get("method") == "ui.request_input")
    await comm.disconnect()

    fresh = await database_sync_to_async(lambda: tokens.issue_stream_token(user, agent).token)()
    again = await connect_user(fresh)
    assert await init_session(again, session_id=sid) == sid
    got = [await recv(again) for _ in range(3)]
    assert [m["method"] for m in got] == ["ui.render", "ui.render", "ui.request_input"]
    assert [m["params"].get("component_id") for m in got[:2]] == ["a", "b"]
    await send(again, {"jsonrpc": "2.0", "method": "user.respond",
                       "params": {"request_id": "q", "value": 3}})
    note = await recv_until(agent_ws, lambda m: m.get("method") == "user.respond")
    assert note["params"]["value"] == 3
    state = await database_sync_to_async(
        lambda: A2UISessionLog.objects.get(pk=sid).state)()
    assert state in ("initialized", "active")


async def test_max_sessions_per_agent(user, other_user, agent):
    from a2ui import tokens

    agent.max_concurrent_sessions = 2
    await database_sync_to_async(agent.save)()
    socks = []
    for person in (user, other_user):  # a person's share of two is one: two people fill it
        tok = await database_sync_to_async(
            lambda p=person: tokens.issue_stream_token(p, agent).token)()
        c = await connect_user(tok)
        await init_session(c)
        socks.append(c)
    tok = await database_sync_to_async(lambda: tokens.issue_stream_token(user, agent).token)()
    c = await connect_user(tok)
    await send(c, {"jsonrpc": "2.0", "id": "x", "method": "a2ui.init",
                   "params": {"client_info": {"name": "x", "version": "1"}, "capabilities": {}}})
    reply = await recv(c)
    assert reply["error"]["code"] == -32007
    assert reply["error"]["data"] == {"limit": 2, "per": "agent"}


async def test_rate_limit_61st_request(stream_token, monkeypatch):
    # The limit counts in fixed one-minute windows: hold the clock the windows read still, so
    # a run that crosses a minute boundary does not start a new window before the 61st request.
    import time as time_module
    import types

    from a2ui.infra import localstate, redisstate

    now = time_module.time()
    frozen = types.SimpleNamespace(time=lambda: now, monotonic=time_module.monotonic)
    monkeypatch.setattr(localstate, "time", frozen)
    monkeypatch.setattr(redisstate, "time", frozen)
    comm = await connect_user(stream_token)
    await init_session(comm)  # counted against the connection, before the session exists
    for i in range(60):
        await send(comm, {"jsonrpc": "2.0", "id": i, "method": "user.cancel",
                          "params": {"task_id": "t"}})
        assert "result" in await recv(comm)
    await send(comm, {"jsonrpc": "2.0", "id": "over", "method": "user.cancel",
                      "params": {"task_id": "t"}})
    reply = await recv(comm)
    assert reply["id"] == "over" and reply["error"]["code"] == -32001
    await asyncio.sleep(0)


async def test_garbage_keeps_socket_usable(stream_token):
    comm = await connect_user(stream_token)
    for raw, code in [("{nope", -32700), ("[1,2]", -32600), ('"x"', -32600),
                      ('{"jsonrpc":"2.0","id":1,"method":"no.such"}', -32601),
                      ('{"jsonrpc":"2.0","id":2,"method":"user.respond","params":{}}', -32000)]:
        await comm.send_to(text_data=raw)
        assert (await recv(comm))["error"]["code"] == code
    await comm.send_to(text_data=json.dumps({"jsonrpc": "2.0", "id": 9, "method": "a2ui.init",
                                             "params": {"client_info": {"name": "a"}}}))
    reply = await recv(comm)
    assert "result" in reply or reply["error"]["code"] == -32602
