"""Tier 1: the SSE surface stream through Django's async test client (live: tests/live)."""

import asyncio
import json

import pytest
from django.test import AsyncClient

from a2ui import agents
from a2ui.push import sessions as session_actions
from tests.surfaces.helpers import booking, data, v09_user

pytestmark = pytest.mark.django_db(transaction=True)


class SSE:
    """Parse a streaming response's chunks into events {event, id, data}."""

    def __init__(self, response):
        self.it = aiter(response.streaming_content)
        self.buffer = ""

    async def next(self, timeout=3):
        async with asyncio.timeout(timeout):
            while True:
                if "\n\n" in self.buffer:
                    block, self.buffer = self.buffer.split("\n\n", 1)
                    event = parse_block(block)
                    if event is not None:
                        return event
                    continue
                chunk = await anext(self.it)
                self.buffer += chunk.decode() if isinstance(chunk, bytes) else chunk


def parse_block(block):
    event = {}
    for line in block.split("\n"):
        if not line or line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "data":
            event["data"] = json.loads(value)
        elif name in ("event", "id", "retry"):
            event[name] = value
    return event or None


def url(sid, token=None):
    base = f"/api/v4/sessions/{sid}/surfaces/stream"
    return f"{base}?token={token}" if token else base


async def test_sse_refuses_everything_but_a_stream_token(stream_token, agent_key, other_user,
                                                         agent):
    from channels.db import database_sync_to_async

    from a2ui import tokens

    user, sid = await v09_user(stream_token)
    client = AsyncClient()
    assert (await client.get(url(sid))).status_code == 401
    assert (await client.get(url(sid, "garbage"))).status_code == 401
    assert (await client.get(url(sid, agent_key))).status_code == 401
    resp = await client.get(url(sid), headers={"Authorization": f"Bearer {agent_key}"})
    assert resp.status_code == 401
    assert (await client.get(url("00000000-0000-0000-0000-000000000000", stream_token))
            ).status_code == 404
    foreign = await database_sync_to_async(
        lambda: tokens.issue_stream_token(other_user, agent).token)()
    resp = await client.get(url(sid, foreign))
    assert resp.status_code == 404 and resp.json()["error"]["code"] == -32000
    assert (await client.post(url(sid, stream_token))).status_code == 405
    await user.disconnect()


async def test_sse_snapshot_live_and_resume(stream_token, agent):
    user, sid = await v09_user(stream_token)
    await agents.asurfaces(agent, sid, booking())
    client = AsyncClient()
    resp = await client.get(url(sid, stream_token))
    assert resp.status_code == 200 and resp["Content-Type"] == "text/event-stream"
    stream = SSE(resp)
    assert (await stream.next()) == {"retry": "2000"}
    assert (await stream.next())["event"] == "a2ui-reset"
    snap = [await stream.next() for _ in range(3)]
    assert [("id" in e) for e in snap] == [False, False, True] and snap[2]["id"] == "3"
    assert "createSurface" in snap[0]["data"] and snap[2]["data"]["updateDataModel"]["path"] == "/"

    await agents.asurfaces(agent, sid, [data("s1", "/name", "Bo"), data("s1", "/n", 2)])
    live = [await stream.next() for _ in range(2)]
    assert [e["id"] for e in live] == ["4", "5"]
    assert live[0]["data"] == {"version": "v0.9", "updateDataModel": {
        "surfaceId": "s1", "path": "/name", "value": "Bo"}}
    await resp.streaming_content.aclose()

    # resume with nothing missed: no reset, straight to live updates
    resp = await client.get(url(sid, stream_token), headers={"Last-Event-ID": "5"})
    stream = SSE(resp)
    assert (await stream.next()) == {"retry": "2000"}
    await agents.asurfaces(agent, sid, [data("s1", "/n", 3)])
    event = await stream.next()
    assert event.get("id") == "6" and "updateDataModel" in event["data"], event
    await resp.streaming_content.aclose()

    # resume after missing something: reset, then the current state
    await agents.asurfaces(agent, sid, [data("s1", "/n", 4)])
    resp = await client.get(url(sid, stream_token), headers={"Last-Event-ID": "6"})
    stream = SSE(resp)
    await stream.next()
    assert (await stream.next())["event"] == "a2ui-reset"
    snap = [await stream.next() for _ in range(3)]
    assert snap[2]["id"] == "7" and snap[2]["data"]["updateDataModel"]["value"]["n"] == 4
    await resp.streaming_content.aclose()
    await user.disconnect()


