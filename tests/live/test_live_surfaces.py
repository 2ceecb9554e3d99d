"""Tier 2: A2UI v0.9 surfaces across real Daphne processes, PostgreSQL and Redis.

The agent pushes on one process; the person's SSE stream, /ws/v09 socket and JSON-RPC socket
are held by another, so every update travels through PostgreSQL (state, sequence numbers) and
Redis (channel layer).
"""

import asyncio
import json
from urllib.parse import urlsplit

import pytest

from a2ui.core.surfaces import BASIC_CATALOG_ID
from tests.live.client import Client, ahttp, init_session, open_agent, open_user

pytestmark = pytest.mark.django_db(transaction=True)

CAPS = {"v0.9": {"supportedCatalogIds": [BASIC_CATALOG_ID]}}


def booking(sid="s1"):
    return [
        {"version": "v0.9", "createSurface": {"surfaceId": sid, "catalogId": BASIC_CATALOG_ID,
                                              "sendDataModel": True}},
        {"version": "v0.9", "updateComponents": {"surfaceId": sid, "components": [
            {"id": "root", "component": "Column", "children": ["name", "book"]},
            {"id": "name", "component": "TextField", "label": "Name",
             "value": {"path": "/name"}},
            {"id": "book", "component": "Button", "child": "label",
             "action": {"event": {"name": "book", "context": {"name": {"path": "/name"}}}}},
            {"id": "label", "component": "Text", "text": "Book"},
        ]}},
        {"version": "v0.9", "updateDataModel": {"surfaceId": sid, "path": "/",
                                                "value": {"name": "Ada"}}},
    ]


def name_update(value):
    return {"version": "v0.9", "updateDataModel": {"surfaceId": "s1", "path": "/name",
                                                   "value": value}}


class SSEStream:
    """A minimal EventSource over asyncio streams (HTTP/1.1, chunked transfer decoding)."""

    def __init__(self, reader, writer, status, headers):
        self.reader, self.writer = reader, writer
        self.status, self.headers = status, headers
        self.text = ""
        self.chunked = headers.get("transfer-encoding", "").lower() == "chunked"

    @classmethod
    async def open(cls, url, last_event_id=None):
        parts = urlsplit(url)
        reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
        lines = [f"GET {parts.path}?{parts.query} HTTP/1.1", f"Host: {parts.netloc}",
                 "Accept: text/event-stream", "Cache-Control: no-cache"]
        if last_event_id is not None:
            lines.append(f"Last-Event-ID: {last_event_id}")
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode())
        await writer.drain()
        status_line = await asyncio.wait_for(reader.readline(), 10)
        status = int(status_line.split()[1])
        headers = {}
        while True:
            line = (await asyncio.wait_for(reader.readline(), 10)).decode().strip()
            if not line:
                break
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        return cls(reader, writer, status, headers)

    async def _more(self):
        if not self.chunked:
            data = await self.reader.read(65536)
            if not data:
                raise EOFError
            self.text += data.decode()
            return
        size = int((await self.reader.readline()).strip() or b"0", 16)
        if size == 0:
            raise EOFError
        self.text += (await self.reader.readexactly(size)).decode()
        await self.reader.readexactly(2)

    async def next(self, timeout=10):
        """The next event as {event?, id?, data?, retry?}; comments are skipped."""
        async with asyncio.timeout(timeout):
            while True:
                while "\n\n" in self.text:
                    block, self.text = self.text.split("\n\n", 1)
                    event = {}
                    for line in block.split("\n"):
                        if not line or line.startswith(":"):
                            continue
                        name, _, value = line.partition(":")
                        value = value[1:] if value.startswith(" ") else value
                        event[name] = json.loads(value) if name == "data" else value
                    if event:
                        return event
                await self._more()

    async def read_body(self):
        body = b""
        while True:
            data = await self.reader.read(65536)
            if not data:
                return body
            body += data

    def close(self):
        self.writer.close()


def sse_url(server, sid, token):
    return f"{server.url}/api/v4/sessions/{sid}/surfaces/stream?token={token}"


async def rest_push(server, sid, key, messages):
    return await ahttp("POST", f"{server.url}/api/v4/sessions/{sid}/surfaces", messages,
                       {"Authorization": f"Bearer {key}"})


