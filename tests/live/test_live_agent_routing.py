"""Tier 2: an agent that runs twice (two processes, two Daphne servers) shows the person one
prompt: each session's events reach one socket of the agent (a2ui.sessions.agentroute).

The holder is recorded in Redis, so it holds across processes; a clean close hands the session
to the other socket at once, a killed process once its liveness lapses (``LIVE_TTL``).
"""

import asyncio
import json

import pytest

from a2ui.sdk import AgentClient
from a2ui.sessions import agentroute
from tests.live.client import Client, init_session, open_agent, open_user

pytestmark = pytest.mark.django_db(transaction=True)


def rpc(method, params, rpc_id):
    return {"jsonrpc": "2.0", "id": rpc_id, "method": method, "params": params}


async def drain(client, quiet=1.0):
    """The messages that arrive until ``quiet`` seconds pass without one."""
    out = []
    while True:
        try:
            out.append(await client.recv(timeout=quiet))
        except TimeoutError:
            return out


def cancels(messages, sid):
    return [m for m in messages
            if m.get("method") == "user.cancel" and m["params"]["session_id"] == sid]


def is_cancel(sid):
    return lambda m: m.get("method") == "user.cancel" and m["params"]["session_id"] == sid


async def cancel(person, task_id, rpc_id):
    await person.send(rpc("user.cancel", {"task_id": task_id}, rpc_id))
    reply = await person.recv_until(lambda m: m.get("id") == rpc_id)
    assert reply["result"] == {"ok": True}


async def test_an_agent_running_twice_greets_the_person_once(daphne_server, stream_token,
                                                             agent_key):
    a, b = daphne_server(), daphne_server()
    greeted = []

    def agent_process(server, name):
        client = AgentClient(f"{server.ws_url}/ws/v4/a2ui/agent", agent_key)

        async def welcome(params):
            greeted.append((name, params["session_id"]))
            await client.render(params["session_id"], "card", {"title": "Welcome"},
                                component_id="welcome")
            await client.request_input(params["session_id"], "text", "Your name?",
                                       request_id="ask-name")

        client.on("session.opened", welcome)
        return client

    first, second = agent_process(a, "first"), agent_process(b, "second")
    await first.connect()
    await second.connect()
    observer = await Client.open(f"{a.ws_url}/ws/v4/a2ui/agent?events=all",
                                 headers={"Authorization": f"Bearer {agent_key}"})
    person = await open_user(b, stream_token)
    sid = await init_session(person)
    seen = await drain(person, quiet=2.0)
    renders = [m for m in seen if m.get("method") == "ui.render"]
    prompts = [m for m in seen if m.get("method") == "ui.request_input"]
    assert len(renders) == 1 and len(prompts) == 1, seen
    # (Other test runs on the same Redis server may add sessions of theirs: Redis PUBLISH
    # ignores database numbers, so only this session's greetings count.)
    assert [who for who, opened in greeted if opened == sid] in (["first"], ["second"])
    # The observer saw the session open, and holds nothing.
    await observer.recv_until(lambda m: m.get("method") == "session.opened"
                              and m["params"]["session_id"] == sid)
    for client in (first, second):
        await client.close()
    await observer.close()
    await person.close()


async def test_the_session_moves_when_its_socket_closes_or_its_process_dies(
        daphne_server, stream_token, agent_key):
    a, b, c = daphne_server(), daphne_server(), daphne_server()
    holder = await open_agent(a, agent_key)
    person = await open_user(c, stream_token)
    sid = await init_session(person)
    await holder.recv_until(lambda m: m.get("method") == "session.opened"
                            and m["params"]["session_id"] == sid)
    standby = await open_agent(b, agent_key)
    await cancel(person, "t1", "c1")
    note = await holder.recv_until(is_cancel(sid))
    assert note["params"] == {"session_id": sid, "task_id": "t1"}
    assert cancels(await drain(standby), sid) == []

    # The holder's process dies without closing anything: the standby takes the session once
    # the holder's liveness lapses; until then events wait for nobody (documented).
    a.kill()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + agentroute.LIVE_TTL + 10
    got = []
    n = 0
    while not got and loop.time() < deadline:
        n += 1
        await cancel(person, f"k{n}", f"k{n}")
        got = cancels(await drain(standby, quiet=0.5), sid)
    assert got, "the standby never took the session over"
    assert len(got) == 1

    # It holds the session now; a third socket gets nothing, until the standby closes cleanly.
    third = await open_agent(c, agent_key)
    await cancel(person, "t2", "c2")
    on_standby, on_third = await asyncio.gather(drain(standby, quiet=2.0),
                                                drain(third, quiet=2.0))
    assert [m["params"]["task_id"] for m in cancels(on_standby, sid)] == ["t2"], (
        cancels(on_standby, sid), cancels(on_third, sid))
    assert cancels(on_third, sid) == []
    await standby.close()
    await asyncio.sleep(0.5)  # the close reaches its server
    await cancel(person, "t3", "c3")
    note = await third.recv_until(is_cancel(sid))
    assert note["params"] == {"session_id": sid, "task_id": "t3"}
    await third.close()
    await person.close()


def test_sdk_rejects_a_bad_events_mode():
    with pytest.raises(ValueError):
        AgentClient("ws://127.0.0.1:1/ws/v4/a2ui/agent", "k", events="some")
    client = AgentClient("ws://127.0.0.1:1/ws/v4/a2ui/agent", "k", events="all")
    assert client.url.endswith("?events=all")
    assert json.dumps(client.url)
