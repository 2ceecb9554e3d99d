"""Hostile and broken agents (in process): what they send passes the content rules or is
refused; a broken stream ends the run with a clear message to the person and an audit entry,
never a traceback or a lost run; caps refuse clearly."""

import asyncio

import pytest
from channels.db import database_sync_to_async

from a2ui.models import AuditEvent, SessionActivity, Surface
from tests.remote.test_remote_runtime import message, runs, settled
from tests.wsutil import connect_user, init_session, send

pytestmark = pytest.mark.django_db(transaction=True)


async def run_once(remote_agent, person_token, function, statuses=("finished",), **extra):
    agent = await database_sync_to_async(remote_agent)(function, **extra)
    person = await connect_user(await database_sync_to_async(person_token)(agent))
    sid = await init_session(person)
    await send(person, message("hi"))
    await settled(sid, statuses)
    await person.disconnect()
    act = await database_sync_to_async(lambda: SessionActivity.objects.get(session_id=sid))()
    ended = await database_sync_to_async(lambda: list(AuditEvent.objects.filter(
        session_id=sid, action="remote.run_ended").values_list("details", flat=True)))()
    return sid, act, ended


async def test_a_hostile_agent_is_held_to_the_content_rules(remote_agent, person_token):
    sid, act, ended = await run_once(remote_agent, person_token, "hostile",
                                     REMOTE_AGENT_MAX_RUN_EVENTS=20_000)
    said = [m for m in act.transcript if m["role"] == "agent"]
    text = "".join(m["content"] for m in said)
    assert "<script>" not in text and "alert(1)" not in text and "<b>" not in text
    assert all(len(m["content"]) <= 16000 for m in said) and len(said) == 4  # split, not lost
    assert text.count(".") >= 10_000
    assert "big" not in act.state  # past ACTIVITY_MAX_STATE_SIZE: refused
    assert not await database_sync_to_async(Surface.objects.filter(session_id=sid).exists)()
    assert any("could not be shown" in m["content"] for m in act.transcript
               if m["role"] == "system")
    assert ended[0]["status"] == "finished" and ended[0]["refused"] == 2


@pytest.mark.parametrize("function, says, code", [
    ("broken_json", "not JSON", "malformed"),
    ("http_error", "HTTP 500", "http_status"),
    ("html_page", "not answer with an event stream", "malformed"),
    ("huge_event", "more than 1048576 bytes", "too_large"),
])
async def test_a_broken_stream_is_a_clear_message_and_an_audit_entry(
        remote_agent, person_token, function, says, code):
    _, act, ended = await run_once(remote_agent, person_token, function, ("error",))
    told = act.transcript[-1]
    assert told["role"] == "system" and says in told["content"], told
    assert "secret stack trace" not in told["content"]
    assert ended[0]["status"] == "error" and ended[0]["code"] == code


async def test_the_agents_cap_of_runs_refuses_clearly(remote_agent, person_token, user):
    from a2ui import tokens
    from tests.conftest import get_user_model

    agent = await database_sync_to_async(remote_agent)("silent", REMOTE_AGENT_MAX_RUNS=1)
    first = await connect_user(await database_sync_to_async(person_token)(agent))
    sid1 = await init_session(first)
    await send(first, message("one"))
    for _ in range(100):
        if await runs(sid1) == ["running"]:
            break
        await asyncio.sleep(0.02)
    other = await database_sync_to_async(get_user_model().objects.create_user)("carol")
    second = await connect_user(await database_sync_to_async(
        lambda: tokens.issue_stream_token(other, agent).token)())
    sid2 = await init_session(second)
    await send(second, message("two"))
    assert await settled(sid2, ("error",)) == ["error"]
    told = await database_sync_to_async(
        lambda: SessionActivity.objects.get(session_id=sid2).transcript[-1])()
    assert told["role"] == "system" and "busy" in told["content"] and "limit 1" in told["content"]
    import uuid

    from a2ui.remote import runtime

    await runtime.cancel(uuid.UUID(sid1), "person")
    await settled(sid1, ("cancelled",))
    await first.disconnect()
    await second.disconnect()
