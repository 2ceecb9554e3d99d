"""Caps on sockets, SSE streams and AG-UI runs (a2ui.infra.caps; issue 23): one person's
session sockets (every socket protocol in one count), an agent key's agent sockets, a
person's v0.9 SSE streams and AG-UI 1.0 runs in flight, and everything from one address.
A refusal is the protocol's rate-limit error (seed 000 -32001, v0.9 RATE_LIMITED, an AG-UI
ERROR event) and close code 4001, or HTTP 429 with a JSON body; nothing is
opened; another credential still gets in; a place frees when its socket or stream ends.
"""

import json

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.test import AsyncClient

from a2ui import tokens
from a2ui.models import A2UISessionLog, AgentRun
from a2ui_project.asgi import application
from tests.wsutil import init_session, recv

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def capped(settings):
    settings.A2UI = {**getattr(settings, "A2UI", {}), "CAP_SOCKETS_PER_PERSON": 2,
                     "CAP_AGENT_SOCKETS_PER_AGENT_KEY": 2, "CAP_STREAMS_PER_PERSON": 1,
                     "CAP_RUNS_PER_PERSON": 1, "CAP_PER_ADDRESS": 3}


async def socket(path, headers=(), address="10.1.2.3"):
    comm = WebsocketCommunicator(application, path, headers=list(headers))
    comm.scope["client"] = (address, 40000)
    connected, _ = await comm.connect()
    assert connected
    return comm


async def refused_close(comm):
    output = await comm.receive_output(3)
    while output["type"] == "websocket.send":
        output = await comm.receive_output(3)
    assert output["type"] == "websocket.close", output
    return output["code"]


def issue(user, agent, kind="stream_a2ui"):
    return database_sync_to_async(lambda: tokens.issue_stream_token(user, agent, kind).token)()


async def test_a_persons_sockets_meet_the_cap_across_protocols(capped, user, other_user,
                                                               agent, stream_token):
    first = await socket(f"/ws/v4/a2ui?token={stream_token}")
    await init_session(first)
    agui = await issue(user, agent, "stream_agui")
    second = await socket(f"/ws/agui?token={agui}")
    assert (await recv(second))["event"]["status"] == "CONNECTED"
    sessions = await database_sync_to_async(A2UISessionLog.objects.count)()
    # Third, on each protocol: refused in the protocol's words, 4001, no session opened.
    comm = await socket(f"/ws/v4/a2ui?token={stream_token}")
    error = await recv(comm)
    assert error["error"]["code"] == -32001
    assert error["error"]["data"] == {"reason": "cap_reached", "kind": "socket",
                                      "per": "person", "limit": 2}
    assert await refused_close(comm) == 4001
    comm = await socket(f"/ws/v09/a2ui?token={stream_token}")
    frame = await recv(comm)
    assert frame["error"]["code"] == "RATE_LIMITED" and frame["error"]["rpcCode"] == -32001
    assert await refused_close(comm) == 4001
    comm = await socket(f"/ws/agui?token={agui}")
    event = (await recv(comm))["event"]
    assert event["type"] == "ERROR" and event["details"]["per"] == "person", event
    assert await refused_close(comm) == 4001
    assert await database_sync_to_async(A2UISessionLog.objects.count)() == sessions
    # Another person from another address still gets in.
    other = await issue(other_user, agent)
    third = await socket(f"/ws/v4/a2ui?token={other}", address="10.9.9.9")
    await init_session(third)
    # A socket that closes frees its place.
    await first.disconnect()
    again = await socket(f"/ws/v4/a2ui?token={stream_token}")
    await init_session(again)
    for comm in (second, third, again):
        await comm.disconnect()


async def test_the_address_cap(capped, user, other_user, agent, stream_token):
    comms = [await socket(f"/ws/v4/a2ui?token={stream_token}")]
    other = await issue(other_user, agent)
    comms += [await socket(f"/ws/v4/a2ui?token={other}") for _ in range(2)]
    comm = await socket(f"/ws/v4/a2ui?token={stream_token}")  # the person has one place
    error = await recv(comm)
    assert error["error"]["data"]["per"] == "address" and error["error"]["data"]["limit"] == 3
    assert await refused_close(comm) == 4001
    for comm in comms:
        await comm.disconnect()


async def test_an_agent_keys_sockets(capped, agent_key):
    headers = [(b"authorization", f"Bearer {agent_key}".encode())]
    comms = [await socket("/ws/v4/a2ui/agent", headers) for _ in range(2)]
    comm = await socket("/ws/v4/a2ui/agent", headers)
    error = await recv(comm)
    assert error["error"]["code"] == -32001
    assert error["error"]["data"] == {"reason": "cap_reached", "kind": "agent_socket",
                                      "per": "agent", "limit": 2}
    assert await refused_close(comm) == 4001
    await comms[0].disconnect()
    comms[0] = await socket("/ws/v4/a2ui/agent", headers)
    await comms[0].send_to(text_data=json.dumps({"jsonrpc": "2.0", "id": 1,
                                                 "method": "a2ui.sessions"}))
    assert "result" in await recv(comms[0])
    for comm in comms:
        await comm.disconnect()


async def test_a_persons_sse_streams(capped, user, agent, stream_token):
    import asyncio

    from tests.surfaces.helpers import v09_user
    from tests.surfaces.test_sse import _asgi_stream, url

    person, sid = await v09_user(stream_token)

    async def opened():
        task, sent, hang_up = await _asgi_stream(url(sid, stream_token))
        async with asyncio.timeout(5):
            while not any(b"a2ui-reset" in m.get("body", b"") for m in sent):
                await asyncio.sleep(0.01)
        assert sent[0]["status"] == 200
        return task, hang_up

    task, hang_up = await opened()
    refused = await AsyncClient().get(url(sid, stream_token))
    assert refused.status_code == 429 and refused["Content-Type"] == "application/json"
    body = refused.json()["error"]
    assert body["code"] == -32001 and body["data"]["kind"] == "stream", body
    hang_up()  # the client goes: its place is free
    async with asyncio.timeout(5):
        await task
    task, hang_up = await opened()
    hang_up()
    await task
    await person.disconnect()


def test_a_persons_runs_in_flight(capped, user, agent):
    from django.test import Client

    from tests.agui1.test_agui1_view import body, first_chunks, post

    raw = tokens.issue_stream_token(user, agent, "stream_agui").token
    client = Client()
    auth = {"HTTP_AUTHORIZATION": f"Bearer {raw}"}
    running = post(client, **auth)
    assert running.status_code == 200, running.content
    refused = post(client, body(threadId="t2", runId="r2"), **auth)
    assert refused.status_code == 429 and refused["Content-Type"] == "application/json"
    assert refused.json()["error"]["code"] == "rate_limited"
    assert AgentRun.objects.count() == 1  # the refused run stored nothing
    first_chunks(running, 1)  # read, then the client goes: the run's place is free
    again = post(client, body(threadId="t3", runId="r3"), **auth)
    assert again.status_code == 200, again.content
    first_chunks(again, 1)
