"""A frozen agent (its socket open, nothing answering) is shown offline to its people
(a2ui.jsonrpc.liveness): the server pings each agent socket, a socket that answered no ping for
AGENT_PING_TIMEOUT_SECONDS leaves the agent's presence, and its next answer brings it back.
``a2ui.sdk.AgentClient`` answers the pings by itself."""

import asyncio

import pytest

from tests.wsutil import INIT, connect_agent, connect_user, recv, recv_until, send

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def fast_pings(settings):
    settings.A2UI = {**getattr(settings, "A2UI", {}), "AGENT_PING_SECONDS": 0.2,
                     "AGENT_PING_TIMEOUT_SECONDS": 0.5}


def _status(message):
    return message.get("method") == "a2ui.agent_status"


async def _init(person):
    await send(person, INIT)
    return (await recv_until(person, lambda m: m.get("id") == INIT["id"]))["result"]


async def test_an_agent_that_stops_answering_pings_goes_offline_and_comes_back(
        fast_pings, stream_token, agent_key):
    agent = await connect_agent(agent_key)
    person = await connect_user(stream_token)
    assert (await _init(person))["agent_status"] == "online"
    # The agent is frozen: it reads nothing. Within the window its people see it offline.
    ping = await recv_until(agent, lambda m: m.get("method") == "a2ui.ping")
    assert isinstance(ping["id"], str) and ping["id"].startswith("a2ui-ping-")
    offline = await recv_until(person, _status, timeout=3)
    assert offline["params"]["status"] == "offline"
    # It answers a ping (an error reply counts too): online again, at once.
    ping = await recv_until(agent, lambda m: m.get("method") == "a2ui.ping")
    await send(agent, {"jsonrpc": "2.0", "id": ping["id"],
                       "error": {"code": -32601, "message": "Method not found"}})
    online = await recv_until(person, _status, timeout=3)
    assert online["params"]["status"] == "online"
    # The answer was taken, not refused as an invalid request.
    while not await agent.receive_nothing(0.1):
        message = await recv(agent)
        assert "error" not in message, message
    await agent.disconnect()
    await person.disconnect()


async def test_an_agent_that_answers_stays_online(fast_pings, stream_token, agent_key):
    agent = await connect_agent(agent_key)
    person = await connect_user(stream_token)
    assert (await _init(person))["agent_status"] == "online"
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 1.5  # three windows
    while loop.time() < deadline:
        message = await recv(agent, timeout=2)
        if message.get("method") == "a2ui.ping":
            await send(agent, {"jsonrpc": "2.0", "id": message["id"], "result": {}})
    while not await person.receive_nothing(0.1):
        assert not _status(await recv(person))
    await agent.disconnect()
    assert (await recv_until(person, _status))["params"]["status"] == "offline"
    await person.disconnect()


async def test_a_response_that_is_no_ping_answer_is_still_refused(fast_pings, agent_key):
    agent = await connect_agent(agent_key)
    await send(agent, {"jsonrpc": "2.0", "id": "a2ui-pong-1", "result": {}})
    reply = await recv_until(agent, lambda m: "error" in m)
    assert reply["error"]["code"] == -32600
    await agent.disconnect()


class ScriptedSocket:
    """A websockets connection stand-in: yields ``frames``, records what is sent."""

    def __init__(self, frames):
        self.frames = frames
        self.sent = []

    def __aiter__(self):
        return self._frames()

    async def _frames(self):
        for frame in self.frames:
            yield frame

    async def send(self, data):
        self.sent.append(data)


async def test_the_sdk_answers_pings_and_hands_them_to_no_handler():
    import json

    from a2ui.sdk import AgentClient

    client = AgentClient("ws://unused", "a2ui_ak_x")
    seen = []

    async def handler(params):
        seen.append(params)

    client.on("a2ui.ping", handler)
    client._ws = ScriptedSocket([json.dumps({"jsonrpc": "2.0", "id": "a2ui-ping-7",
                                             "method": "a2ui.ping", "params": {}})])
    client.closed = asyncio.Event()
    await client._read()
    assert [json.loads(s) for s in client._ws.sent] == [
        {"jsonrpc": "2.0", "id": "a2ui-ping-7", "result": {}}]
    await asyncio.sleep(0)
    assert seen == []
