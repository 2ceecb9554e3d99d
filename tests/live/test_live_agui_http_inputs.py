"""Tier 2: AG-UI 1.0 run inputs through two ``manage.py a2ui_serve`` processes (PostgreSQL,
Redis): concurrent first runs of a new thread, a body of many messages, bodies over the limit.

* Five concurrent first runs of one new ``threadId``, spread over both processes: exactly one
  opens the session and streams, the others are 409 with a JSON body (issue 23, item 6: 2-3
  sessions and 2-3 streaming runs in 4 of 6 trials before).
* 1,000 user messages in one body reach another client of the session as one frame (item 5).
* A body over the limit is a JSON 413, with a Content-Length past Django's
  DATA_UPLOAD_MAX_MEMORY_SIZE and streamed without one (item 11).
"""

import asyncio
import json
import uuid

import httpx
import pytest

from a2ui.conf import a2ui_settings
from a2ui.models import A2UISessionLog, AgentRun
from tests.live.aguihttp import post_run, run_input
from tests.live.client import ahttp, init_session, open_agent, open_user
from tests.live.test_live_mcp import issue

pytestmark = pytest.mark.django_db(transaction=True)
AGUI = "stream_agui"


def _counts(thread):
    return (A2UISessionLog.objects.filter(client_info__agui_thread_id=thread).count(),
            AgentRun.objects.filter(thread_id=thread).count(),
            AgentRun.objects.filter(thread_id=thread, status="running").count())


def _running(thread):
    return list(AgentRun.objects.filter(thread_id=thread, status="running").values_list(
        "session_id", "run_id"))


async def test_concurrent_first_runs_of_a_new_thread_across_two_processes(two_servers, user,
                                                                          agent, agent_key):
    from channels.db import database_sync_to_async

    servers = two_servers
    token = await issue(user, agent, AGUI)
    for trial in range(5):
        thread = f"race-{uuid.uuid4().hex[:8]}"
        bodies = [run_input(thread_id=thread, run_id=f"r{i}") for i in range(5)]
        streams = await asyncio.gather(*(
            post_run(servers[i % 2].url, body, token) for i, body in enumerate(bodies)))
        try:
            statuses = sorted(s.status for s in streams)
            assert statuses == [200, 409, 409, 409, 409], (
                trial, [(s.status, getattr(s, "json", None)) for s in streams])
            for s in streams:
                if s.status == 409:
                    assert s.json["error"]["field"] == "threadId", s.json
                else:
                    assert (await s.next())["type"] == "RUN_STARTED"
            sessions, run_rows, running = await database_sync_to_async(_counts)(thread)
            assert (sessions, run_rows, running) == (1, 1, 1), trial
        finally:
            for s in streams:
                if s.status == 200:
                    await s.close()
            # The agent ends the trial's run: a run whose client went waits for it to come back
            # (AGUI_RESUME_SECONDS), its session in use meanwhile, and five of them would be
            # the person's share of sessions.
            for sid, run_id in await database_sync_to_async(_running)(thread):
                status, _ = await ahttp("POST", f"{servers[0].url}/api/v4/sessions/{sid}/runs/"
                                        "finish", {"run_id": run_id},
                                        headers={"Authorization": f"Bearer {agent_key}"})
                assert status == 200


async def test_a_thousand_messages_reach_another_client_as_one_frame(two_servers, user, agent,
                                                                      agent_key):
    """The issue's 147 KB body: 1,000 user messages were 1,000 transcript entries and 1,000
    frames to each other client; now the last AGUI_MAX_NEW_MESSAGES, as one notification."""
    a, b = two_servers
    bot = await open_agent(a, agent_key)
    token = await issue(user, agent, AGUI)
    thread = f"many-{uuid.uuid4().hex[:8]}"
    first = await post_run(b.url, run_input(thread_id=thread, run_id="r0", text="hello"), token)
    assert first.status == 200
    sid = (await bot.recv_until(lambda m: m.get("method") == "agui.run_started"))["params"][
        "session_id"]
    await bot.call("agui.run_finish", {"session_id": sid, "run_id": "r0"}, 1)
    await first.rest()
    await first.close()
    person = await open_user(a, await issue(user, agent))
    assert await init_session(person, session_id=sid) == sid
    texts = [f"message {i} " + "x" * 100 for i in range(1000)]
    body = run_input(thread_id=thread, run_id="r1", messages=[
        {"id": f"m{i}", "role": "user", "content": t} for i, t in enumerate(texts)])
    assert len(json.dumps(body)) > 140_000
    run = await post_run(b.url, body, token)
    assert run.status == 200, getattr(run, "json", None)
    notice = (await bot.recv_until(lambda m: m.get("method") == "agui.run_started"
                                   and m["params"]["run_id"] == "r1"))["params"]
    kept = texts[-a2ui_settings.AGUI_MAX_NEW_MESSAGES:]
    assert [m["content"] for m in notice["messages"]] == kept
    frame = await person.recv_until(lambda m: m.get("method") == "ui.activity"
                                    and m["params"]["kind"] != "snapshot")
    assert frame["params"]["kind"] == "message.batch"
    assert [m["content"] for m in frame["params"]["data"]["messages"]] == kept
    await bot.call("agui.run_finish", {"session_id": sid, "run_id": "r1"}, 2)
    await run.rest()
    await run.close()
    with pytest.raises(asyncio.TimeoutError):  # nothing more: one frame, not one per message
        await person.recv_until(lambda m: m.get("method") == "ui.activity", timeout=1)


async def _post_raw(url, content, headers):
    async with httpx.AsyncClient(timeout=60) as client:
        response = await client.post(url, content=content, headers=headers)
        return response.status_code, response.headers.get("content-type", ""), response.content


async def test_bodies_over_the_limit_are_json_413(daphne_server, user, agent, agent_key):
    """60 MB with a Content-Length (past DATA_UPLOAD_MAX_MEMORY_SIZE: Django's HTML 400
    before) and a body over MAX_PAYLOAD_SIZE streamed without one, on the run endpoint and a
    DRF endpoint of the app."""
    server = daphne_server()
    token = await issue(user, agent, AGUI)
    limit = a2ui_settings.MAX_PAYLOAD_SIZE
    run_url = f"{server.url}/api/v4/agui/run"
    rest_url = f"{server.url}/api/v4/sessions/{uuid.uuid4()}/messages"
    big = b'{"x": "' + b"x" * (60 * 1024 * 1024) + b'"}'
    over = b'{"x": "' + b"x" * (limit + 10) + b'"}'

    async def chunks(data, size=64 * 1024):
        for i in range(0, len(data), size):
            yield data[i:i + size]

    cases = [(run_url, {"Authorization": f"Bearer {token}"}),
             (rest_url, {"Authorization": f"Bearer {agent_key}"})]
    for url, auth in cases:
        headers = {"Content-Type": "application/json", **auth}
        for name, content in (("60 MB", big), ("streamed", chunks(over))):
            status, ctype, raw = await _post_raw(url, content, headers)
            assert status == 413, (url, name, status, raw[:300])
            assert ctype.startswith("application/json"), (url, name, ctype, raw[:300])
            assert json.loads(raw), raw[:300]
    assert "Traceback" not in server.log()
