"""The SDK with ``reconnect=True`` against a stand-in server (websockets' own, in this process):
it connects again with backoff when its socket closes, sends a waiting question (and a push with
an idempotency key) again as it was, fails the other calls in flight with ConnectionError, makes
calls wait for the next socket, waits for a server that is not up yet, and stops on a refused
key (4006). The live test across a real server restart is tests/live/test_agent_files.py."""

import asyncio
import json
import socket

import pytest
import websockets

from a2ui.sdk import AgentClient


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class StandIn:
    """Each connection runs the next script: ``script(ws, received)``."""

    def __init__(self, *scripts):
        self.scripts = list(scripts)
        self.received = []  # per connection, the messages it got
        self.port = free_port()
        self.server = None

    async def start(self):
        self.server = await websockets.serve(self._serve, "127.0.0.1", self.port)
        return self

    async def _serve(self, ws):
        got = []
        self.received.append(got)
        await self.scripts.pop(0)(ws, got)

    async def stop(self):
        self.server.close()
        await self.server.wait_closed()

    def client(self, **kw):
        return AgentClient(f"ws://127.0.0.1:{self.port}/ws/v4/a2ui/agent", "a2ui_ak_x",
                           reconnect=True, max_backoff=0.2, **kw)


async def read(ws, got, n=1):
    for _ in range(n):
        got.append(json.loads(await ws.recv()))
    return got[-1]


async def answer_all(ws, got):
    async for raw in ws:
        msg = json.loads(raw)
        got.append(msg)
        await ws.send(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": "Ada"}))


async def test_a_waiting_question_is_asked_again_as_a_retry_after_a_reconnect():
    async def drop_after_the_question(ws, got):
        await read(ws, got)
        await ws.close(1001, "server shutting down")

    async def hand_back_the_session_then_answer(ws, got):
        await ws.send(json.dumps({"jsonrpc": "2.0", "method": "session.resumed",
                                  "params": {"session_id": "s"}}))
        await answer_all(ws, got)

    stand_in = await StandIn(drop_after_the_question, hand_back_the_session_then_answer).start()
    client = stand_in.client()
    resumed = asyncio.Queue()
    client.on("session.resumed", resumed.put)  # registered once, heard on every socket
    await client.connect()
    try:
        name = await asyncio.wait_for(
            client.request_input("s", "text", "Your name?", request_id="name"), 10)
        assert name == "Ada"
        assert (await asyncio.wait_for(resumed.get(), 5)) == {"session_id": "s"}
        first, second = stand_in.received[0][0], stand_in.received[1][0]
        assert first["params"] == second["params"]  # the same request: a retry
        assert second["params"]["request_id"] == "name" and client.reconnects == 1
        assert not client.closed.is_set()
    finally:
        await client.close()
        await stand_in.stop()
    assert client.closed.is_set()


async def test_pushes_in_flight_keyed_are_sent_again_others_fail_and_new_calls_wait():
    async def drop_after_two(ws, got):
        await read(ws, got, 2)
        await ws.close(1001, "server shutting down")

    stand_in = await StandIn(drop_after_two, answer_all).start()
    client = stand_in.client()
    await client.connect()
    try:
        keyed = asyncio.ensure_future(client.toast("s", "Hi", idempotency_key="greeting"))
        unkeyed = asyncio.ensure_future(client.render("s", "card", {"title": "t"}))
        with pytest.raises(ConnectionError):
            await asyncio.wait_for(unkeyed, 10)  # whether it arrived is unknown
        assert await asyncio.wait_for(keyed, 10) == "Ada"
        assert await asyncio.wait_for(client.call("a2ui.sessions", {}), 10) == "Ada"
        methods = [m["method"] for m in stand_in.received[1]]
        assert methods == ["ui.notify", "a2ui.sessions"]
    finally:
        await client.close()
        await stand_in.stop()


async def test_connect_waits_for_a_server_that_is_not_up_yet():
    stand_in = StandIn(answer_all)
    client = stand_in.client()
    connecting = asyncio.ensure_future(client.connect())
    await asyncio.sleep(0.5)
    assert not connecting.done()
    await stand_in.start()
    try:
        await asyncio.wait_for(connecting, 10)
        assert await asyncio.wait_for(client.call("a2ui.sessions", {}), 10) == "Ada"
    finally:
        await client.close()
        await stand_in.stop()


async def test_a_refused_key_ends_it():
    async def refuse(ws, got):
        await ws.send(json.dumps({"jsonrpc": "2.0", "id": None, "error": {
            "code": -32006, "message": "Unauthorized"}}))
        await ws.close(4006, "unauthorized")

    stand_in = await StandIn(refuse, answer_all).start()
    client = stand_in.client()
    await client.connect()
    try:
        await asyncio.wait_for(client.closed.wait(), 10)
        with pytest.raises(ConnectionError):
            await client.render("s", "card", {"title": "t"})
        assert len(stand_in.received) == 1  # it did not connect again
    finally:
        await client.close()
        await stand_in.stop()


async def test_close_while_it_waits_for_the_server_ends_it():
    stand_in = StandIn()
    client = stand_in.client()
    connecting = asyncio.ensure_future(client.connect())
    await asyncio.sleep(0.3)
    connecting.cancel()
    await asyncio.gather(connecting, return_exceptions=True)
    await client.close()  # nothing left running
