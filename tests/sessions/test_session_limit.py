"""Tier 1: nobody is locked out by their own closed tabs (services/admission.py, the sweep).

The agent's concurrent-session limit (seed 000: -32007) counts attached sessions, a person's
share of it theirs; a refusal closes the socket with 4007 and is recorded once; a new tab takes
over the person's detached session with the same agent; the person's detached sessions beyond
MAX_DETACHED_SESSIONS_PER_PERSON are replaced, oldest first; a detached session closes
RESUME_WINDOW_SECONDS after its last socket left, whatever its agent pushes meanwhile.
"""

import asyncio
import threading
from datetime import timedelta

import pytest
from channels.db import database_sync_to_async
from django.db import connection, connections
from django.test import override_settings
from django.utils import timezone

from a2ui import tokens
from a2ui.infra import shared
from a2ui.models import A2UISessionLog, AuditEvent
from a2ui.push import sessions as session_actions
from a2ui.push import sweep
from a2ui.sessions import admission
from a2ui.sessions.counters import buffer
from tests.wsutil import connect_agent, connect_user, recv, recv_until, send

pytestmark = pytest.mark.django_db(transaction=True)

get = database_sync_to_async(lambda sid: A2UISessionLog.objects.get(pk=sid))


@database_sync_to_async
def new_token(user, agent):
    return tokens.issue_stream_token(user, agent).token


@database_sync_to_async
def third_user():
    from django.contrib.auth import get_user_model

    return get_user_model().objects.create_user("carol", password="pw")


@database_sync_to_async
def set_limit(agent, limit):
    agent.max_concurrent_sessions = limit
    agent.save()


@database_sync_to_async
def rows(**filters):
    return list(A2UISessionLog.objects.filter(**filters).order_by("created_at"))


def init_msg(rpc_id="i", **params):
    return {"jsonrpc": "2.0", "id": rpc_id, "method": "a2ui.init", "params": {
        "client_info": {"name": "tab", "version": "1"}, "capabilities": {}, **params}}


async def open_tab(user, agent, **params):
    comm = await connect_user(await new_token(user, agent))
    await send(comm, init_msg(**params))
    return comm, await recv(comm)


async def refused_with_4007(user, agent, limit=2, per="agent"):
    comm, reply = await open_tab(user, agent)
    assert reply["id"] == "i" and reply["error"]["code"] == -32007, reply
    assert reply["error"]["data"] == {"limit": limit, "per": per}
    out = await comm.receive_output(timeout=3)
    assert out["type"] == "websocket.close" and out["code"] == 4007, out


# The limit ----------------------------------------------------------------------------------


async def test_limit_reply_then_close_4007_and_one_rejection_row(user, other_user, agent):
    await set_limit(agent, 2)
    # someone else's, attached (a person's share of two is one: two people's)
    held = [await open_tab(person, agent) for person in (other_user, await third_user())]
    assert all("result" in reply for _, reply in held)
    await refused_with_4007(user, agent)
    await refused_with_4007(user, agent)  # a retry: refused again, not recorded again
    rejected = await rows(state="rejected", user=user)
    assert len(rejected) == 1 and "limit" in rejected[0].close_reason
    assert len(await rows(user=user)) == 1  # nothing of the person's but that row


async def test_limit_counts_attached_tabs_of_the_person_too(user, agent):
    await set_limit(agent, 4)  # the person's share: 2
    for _ in range(2):
        _, reply = await open_tab(user, agent)
        assert "result" in reply and reply["result"]["resumed"] is False
    # the two tabs are open: nothing is taken over, the person's share is used
    await refused_with_4007(user, agent, limit=2, per="person")


# A new tab takes over the person's detached session -----------------------------------------


