"""Session lifecycle (seed 000 section 6) and metrics (section 6.3) recorded in A2UISessionLog."""

from datetime import timedelta

import pytest
from channels.db import database_sync_to_async
from django.test import override_settings
from django.utils import timezone

from a2ui import tokens
from a2ui.models import A2UISessionLog
from a2ui.push import sessions as session_actions
from a2ui.push import sweep
from a2ui.sessions.counters import buffer
from tests.wsutil import connect_agent, connect_user, init_session, recv, recv_until, send

pytestmark = pytest.mark.django_db(transaction=True)
get = database_sync_to_async(lambda sid: A2UISessionLog.objects.get(pk=sid))


async def test_metrics_counted_and_flushed(stream_token, agent_key):
    agent = await connect_agent(agent_key)
    user = await connect_user(stream_token)
    sid = await init_session(user)
    await recv_until(agent, lambda m: m.get("method") == "session.opened")
    assert (await get(sid)).state == "initialized"
    await send(agent, {"jsonrpc": "2.0", "method": "ui.render", "params": {
        "session_id": sid, "component_id": "c", "component_type": "markdown",
        "data": {"content": "hi"}}})
    await send(agent, {"jsonrpc": "2.0", "method": "ui.request_input", "params": {
        "session_id": sid, "request_id": "r", "input_type": "text", "prompt": "?"}})
    await send(agent, {"jsonrpc": "2.0", "method": "ui.notify", "params": {
        "session_id": sid, "level": "info", "title": "t"}})
    for _ in range(3):
        await recv(user)
    await buffer.flush()
    row = await get(sid)
    assert row.components_rendered == 1
    assert row.inputs_requested == 1
    assert row.message_count >= 4  # a2ui.init + three pushes
    assert row.state == "active"


async def test_rejected_states_are_recorded(user, agent):
    issued = await database_sync_to_async(tokens.issue_stream_token)(user, agent)

    def expire():
        issued.record.expires_at = timezone.now() - timedelta(seconds=1)
        issued.record.save()

    await database_sync_to_async(expire)()
    comm = await connect_user(issued.token)
    assert (await recv(comm))["error"]["code"] == -32006
    rows = await database_sync_to_async(
        lambda: list(A2UISessionLog.objects.filter(state="rejected")))()
    assert len(rows) == 1 and rows[0].close_reason == "Stream token expired."


async def test_idle_session_times_out(stream_token):
    with override_settings(A2UI={"SESSION_INACTIVITY_TIMEOUT_SECONDS": 1}):
        comm = await connect_user(stream_token)
        sid = await init_session(comm)
        err = await recv(comm, timeout=5)
        assert err["error"]["code"] == -32005
        out = await comm.receive_output(timeout=5)
        assert out["type"] == "websocket.close" and out["code"] == 4005
    row = await get(sid)
    assert row.state == "timed_out" and row.closed_at is not None


async def test_resume_of_expired_session_is_minus_32005(stream_token, user, agent):
    comm = await connect_user(stream_token)
    sid = await init_session(comm)
    await comm.disconnect()
    await database_sync_to_async(A2UISessionLog.objects.filter(pk=sid).update)(
        last_activity=timezone.now() - timedelta(hours=2))
    fresh = await database_sync_to_async(lambda: tokens.issue_stream_token(user, agent).token)()
    again = await connect_user(fresh)
    await send(again, {"jsonrpc": "2.0", "id": "r", "method": "a2ui.init", "params": {
        "client_info": {"name": "x", "version": "1"}, "session_id": sid}})
    assert (await recv(again))["error"]["code"] == -32005
    assert (await get(sid)).state == "timed_out"


async def test_resume_someone_elses_session_is_minus_32000(stream_token, other_user, agent):
    comm = await connect_user(stream_token)
    sid = await init_session(comm)
    theirs = await database_sync_to_async(
        lambda: tokens.issue_stream_token(other_user, agent).token)()
    intruder = await connect_user(theirs)
    await send(intruder, {"jsonrpc": "2.0", "id": "r", "method": "a2ui.init", "params": {
        "client_info": {"name": "x", "version": "1"}, "session_id": sid}})
    assert (await recv(intruder))["error"]["code"] == -32000


