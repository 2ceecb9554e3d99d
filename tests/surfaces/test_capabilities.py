"""Capabilities per client (issue 24, item 1): a session is not its opener's.

The registry of a session's attached clients (``a2ui.sessions.clients``: caps leases tagged
with what each client declared, process-local or Redis), the resumable clients kept with the
session in PostgreSQL, the union ``acapabilities`` recomputes as clients join and leave, the
``clients`` of a push's answer (read in the round trip that numbers it), and the store: a
valid surface is stored whatever the session's clients declared, each client is sent what it
can show, and an AG-UI 1.0-only or /ws/agui-opened session takes surfaces.
"""

import asyncio
import time
import uuid

import pytest
from channels.db import database_sync_to_async

from a2ui import agents
from a2ui.core.surfaces import BASIC_CATALOG_ID
from a2ui.infra import caps, shared
from a2ui.models import A2UISessionLog
from a2ui.sessions import clients
from tests.agui.test_agui_socket import _issue, connected, open_agui
from tests.agui1 import sse
from tests.redisserver import own_redis  # noqa: F401 (fixture)
from tests.surfaces.helpers import V09_CAPS, booking, create, frames, is_v09, push, v09_socket
from tests.wsutil import connect_agent, connect_user, init_session, recv, recv_until

pytestmark = pytest.mark.django_db(transaction=True)
OTHER = "https://example.com/other.json"


@pytest.fixture(params=["local", "redis"])
def backend(request, settings):
    if request.param == "redis":
        server = request.getfixturevalue("own_redis")
        settings.A2UI = {**getattr(settings, "A2UI", {}), "REDIS_URL": server.url(),
                         "CAP_LEASE_SECONDS": 1}
        return server
    settings.A2UI = {**getattr(settings, "A2UI", {}), "REDIS_URL": None}
    return None


@pytest.fixture
def redis_backend(request, settings):
    """The registry on a Redis server of the test's own (leases expire only there)."""
    server = request.getfixturevalue("own_redis")
    settings.A2UI = {**getattr(settings, "A2UI", {}), "REDIS_URL": server.url(),
                     "CAP_LEASE_SECONDS": 1}
    return server


@database_sync_to_async
def a_session(user, agent, capabilities=None):
    from a2ui import tokens

    token = tokens.issue_stream_token(user, agent).record
    return A2UISessionLog.objects.create(user=user, agent=agent, token=token,
                                         capabilities=capabilities or {},
                                         state=A2UISessionLog.State.ACTIVE).session_id


@database_sync_to_async
def resumable_of(sid):
    return A2UISessionLog.objects.get(pk=sid).resumable_clients


# The registry ----------------------------------------------------------------------------------


def test_the_push_path_reads_the_registrys_own_key():
    assert clients.members_key_matches("ab" * 16)


async def test_attached_clients_join_and_leave_on_both_backends(backend, user, agent):
    sid = await a_session(user, agent)
    v09 = await clients.ajoin(sid, "v09", [BASIC_CATALOG_ID, BASIC_CATALOG_ID])
    agui = await clients.ajoin(sid, "agui", None)
    assert sorted(await clients.attached(sid)) == [("agui", None), ("v09", [BASIC_CATALOG_ID])]
    # The push's sequence number and the clients, in one round trip.
    seq, _, _, members = await shared.next_seq_and_sockets(sid.hex, False, clients=True)
    assert seq == 1 and clients.count(members) == {"agui": 1, "v09": 1}
    shown = await clients.acapabilities(sid)
    assert shown["clients"] == {"agui": 1, "v09": 1} and shown["catalogs"] == [BASIC_CATALOG_ID]
    # Leaving for good (the session ends): nothing kept for a resume; the union shrinks.
    await clients.aleave(sid, v09, remember=False)
    shown = await clients.acapabilities(sid)
    assert shown["clients"] == {"agui": 1} and shown["catalogs"] == [] and not shown["resumable"]
    await clients.aleave(sid, agui, remember=False)
    assert clients.count((await shared.next_seq_and_sockets(sid.hex, False, True))[3]) == {}


async def test_a_killed_processs_clients_expire_and_redis_loss_is_rebuilt(redis_backend, user,
                                                                          agent):
    backend = redis_backend  # process-local leases never expire (their process is the only one)
    sid = await a_session(user, agent)
    kept = await clients.ajoin(sid, "v09", [BASIC_CATALOG_ID])
    dead = await clients.ajoin(sid, "agui", None)
    backend.flushdb()  # Redis lost the registry ...
    assert await clients.attached(sid) == []
    await caps.refresh_now()  # ... until the holders' refresh puts their clients back
    assert len(await clients.attached(sid)) == 2
    caps._live.pop(dead.id)  # its process died: nobody refreshes it any more
    await asyncio.sleep(1.5)  # CAP_LEASE_SECONDS is 1 here; the live one is refreshed
    assert await clients.attached(sid) == [("v09", [BASIC_CATALOG_ID])]
    await clients.aleave(sid, kept, remember=False)


