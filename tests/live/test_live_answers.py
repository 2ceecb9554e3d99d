"""Tier 2: nothing a person answers is lost when the agent's Daphne process dies.

The agent's process is killed (SIGKILL) while its requests wait; the person answers one of them
on another process and is told "ok"; the agent reconnects to a third process, takes over what
waits for it with ``a2ui.pending`` (through the SDK) and gets the answer given while it was
away, then the answer to the request still open, each once. Also: a REST-only agent's session
gets its counters written (the metrics flusher under a real server).
"""

import asyncio
import time

import pytest
from channels.db import database_sync_to_async

from a2ui.models import A2UISessionLog
from a2ui.sdk import AgentClient
from tests.live.client import ahttp, init_session, open_agent, open_user

pytestmark = pytest.mark.django_db(transaction=True)


def rpc(method, params, rpc_id=None):
    msg = {"jsonrpc": "2.0", "method": method, "params": params}
    if rpc_id is not None:
        msg["id"] = rpc_id
    return msg


async def test_answer_reaches_the_agent_after_its_process_is_killed(daphne_server, stream_token,
                                                                    agent_key):
    a, b = daphne_server(), daphne_server()
    bot = await open_agent(a, agent_key)
    person = await open_user(b, stream_token)
    sid = await init_session(person)
    await bot.recv_until(lambda m: m.get("method") == "session.opened")
    for rid, prompt in (("first", "Your name?"), ("second", "Your city?")):
        await bot.send(rpc("ui.request_input", {
            "session_id": sid, "request_id": rid, "input_type": "text", "prompt": prompt,
            "timeout_seconds": 300}, rpc_id=f"ask-{rid}"))
        await person.recv_until(lambda m, r=rid: m.get("params", {}).get("request_id") == r)

    a.kill()  # SIGKILL while both requests wait: no close frame, no disconnect handler
    await person.send(rpc("user.respond", {"request_id": "first", "value": "Ada"}, "ans-1"))
    reply = await person.recv_until(lambda m: m.get("id") == "ans-1")
    assert reply["result"] == {"ok": True}

    # What waits, as a REST agent sees it (read-only).
    status, body = await ahttp("GET", f"{b.url}/api/v4/requests?session_id={sid}",
                               headers={"Authorization": f"Bearer {agent_key}"})
    assert status == 200, body
    assert {(i["request_id"], i["status"]) for i in body["requests"]} == {
        ("first", "answered"), ("second", "pending")}

    c = daphne_server()  # the agent comes back on a new process
    async with AgentClient(f"{c.ws_url}/ws/v4/a2ui/agent", agent_key) as agent:
        items = {i["request_id"]: i for i in await agent.pending()}
        assert items["first"]["status"] == "answered" and items["first"]["answer"] == "Ada"
        assert items["second"]["status"] == "pending"
        assert items["second"]["params"]["prompt"] == "Your city?"

        await person.send(rpc("user.respond", {"request_id": "second", "value": "Paris"},
                              "ans-2"))
        reply = await person.recv_until(lambda m: m.get("id") == "ans-2")
        assert reply["result"] == {"ok": True}
        assert await asyncio.wait_for(agent.wait_request(sid, "second"), 10) == "Paris"
        assert await agent.pending() == []  # each answer once

    status, body = await ahttp("GET", f"{b.url}/api/v4/requests",
                               headers={"Authorization": f"Bearer {agent_key}"})
    assert status == 200 and body == {"requests": []}, body
    await person.close()


async def test_two_processes_racing_for_a_lost_answer_get_it_once(daphne_server, stream_token,
                                                                  agent_key):
    a, b = daphne_server(), daphne_server()
    bot = await open_agent(a, agent_key)
    person = await open_user(b, stream_token)
    sid = await init_session(person)
    await bot.recv_until(lambda m: m.get("method") == "session.opened")
    await bot.send(rpc("ui.confirm", {"session_id": sid, "request_id": "go", "title": "Go?",
                                      "timeout_seconds": 300}, rpc_id="ask"))
    await person.recv_until(lambda m: m.get("method") == "ui.confirm")
    a.kill()
    await person.send(rpc("user.approve", {"request_id": "go", "approved": True}, "ans"))
    assert (await person.recv_until(lambda m: m.get("id") == "ans"))["result"] == {"ok": True}

    c = daphne_server()
    on_b, on_c = await open_agent(b, agent_key), await open_agent(c, agent_key)
    await on_b.send(rpc("a2ui.pending", {}, "p"))
    await on_c.send(rpc("a2ui.pending", {}, "p"))
    got = [(await sock.recv_until(lambda m: m.get("id") == "p"))["result"]["requests"]
           for sock in (on_b, on_c)]
    assert sorted(len(g) for g in got) == [0, 1], got
    [item] = got[0] or got[1]
    assert item["answer"] == {"approved": True, "reason": ""}
    for sock in (on_b, on_c, person):
        await sock.close()


async def test_rest_only_agent_session_gets_its_counters(daphne_server, stream_token, agent_key):
    server = daphne_server()
    person = await open_user(server, stream_token)
    sid = await init_session(person)
    get = database_sync_to_async(lambda: A2UISessionLog.objects.get(pk=sid))
    # Let the socket's counts be written and the process's buffer go idle: the REST view is
    # then the first to count again, as for an agent that only uses REST.
    deadline = time.monotonic() + 15
    while (await get()).message_count < 1 and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    await asyncio.sleep(3)
    before = await get()
    for n in range(3):
        status, body = await ahttp(
            "POST", f"{server.url}/api/v4/sessions/{sid}/messages",
            [{"jsonrpc": "2.0", "method": "ui.notify",
              "params": {"level": "info", "title": f"n{n}"}}],
            headers={"Authorization": f"Bearer {agent_key}"})
        assert status == 202, body
    deadline = time.monotonic() + 15
    row = await get()
    while row.message_count < before.message_count + 3 and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
        row = await get()
    assert row.message_count >= before.message_count + 3
    assert row.last_activity > before.last_activity
    assert row.state == "active"
    assert "CurrentThreadExecutor" not in server.log()
    assert "metrics flush failed" not in server.log()
    await person.close()