async def test_new_tab_takes_over_the_detached_session_with_its_snapshot(user, agent, agent_key):
    bot = await connect_agent(agent_key)
    first, reply = await open_tab(user, agent)
    sid = reply["result"]["session_id"]
    assert reply["result"]["resumed"] is False
    await recv_until(bot, lambda m: m.get("method") == "session.opened")
    await send(bot, {"jsonrpc": "2.0", "method": "ui.render", "params": {
        "session_id": sid, "component_id": "c1", "component_type": "markdown",
        "data": {"content": "kept"}}})
    await recv(first)
    await first.disconnect()
    assert (await get(sid)).detached_at is not None

    tab, reply = await open_tab(user, agent)  # no session_id: a new tab
    assert reply["result"]["session_id"] == sid and reply["result"]["resumed"] is True
    render = await recv_until(tab, lambda m: m.get("method") == "ui.render")
    assert render["params"]["component_id"] == "c1"
    resumed = await recv_until(bot, lambda m: m.get("method") == "session.resumed")
    assert resumed["params"]["session_id"] == sid
    row = await get(sid)
    assert row.detached_at is None and row.state in A2UISessionLog.LIVE_STATES
    assert len(await rows(user=user)) == 1
    audit = await database_sync_to_async(lambda: list(
        AuditEvent.objects.filter(action="session.resume").values_list("details", flat=True)))()
    assert audit == [{"reused": True}]


async def test_eleven_closed_tabs_leave_room_for_a_twelfth(user, agent):
    await set_limit(agent, 10)
    seen = set()
    for _ in range(12):
        comm, reply = await open_tab(user, agent)
        assert "result" in reply, reply
        seen.add(reply["result"]["session_id"])
        await comm.disconnect()
    assert len(seen) == 1
    assert len(await rows(state="rejected")) == 0


async def test_no_take_over_of_another_persons_or_agents_session(user, other_user, agent):
    other_agent, _ = await database_sync_to_async(tokens.create_agent)("other-agent")
    theirs, reply = await open_tab(other_user, agent)
    their_sid = reply["result"]["session_id"]
    await theirs.disconnect()
    elsewhere, reply = await open_tab(user, other_agent)
    other_agent_sid = reply["result"]["session_id"]
    await elsewhere.disconnect()
    _, reply = await open_tab(user, agent)
    assert reply["result"]["resumed"] is False
    assert reply["result"]["session_id"] not in (their_sid, other_agent_sid)


async def test_no_take_over_after_the_resume_window(user, agent):
    first, reply = await open_tab(user, agent)
    sid = reply["result"]["session_id"]
    await first.disconnect()
    with override_settings(A2UI={"RESUME_WINDOW_SECONDS": 1}):
        await database_sync_to_async(A2UISessionLog.objects.filter(pk=sid).update)(
            detached_at=timezone.now() - timedelta(seconds=5))
        _, reply = await open_tab(user, agent)
        assert reply["result"]["session_id"] != sid
        # an explicit resume is refused too: the sweep closes it, not both
        _, again = await open_tab(user, agent, session_id=sid)
        assert again["error"]["code"] == -32000


# The person's oldest detached sessions beyond the cap make room ----------------------------


@override_settings(A2UI={"MAX_DETACHED_SESSIONS_PER_PERSON": 2})
async def test_limit_replaces_the_persons_oldest_detached_sessions(user, other_user, agent):
    await set_limit(agent, 3)
    _, reply = await open_tab(other_user, agent)
    assert "result" in reply
    mine = []
    for _ in range(2):
        comm, reply = await open_tab(user, agent)
        mine.append(reply["result"]["session_id"])
    for n, comm_sid in enumerate(mine):
        await database_sync_to_async(A2UISessionLog.objects.filter(pk=comm_sid).update)(
            detached_at=timezone.now() - timedelta(seconds=30 - n))
    # The v0.9 handshake never takes over; it replaces the oldest of the two detached ones (a cap of 2).
    token = await database_sync_to_async(tokens.issue_stream_token)(user, agent)
    session, resumed = await session_actions.aadmit(token.record, {"name": "x"}, {})
    assert resumed is False
    oldest, newer = await get(mine[0]), await get(mine[1])
    assert oldest.state == "closed" and oldest.close_reason == admission.REPLACED_REASON
    assert newer.state in A2UISessionLog.LIVE_STATES
    audit = await database_sync_to_async(lambda: AuditEvent.objects.filter(
        action="session.closed", session_id=oldest.session_id).count())()
    assert audit == 1


async def test_a2ui_init_replaces_detached_sessions_past_the_window(user, agent, agent_key):
    """Not yet swept (the sweep runs every 15 s): they do not block the person's new tab."""
    await set_limit(agent, 4)
    held = override_settings(A2UI={"MAX_DETACHED_SESSIONS_PER_PERSON": 2})
    held.enable()
    bot = await connect_agent(agent_key)
    old = []
    for _ in range(2):
        comm, reply = await open_tab(user, agent)
        old.append(reply["result"]["session_id"])
    await database_sync_to_async(A2UISessionLog.objects.filter(pk__in=old).update)(
        detached_at=timezone.now() - timedelta(hours=1))
    _, reply = await open_tab(user, agent)
    assert "result" in reply and reply["result"]["session_id"] not in old
    closed = await recv_until(bot, lambda m: m.get("method") == "session.closed")
    held.disable()
    assert closed["params"]["session_id"] == old[0]
    assert (await get(old[0])).close_reason == admission.REPLACED_REASON


