"""Tier 2: no session stays "in use" without a live client, whatever took its clients away.

A session is in use while its socket count says so; a process killed with sockets open never
uncounts them, and a count lost with Redis cannot be uncounted either. The session's client
registry (leases its process refreshes, ``a2ui.sessions.clients``) is what says whether a
client is there: a session with none is detached (``a2ui.sessions.ghosts``) by the sweep, by a
socket's close that cannot tell from the count, and by the person's next admission, so she is
never refused (-32007) because of her own ghosts. The servers run with leases of 3 s.
"""

import asyncio
import time
import uuid

import pytest
from channels.db import database_sync_to_async

from a2ui.models import A2UISessionLog, Agent
from tests.live.client import init, init_session, open_user
from tests.live.conftest import _redis
from tests.live.test_live_mcp import issue

pytestmark = pytest.mark.django_db(transaction=True)
LEASE = 3  # A2UI_CAP_LEASE_SECONDS of the servers
SWEEP = 15  # a2ui.push.sweep.INTERVAL_SECONDS


def _state(sid):
    row = A2UISessionLog.objects.get(pk=sid)
    return row.state, row.detached_at


async def state(sid):
    return await database_sync_to_async(_state)(sid)


async def places(agent, limit):
    """The agent's limit: a person's share is half of it, rounded up."""
    await database_sync_to_async(
        lambda: Agent.objects.filter(pk=agent.pk).update(max_concurrent_sessions=limit))()


async def admitted_within(server, person, agent, seconds):
    """(session id, seconds it took) of the first of the person's new sessions admitted."""
    started = time.monotonic()
    replies = []
    while time.monotonic() - started < seconds:
        ws = await open_user(server, await issue(person, agent))
        reply = await init(ws, rpc_id="again")
        if "result" in reply:
            return reply["result"]["session_id"], time.monotonic() - started, ws
        replies.append(reply["error"])
        await ws.close()
        await asyncio.sleep(0.5)
    raise AssertionError(f"still refused after {seconds} s: {replies[-3:]}")


@pytest.mark.timeout(150)
async def test_a_killed_process_leaves_no_session_in_use(daphne_server, user, other_user,
                                                         agent):
    await places(agent, 4)  # her share: 2
    a = daphne_server(A2UI_CAP_LEASE_SECONDS=str(LEASE))
    b = daphne_server(A2UI_CAP_LEASE_SECONDS=str(LEASE))
    hers = [await init_session(await open_user(a, await issue(user, agent))) for _ in range(2)]
    his = await init_session(await open_user(a, await issue(other_user, agent)))
    # while her session is shown, her share is used: refused on the other server
    ws = await open_user(b, await issue(user, agent))
    refused = await init(ws, rpc_id="full")
    assert refused["error"]["code"] == -32007 and refused["error"]["data"]["per"] == "person"
    await ws.close()

    a.kill()  # her socket and his go with it, never uncounted
    killed = time.monotonic()
    # she is admitted again once her client's lease lapsed: her ghost does not refuse her
    sid, _, ws = await admitted_within(b, user, agent, LEASE + 10)
    took = time.monotonic() - killed
    assert took < LEASE + 5, took
    # her ghosts are detached (as many as her admission needed at once, each lease lapsing in
    # its turn, the rest by the sweep), so resumable: her new tab took one over or a new one
    # opened; his ghost, whom nobody asked about, is detached by the sweep
    deadline = killed + LEASE + 2 * SWEEP + 5
    ghosts = [*(set(hers) - {sid}), his]
    while time.monotonic() < deadline:
        detached = [(await state(g))[1] for g in ghosts]
        if all(at is not None for at in detached):
            break
        await asyncio.sleep(0.5)
    for ghost in ghosts:
        live, detached = await state(ghost)
        assert live in ("connected", "initialized", "active"), (ghost, live)
        assert detached is not None, f"{ghost} is still in use with no client"
    print(f"admitted {took:.1f} s after the kill; his ghost detached "
          f"{time.monotonic() - killed:.1f} s after it")
    await ws.close()


@pytest.mark.timeout(90)
async def test_a_socket_closing_with_its_count_lost_detaches_its_session(daphne_server,
                                                                         live_services, user,
                                                                         agent):
    await places(agent, 2)  # her share: 1
    server = daphne_server(A2UI_CAP_LEASE_SECONDS=str(LEASE))
    ws = await open_user(server, await issue(user, agent))
    sid = await init_session(ws)
    # Redis' leases are older than their time to live (younger, the registry cannot tell)
    await asyncio.sleep(LEASE + 0.5)
    # the session's socket count is lost (Redis evicted or lost the key); no process dies
    assert _redis(live_services).delete(f"a2ui:ss:{uuid.UUID(sid).hex}") == 1
    await ws.close()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and (await state(sid))[1] is None:
        await asyncio.sleep(0.2)
    assert (await state(sid))[1] is not None, "closed with its count lost: still in use"
    _, _, ws = await admitted_within(server, user, agent, 5)  # a new tab (it may take it over)
    await ws.close()
