"""Tier 2: capabilities per client across two Daphne processes, PostgreSQL and Redis.

An AG-UI socket (/ws/agui, which declares no A2UI v0.9) opens a session on process A; a v0.9
socket joins it on process B. The agent's surface is accepted (it used to be refused with 422
"did not declare A2UI v0.9"), the v0.9 socket gets it, and the push's answer names both
protocols, read from the session's client registry in Redis. When the v0.9 socket leaves, the
union shrinks: the next push reaches only the AG-UI socket, and the v0.9 client's declaration
is kept with the session in PostgreSQL for its resume.
"""

import asyncio

import pytest
from channels.db import database_sync_to_async

from a2ui.core.surfaces import BASIC_CATALOG_ID
from a2ui.models import A2UISessionLog
from tests.live.client import Client, open_agent
from tests.live.test_live_agui import next_event, open_agui
from tests.live.test_live_mcp import issue
from tests.live.test_live_surfaces import booking, rest_push

pytestmark = pytest.mark.django_db(transaction=True)
CAPS = {"v0.9": {"supportedCatalogIds": [BASIC_CATALOG_ID]}}


async def open_v09(server, token, session_id):
    client = await Client.open(f"{server.ws_url}/ws/v09/a2ui?token={token}"
                               f"&session_id={session_id}")
    await client.send({"version": "v0.9", "capabilities": CAPS})
    hello = await client.recv()
    assert hello["session"] == {"sessionId": session_id, "resumed": True}, hello
    return client


@database_sync_to_async
def resumable(sid):
    return A2UISessionLog.objects.get(pk=sid).resumable_clients


async def test_live_an_agui_session_takes_a_surface_a_v09_socket_on_another_process_shows(
        two_servers, user, agent, agent_key):
    a, b = two_servers
    person = await open_agui(a, await issue(user, agent, "stream_agui"))
    status = await next_event(person)
    assert status["type"] == "CONNECTION_STATUS" and status["status"] == "CONNECTED", status
    sid = status["session_id"]
    v09 = await open_v09(b, await issue(user, agent), sid)

    bot = await open_agent(a, agent_key)
    reply = await bot.call("a2ui.v09", {"session_id": sid, "messages": booking()}, "p1")
    assert reply.get("result") == {"delivered": 3, "seq": 3,
                                   "clients": {"agui": 1, "v09": 1}}, reply
    shown = [await v09.recv() for _ in range(3)]
    assert [next(k for k in m if k != "version") for m in shown] == [
        "createSurface", "updateComponents", "updateDataModel"]
    assert shown[0]["createSurface"]["surfaceId"] == "s1"

    # The v0.9 socket leaves: the next push reaches only the AG-UI socket (its process
    # unregisters it as it closes: the answer shows it once that is done).
    await v09.close()
    for attempt in range(50):
        status, body = await rest_push(b, sid, agent_key, [
            {"version": "v0.9", "updateDataModel": {"surfaceId": "s1", "path": "/name",
                                                    "value": f"n{attempt}"}}])
        assert status == 202, body
        if body["clients"] == {"agui": 1}:
            break
        await asyncio.sleep(0.1)
    assert body["clients"] == {"agui": 1}, body
    # ... and what it declared is kept with the session for its resume (PostgreSQL).
    [entry] = await resumable(sid)
    assert entry["protocol"] == "v09" and entry["catalogs"] == [BASIC_CATALOG_ID]

    # It resumes on process A: attached again (no longer resumable), shown the surface.
    again = await open_v09(a, await issue(user, agent), sid)
    snapshot = [await again.recv() for _ in range(3)]
    assert snapshot[0]["createSurface"]["surfaceId"] == "s1"
    assert await resumable(sid) == []
    reply = await bot.call("ui.notify", {"session_id": sid, "title": "Saved", "level": "info"},
                           "n1")
    assert reply["result"]["clients"] == {"agui": 1, "v09": 1}, reply
    await again.close()
    await person.close()
    await bot.close()