# Two tabs at once: the database decides --------------------------------------------------------


@pytest.mark.skipif(connection.vendor != "postgresql",
                    reason="row locks across connections need PostgreSQL")
def test_two_tabs_at_once_cannot_both_take_over_one_session(user, agent):
    # Six tabs of one person: well within the person's share (half the agent's limit).
    agent.max_concurrent_sessions = 20
    agent.save(update_fields=["max_concurrent_sessions"])
    detached = tokens.issue_stream_token(user, agent).record
    sid = admission.admit(detached, {}, {}).session.session_id
    A2UISessionLog.objects.filter(pk=sid).update(detached_at=timezone.now())
    records = [tokens.issue_stream_token(user, agent).record for _ in range(6)]
    barrier = threading.Barrier(len(records))
    results = []

    def tab(record):
        try:
            barrier.wait()
            opened = admission.admit(record, {}, {}, reuse=True)
            results.append((opened.session.session_id, opened.resumed))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=tab, args=(r,)) for r in records]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert len(results) == len(records)
    assert [s for s, resumed in results if resumed] == [sid]
    assert len({s for s, _ in results}) == len(records)


def test_a_claim_lost_to_another_process_tries_the_next(user, agent, monkeypatch):
    """The take-over is a conditional UPDATE: a candidate claimed in between is skipped."""
    first, second = (admission.admit(tokens.issue_stream_token(user, agent).record, {}, {})
                     .session.session_id for _ in range(2))
    now = timezone.now()
    A2UISessionLog.objects.filter(pk=first).update(detached_at=now)
    A2UISessionLog.objects.filter(pk=second).update(detached_at=now - timedelta(seconds=1))
    real_update = type(A2UISessionLog.objects.all()).update
    raced = []

    def update(qs, **kwargs):
        if "token" in kwargs and not raced:  # another process claims it just before us
            raced.append(real_update(A2UISessionLog.objects.filter(pk=first), detached_at=None))
        return real_update(qs, **kwargs)

    monkeypatch.setattr(type(A2UISessionLog.objects.all()), "update", update)
    opened = admission.admit(tokens.issue_stream_token(user, agent).record, {}, {}, reuse=True)
    assert raced == [1]
    assert opened.resumed and opened.session.session_id == second


# Detached sessions close on time --------------------------------------------------------------


async def test_detached_session_closes_on_time_despite_agent_pushes(user, agent, agent_key):
    bot = await connect_agent(agent_key)
    tab, reply = await open_tab(user, agent)
    sid = reply["result"]["session_id"]
    with override_settings(A2UI={"RESUME_WINDOW_SECONDS": 1}):
        await tab.disconnect()
        detached = (await get(sid)).detached_at
        assert detached is not None
        assert await sweep.sweep() == (0, 0)  # inside the window: kept
        for n in range(6):  # an agent (a demo re-running its walkthrough) keeps pushing
            await send(bot, {"jsonrpc": "2.0", "method": "ui.notify", "params": {
                "session_id": sid, "level": "info", "title": f"push {n}"}})
            await asyncio.sleep(0.25)
        await buffer.flush()
        assert (await get(sid)).last_activity > detached
        closed, _ = await sweep.sweep()
    row = await get(sid)
    assert closed == 1 and row.state == "closed" and "not resumed" in row.close_reason


async def test_sweep_keeps_a_session_a_socket_came_back_to(user, agent):
    """The detach write raced a resume on another process: the socket count says attached."""
    tab, reply = await open_tab(user, agent)
    sid = reply["result"]["session_id"]
    await database_sync_to_async(A2UISessionLog.objects.filter(pk=sid).update)(
        detached_at=timezone.now() - timedelta(hours=1))
    assert await sweep.sweep() == (0, 0)
    row = await get(sid)
    assert row.state in A2UISessionLog.LIVE_STATES and row.detached_at is None
    await tab.disconnect()
    assert not await shared.socket_count(row.session_id.hex)