async def test_a_client_that_leaves_is_resumable_then_taken_back(user, agent, settings):
    sid = await a_session(user, agent)
    lease = await clients.ajoin(sid, "jsonrpc", [BASIC_CATALOG_ID])
    await clients.aleave(sid, lease)  # it may resume: kept with the session
    [entry] = await resumable_of(sid)
    assert entry["protocol"] == "jsonrpc" and entry["catalogs"] == [BASIC_CATALOG_ID]
    shown = await clients.acapabilities(sid)
    assert shown["clients"] == {} and shown["resumable"] == {"jsonrpc": 1}
    assert shown["catalogs"] == [BASIC_CATALOG_ID]  # the union counts resumable clients
    row = await database_sync_to_async(A2UISessionLog.objects.get)(pk=sid)
    assert clients.inherited(row, "jsonrpc") == [BASIC_CATALOG_ID]
    assert clients.inherited(row, "v09") is clients.MISSING
    back = await clients.ajoin(sid, "jsonrpc", [BASIC_CATALOG_ID], resumed=True)
    assert await resumable_of(sid) == []  # attached again, not twice in the union
    await clients.aleave(sid, back)
    # Past the resume window a declaration no longer counts.
    settings.A2UI = {**getattr(settings, "A2UI", {}), "RESUME_WINDOW_SECONDS": 0}
    time.sleep(0.01)
    assert (await clients.acapabilities(sid))["resumable"] == {}


# Sockets register themselves --------------------------------------------------------------------


async def test_a_sockets_declaration_is_registered_and_kept_for_its_resume(stream_token):
    comm, sid = await v09_socket(stream_token, capabilities={"v0.9": {
        "supportedCatalogIds": [BASIC_CATALOG_ID, OTHER]}})
    sid = uuid.UUID(sid)
    assert await clients.attached(sid) == [("v09", sorted([BASIC_CATALOG_ID, OTHER]))]
    await comm.disconnect()
    assert await clients.attached(sid) == []
    shown = await clients.acapabilities(sid)
    assert shown["resumable"] == {"v09": 1} and shown["catalogs"] == sorted(
        [BASIC_CATALOG_ID, OTHER])


async def test_a_jsonrpc_client_resuming_without_declaring_keeps_what_it_declared(
        stream_token, agent_key):
    """The session was opened by a client without v0.9. A JSON-RPC client declaring v0.9
    resumes it, leaves, and resumes again with only ``session_id``: it is still a v0.9
    client (its declaration was kept with the session), so it is sent surfaces."""
    agent = await connect_agent(agent_key)
    opener = await connect_user(stream_token)
    sid = await init_session(opener)
    await opener.disconnect()
    second = await connect_user(stream_token)
    await init_session(second, session_id=sid, capabilities=V09_CAPS)
    await second.disconnect()
    again = await connect_user(stream_token)
    await init_session(again, session_id=sid)
    # a v0.9 client: its resume is sent the surfaces' snapshot (none yet: "replace with none")
    snap = await recv_until(again, is_v09)
    assert snap["params"] == {"messages": [], "snapshot": True}
    reply = await push(agent, sid, booking())
    assert reply["result"]["clients"] == {"jsonrpc": 1}, reply
    note = await recv_until(again, is_v09)
    assert note["params"]["messages"][0]["createSurface"]["surfaceId"] == "s1"
    await again.disconnect()
    await agent.disconnect()


# The store and what each client is sent ---------------------------------------------------------