async def test_detached_session_closes_after_resume_window(stream_token):
    comm = await connect_user(stream_token)
    sid = await init_session(comm)
    await comm.disconnect()
    row = await get(sid)
    assert row.state == "initialized" and row.detached_at is not None
    with override_settings(A2UI={"RESUME_WINDOW_SECONDS": 1}):
        await database_sync_to_async(A2UISessionLog.objects.filter(pk=sid).update)(
            detached_at=timezone.now() - timedelta(seconds=5),
            last_activity=timezone.now() - timedelta(seconds=6))
        await sweep.sweep()
    row = await get(sid)
    assert row.state == "closed" and "not resumed" in row.close_reason
    assert await session_actions.aclose_session(sid) is False  # closing twice is a no-op


async def test_session_detaches_only_when_its_last_socket_goes(stream_token, user, agent):
    first = await connect_user(stream_token)
    sid = await init_session(first)
    fresh = await database_sync_to_async(lambda: tokens.issue_stream_token(user, agent).token)()
    second = await connect_user(fresh)
    await init_session(second, session_id=sid)
    await first.disconnect()
    assert (await get(sid)).detached_at is None
    await second.disconnect()
    assert (await get(sid)).detached_at is not None


async def test_idle_v09_and_agui_sessions_time_out_alike(stream_token, user, agent):
    """The idle watchdog is the connection base's: the v0.9 and AG-UI sockets close an idle
    session as the JSON-RPC socket does (timed out, close 4005), each saying why in its words."""
    import json

    from channels.testing import WebsocketCommunicator

    from a2ui_project.asgi import application
    from tests.surfaces.helpers import V09_CAPS

    agui_token = await database_sync_to_async(lambda: tokens.issue_stream_token(
        user, agent, "stream_agui").token)()
    with override_settings(A2UI={"SESSION_INACTIVITY_TIMEOUT_SECONDS": 1}):
        v09 = WebsocketCommunicator(application, f"/ws/v09/a2ui?token={stream_token}")
        assert (await v09.connect())[0]
        await v09.send_to(text_data=json.dumps({"version": "v0.9", "capabilities": V09_CAPS}))
        v09_sid = json.loads(await v09.receive_from(timeout=5))["session"]["sessionId"]
        agui = WebsocketCommunicator(application, f"/ws/agui?token={agui_token}")
        assert (await agui.connect())[0]
        agui_sid = json.loads(await agui.receive_from(timeout=5))["event"]["session_id"]
        said = {}
        for name, comm in (("v09", v09), ("agui", agui)):
            frames = []
            while True:
                out = await comm.receive_output(timeout=5)
                if out["type"] == "websocket.close":
                    said[name] = (out["code"], frames)
                    break
                frames.append(json.loads(out["text"]))
    code, frames = said["v09"]
    assert code == 4005 and frames[-1]["error"]["code"] == "SESSION_EXPIRED", frames
    code, frames = said["agui"]
    events = [f["event"] for f in frames]
    assert code == 4005 and events[-2]["type"] == "ERROR", events
    assert events[-2]["details"]["reason"] == "session_expired"
    assert events[-1] == {"type": "CONNECTION_STATUS", "status": "DISCONNECTED",
                          "message": "Session inactive for too long."}
    for sid in (v09_sid, agui_sid):
        row = await get(sid)
        assert row.state == "timed_out" and row.closed_at is not None


async def test_an_idle_socket_holds_timers_not_tasks(stream_token):
    """The idle watchdog and the handshake deadline are loop timers while nothing is due: an
    idle socket holds no sleeping task of its own (each costs KBs: docs/performance.md,
    "Capacity")."""
    import asyncio

    def own_tasks():
        return [t for t in asyncio.all_tasks()
                if t.get_coro().__qualname__.startswith("SessionSocket.")]

    comm = await connect_user(stream_token)
    assert own_tasks() == []
    await init_session(comm)
    assert own_tasks() == []
    await comm.disconnect()
