"""The runtime of remote agents in process (a2ui.remote.runtime): a person's message on the
JSON-RPC socket runs an in-process AG-UI agent, whose streamed reply, surfaces, state, tool
calls and questions reach the person through the same services as an agent's push."""

import asyncio

import pytest
from channels.db import database_sync_to_async

from a2ui.models import AuditEvent, SessionActivity
from a2ui.remote.models import RemoteRun
from tests.wsutil import connect_user, init_session, recv, send

pytestmark = pytest.mark.django_db(transaction=True)


def message(content, rpc_id="m1"):
    return {"jsonrpc": "2.0", "id": rpc_id, "method": "user.message",
            "params": {"content": content}}


async def frames_until(comm, done, timeout=5):
    got = []
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while loop.time() < end:
        try:
            frame = await recv(comm, timeout=max(0.05, end - loop.time()))
        except asyncio.TimeoutError:
            break
        got.append(frame)
        if done(frame, got):
            return got
    raise AssertionError(f"not seen in {timeout} s: {got}")


def activity(frames, kind="message"):
    return [f["params"]["data"] for f in frames
            if f.get("method") == "ui.activity" and f["params"]["kind"] == kind]


def final_agent_message(frame, _):
    data = frame.get("params", {}).get("data", {}) if frame.get("method") == "ui.activity" \
        else {}
    return data.get("role") == "agent" and not (data.get("metadata") or {}).get("streaming")


@database_sync_to_async
def runs(sid):
    return list(RemoteRun.objects.filter(session_id=sid).order_by("created_at")
                .values_list("status", flat=True))


@database_sync_to_async
def audit_actions(sid):
    return list(AuditEvent.objects.filter(session_id=sid).order_by("id")
                .values_list("action", flat=True))


async def settled(sid, statuses=("finished",)):
    for _ in range(200):
        found = await runs(sid)
        if found and all(s in statuses or s in ("merged",) for s in found):
            return found
        await asyncio.sleep(0.02)
    raise AssertionError(await runs(sid))


async def test_a_message_runs_the_agent_and_its_streamed_reply_reaches_the_person(
        remote_agent, person_token):
    agent = await database_sync_to_async(remote_agent)("echo")
    person = await connect_user(await database_sync_to_async(person_token)(agent))
    sid = await init_session(person)
    await send(person, message("hello <b>there</b>"))
    frames = await frames_until(person, final_agent_message)
    replies = [m for m in activity(frames) if m["role"] == "agent"]
    assert replies[-1]["content"] == "You said: hello there"
    assert replies[-1]["sender"] == "shop"
    assert all(m["message_id"] == replies[-1]["message_id"] for m in replies)
    assert await settled(sid) == ["finished"]
    stored = await database_sync_to_async(
        lambda: SessionActivity.objects.get(session_id=sid).transcript)()
    assert [(m["role"], m["content"]) for m in stored] == [
        ("user", "hello there"), ("agent", "You said: hello there")]
    actions = await audit_actions(sid)
    assert "remote.run_started" in actions and "remote.run_ended" in actions
    await person.disconnect()