async def test_an_agui_socket_session_takes_surfaces_and_a_v09_socket_joining_gets_them(
        user, agent, agent_key):
    bot = await connect_agent(agent_key)
    person = await open_agui(await _issue(user, agent))
    sid = await connected(person)
    reply = await push(bot, sid, booking())
    assert reply["result"] == {"delivered": 3, "seq": 3, "clients": {"agui": 1}, "reached": {"agui": 1}}, reply
    v09, same = await v09_socket(await _stream_token(user, agent), session_id=sid)
    assert same == sid
    snapshot = await frames(v09, 3)
    assert snapshot[0]["createSurface"]["surfaceId"] == "s1"
    reply = await push(bot, sid, [create("s2")], "p2")
    assert reply["result"]["clients"] == {"agui": 1, "v09": 1}, reply
    assert (await recv(v09))["createSurface"]["surfaceId"] == "s2"
    shown = await clients.acapabilities(uuid.UUID(sid))
    assert shown["catalogs"] == [BASIC_CATALOG_ID]
    await v09.disconnect()  # the v0.9 client leaves: attached union shrinks
    shown = await clients.acapabilities(uuid.UUID(sid))
    assert shown["clients"] == {"agui": 1} and shown["resumable"] == {"v09": 1}
    # a seed-000 push's answer names the protocols it reached too
    result = await agents.apush(agent, sid, "ui.notify", {"title": "Saved", "level": "info"})
    assert result.clients == {"agui": 1}
    await person.disconnect()
    await bot.disconnect()


async def test_a_v09_client_is_sent_only_the_catalogs_it_declared(stream_token, agent_key):
    bot = await connect_agent(agent_key)
    comm, sid = await v09_socket(stream_token, capabilities={"v0.9": {
        "supportedCatalogIds": [OTHER]}})
    reply = await push(bot, sid, booking())
    assert reply["result"]["delivered"] == 3, reply  # stored: a later client may show it
    reply = await push(bot, sid, [create("s2")], "p2")
    assert reply["result"]["seq"] == 4
    assert comm.output_queue.empty()  # nothing of a catalog it did not declare
    await comm.disconnect()
    await bot.disconnect()


async def test_an_agui1_only_session_takes_surfaces_as_activities(user, agent, agent_key):
    bot = await connect_agent(agent_key)
    run = await sse.start(await sse.issue(user, agent), "r1")
    assert (await run.next())["type"] == "RUN_STARTED"  # the stream runs once it is read
    started = await recv_until(bot, lambda m: m.get("method") == "agui.run_started")
    sid = started["params"]["session_id"]
    reply = await push(bot, sid, booking())
    assert reply["result"]["delivered"] == 3 and reply["result"]["clients"] == {"agui1": 1}
    for _ in range(20):
        event = await run.next()
        if event.get("activityType") == "a2ui-surface":
            break
    assert event["type"] == "ACTIVITY_SNAPSHOT", event
    operations = event["content"]["a2ui_operations"]
    assert operations[0]["createSurface"]["surfaceId"] == "s1"
    await run.close()
    await bot.disconnect()


@database_sync_to_async
def _stream_token(user, agent):
    from a2ui import tokens

    return tokens.issue_stream_token(user, agent).token


def test_the_admin_session_page_shows_what_the_session_can_show(client, superuser, user, agent):
    from django.urls import reverse

    from a2ui import tokens

    session = A2UISessionLog.objects.create(
        user=user, agent=agent, token=tokens.issue_stream_token(user, agent).record,
        state=A2UISessionLog.State.ACTIVE, resumable_clients=[
            {"protocol": "v09", "catalogs": [BASIC_CATALOG_ID], "left_at": time.time()}])
    client.force_login(superuser)
    page = client.get(reverse("admin:a2ui_a2uisessionlog_change", args=[session.pk]))
    assert page.status_code == 200
    text = page.content.decode().lower()
    assert "what it can show now" in text and f"v0.9 catalogs {BASIC_CATALOG_ID}" in text


def test_count_reads_members_once_and_stays_bounded(monkeypatch):
    """``clients.count`` on the push path: each member is parsed once, not per push; members
    that are not ours are left out; the cache is emptied when full."""
    monkeypatch.setattr(clients, "_protocols", {})
    monkeypatch.setattr(clients, "MAX_PROTOCOLS_CACHED", 4)
    parsed = []
    real = clients.parse_member
    monkeypatch.setattr(clients, "parse_member", lambda m: parsed.append(m) or real(m))
    one = "L1 " + clients.encode("v09", ["c"])
    two = "L2 " + clients.encode("agui", None)
    assert clients.count([one]) == {"v09": 1}
    assert clients.count([one]) == {"v09": 1}
    assert clients.count([two, one, "junk", "L3 [1, 2]"]) == {"agui": 1, "v09": 1}
    assert clients.count([]) == {} and clients.count(["junk"]) == {}
    assert clients.count(iter([one, one])) == {"v09": 2}
    assert parsed.count(one) == 1 and parsed.count(two) == 1
    assert len(clients._protocols) == 4
    assert clients.count(["L5 " + clients.encode("agui1", "*")]) == {"agui1": 1}
    assert len(clients._protocols) == 1  # full: emptied before the new member went in