async def test_sse_empty_session_and_close(stream_token, agent):

    user, sid = await v09_user(stream_token)
    resp = await AsyncClient().get(url(sid, stream_token))
    stream = SSE(resp)
    await stream.next()
    assert (await stream.next())["event"] == "a2ui-reset"
    assert (await stream.next()) == {"id": "0"}
    await session_actions.aclose_session(sid, reason="done", close_code=4010)
    with pytest.raises(StopAsyncIteration):
        await stream.next()
    await user.disconnect()


async def _asgi_stream(path):
    """GET ``path`` through the project's ASGI application as a raw HTTP client would, and a
    way to hang up: returns (the app's task, the chunks received so far, hang_up())."""
    from a2ui_project.asgi import application

    path, _, query = path.partition("?")
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET",
             "scheme": "http", "path": path, "raw_path": path.encode(),
             "query_string": query.encode(), "root_path": "", "headers": [(b"host", b"testserver")],
             "client": ("127.0.0.1", 5000), "server": ("testserver", 80)}
    gone = asyncio.Event()
    sent = []
    requested = [False]

    async def receive():
        if not requested[0]:
            requested[0] = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await gone.wait()
        return {"type": "http.disconnect"}

    async def send(message):
        sent.append(message)

    task = asyncio.ensure_future(application(scope, receive, send))
    return task, sent, gone.set


async def test_sse_counts_itself_and_uncounts_when_the_client_hangs_up(stream_token, agent):
    """The stream counts itself in the session like a socket (so direct delivery never skips
    it) and uncounts when the client goes; the session is then detached as with a socket."""
    from a2ui.infra import shared
    from a2ui.push import direct

    user, sid = await v09_user(stream_token)
    hexid = sid.replace("-", "")
    before = await shared.socket_count(hexid)
    task, sent, hang_up = await _asgi_stream(url(sid, stream_token))
    async with asyncio.timeout(5):
        while not any(b"a2ui-reset" in m.get("body", b"") for m in sent):
            await asyncio.sleep(0.01)
    assert sent[0]["status"] == 200
    assert await shared.socket_count(hexid) == before + 1
    assert any(getattr(c, "tracker", None) is not None and hasattr(c, "frames")
               for c in dict(direct.registered()).get(hexid, []))
    hang_up()
    async with asyncio.timeout(5):
        await task
    assert await shared.socket_count(hexid) == before
    assert not any(hasattr(c, "frames") for c in dict(direct.registered()).get(hexid, []))
    await user.disconnect()
    assert not await shared.socket_count(hexid)


async def test_sse_takes_direct_pushes_in_order(stream_token, agent):
    """With the stream as the session's only listener here, pushes reach it directly, in
    order, each numbered by the surface store."""
    from a2ui.push import direct

    user, sid = await v09_user(stream_token)
    await user.disconnect()  # the stream alone shows the session now
    resp = await AsyncClient().get(url(sid, stream_token))
    stream = SSE(resp)
    await stream.next()
    assert (await stream.next())["event"] == "a2ui-reset"
    await stream.next()
    hexid = sid.replace("-", "")
    assert [c for c in dict(direct.registered()).get(hexid, [])]
    await agents.asurfaces(agent, sid, booking())
    ids = []
    for _ in range(len(booking())):
        ids.append(int((await stream.next())["id"]))
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    for n in range(5):
        await agents.asurfaces(agent, sid, [data("s1", "/name", f"n{n}")])
    values = [(await stream.next())["data"]["updateDataModel"]["value"] for _ in range(5)]
    assert values == [f"n{n}" for n in range(5)]