async def test_live_sse_across_processes_with_resume(two_servers, stream_token, agent_key):
    a, b = two_servers
    user = await open_user(b, stream_token)
    sid = await init_session(user, capabilities=CAPS)

    status, body = await rest_push(a, sid, agent_key, booking())
    assert status == 202 and body == {"delivered": 3, "seq": 3, "clients": {"jsonrpc": 1},
                                     "reached": {"jsonrpc": 1}}, body

    stream = await SSEStream.open(sse_url(b, sid, stream_token))
    assert stream.status == 200
    assert stream.headers["content-type"].startswith("text/event-stream")
    assert (await stream.next()) == {"retry": "2000"}
    assert (await stream.next())["event"] == "a2ui-reset"
    snap = [await stream.next() for _ in range(3)]
    assert snap[0]["data"]["createSurface"]["theme"]["agentDisplayName"] == "Demo Agent"
    assert snap[2]["id"] == "3"

    # live updates pushed on process A arrive on B's stream, one message per event
    agent = await open_agent(a, agent_key)
    reply = await agent.call("a2ui.v09", {"session_id": sid, "messages": [
        name_update("Bo"), name_update("Cy")]}, "p1")
    assert reply["result"] == {"delivered": 2, "seq": 5, "clients": {"jsonrpc": 1, "v09": 1},
                              "reached": {"jsonrpc": 1, "v09": 1}}
    live = [await stream.next() for _ in range(2)]
    assert [(e["id"], e["data"]["updateDataModel"]["value"]) for e in live] == [
        ("4", "Bo"), ("5", "Cy")]
    stream.close()

    # an invalid batch is refused (422) and changes nothing
    status, body = await rest_push(a, sid, agent_key, [name_update("Di"), {"version": "v0.9"}])
    assert status == 422 and body["error"]["code"] == "VALIDATION_FAILED" and body["index"] == 1

    # resume on process A with nothing missed: the stream continues from 5
    stream = await SSEStream.open(sse_url(a, sid, stream_token), last_event_id=5)
    assert (await stream.next()) == {"retry": "2000"}
    await rest_push(b, sid, agent_key, [name_update("Ed")])
    event = await stream.next()
    assert event["id"] == "6" and event["data"]["updateDataModel"]["value"] == "Ed"
    stream.close()

    # resume after missing an update: reset, then the current state
    await rest_push(b, sid, agent_key, [name_update("Flo")])
    stream = await SSEStream.open(sse_url(b, sid, stream_token), last_event_id=6)
    await stream.next()
    assert (await stream.next())["event"] == "a2ui-reset"
    snap = [await stream.next() for _ in range(3)]
    assert snap[2]["id"] == "7" and snap[2]["data"]["updateDataModel"]["value"] == {"name": "Flo"}
    stream.close()

    # the stream takes only a stream token; REST endpoints refuse it
    stream = await SSEStream.open(sse_url(b, sid, agent_key))
    assert stream.status == 401
    stream.close()
    status, _ = await rest_push(a, sid, stream_token, [name_update("x")])
    assert status in (401, 403)
    await agent.close()
    await user.close()


async def test_live_v09_socket_and_actions_across_processes(two_servers, stream_token,
                                                           agent_key):
    a, b = two_servers
    agent = await open_agent(a, agent_key)
    ws = await Client.open(f"{b.ws_url}/ws/v09/a2ui?token={stream_token}")
    await ws.send({"version": "v0.9", "capabilities": CAPS})
    hello = await ws.recv()
    sid = hello["session"]["sessionId"]
    opened = await agent.recv_until(lambda m: m.get("method") == "session.opened")
    assert opened["params"]["session_id"] == sid

    reply = await agent.call("a2ui.v09", {"session_id": sid, "messages": booking()}, "p")
    assert reply["result"]["seq"] == 3
    frames = [await ws.recv() for _ in range(3)]
    assert "createSurface" in frames[0] and frames[2]["updateDataModel"]["value"] == {"name": "Ada"}

    await ws.send({"version": "v0.9", "action": {
        "name": "book", "surfaceId": "s1", "sourceComponentId": "book",
        "timestamp": "2026-01-01T00:00:00Z", "context": {"name": "Ada"}}})
    note = await agent.recv_until(lambda m: m.get("method") == "a2ui.v09")
    assert note["params"]["messages"][0]["action"]["name"] == "book"
    assert note["params"]["dataModel"] == {"version": "v0.9", "surfaces": {"s1": {"name": "Ada"}}}

    await ws.send({"version": "v0.9", "action": {"name": "x"}})
    err = await ws.recv()
    assert err["error"]["code"] == "VALIDATION_FAILED"
    await ws.close()
    await agent.close()
