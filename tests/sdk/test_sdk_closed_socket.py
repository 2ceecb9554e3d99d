"""The SDK on a socket that closed: every call and notification raises ConnectionError (which
an agent catches), never websockets' own ConnectionClosedOK; the demo agent, when its socket
goes, cancels and awaits its session walkthroughs, so none fails unobserved ("Task exception
was never retrieved")."""

import asyncio

import pytest
from websockets.exceptions import ConnectionClosedOK
from websockets.frames import Close

from a2ui.demo import DemoAgent
from a2ui.sdk import AgentClient


class ClosedSocket:
    async def send(self, data):
        raise ConnectionClosedOK(Close(1000, ""), Close(1000, ""), True)


def _client():
    client = AgentClient("ws://unused", "a2ui_ak_x")
    client._ws = ClosedSocket()
    return client


async def test_calls_and_notifications_on_a_closed_socket_raise_connection_error():
    client = _client()
    with pytest.raises(ConnectionError):
        await client.render("s", "card", {"title": "t"})
    with pytest.raises(ConnectionError):
        await client.notify("ui.toast", {"session_id": "s", "title": "t"})
    assert client._waiting == {}  # the request that could not be sent waits for nothing


async def test_the_demo_agent_stops_its_walkthroughs_when_its_socket_goes():
    agent = DemoAgent(_client())
    await agent.on_session({"session_id": "s"})
    (task,) = agent.running.values()
    await asyncio.sleep(0)  # the walkthrough's first push meets the closed socket
    assert task.done()
    assert task.exception() is None  # ended quietly: nothing for asyncio to report later
    await agent.on_session({"session_id": "t"})
    waiting = agent.running["t"]
    await agent.stop_walkthroughs()
    assert agent.running == {} and waiting.done()
