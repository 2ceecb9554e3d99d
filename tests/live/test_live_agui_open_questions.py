"""Tier 2: a question the agent asks while no AG-UI 1.0 run streams (issue 23, item 3), across
two Daphne processes with PostgreSQL and Redis: the agent's socket on A asks, the person's next
run on B shows it as its interrupt, and the run after it (on A) answers it through ``resume``:
the agent's waiting ``ui.request_input`` returns the answer."""

import asyncio

import pytest
from channels.db import database_sync_to_async

from a2ui.models import PendingRequest
from tests.live.aguihttp import post_run, run_input
from tests.live.client import open_agent
from tests.live.test_live_mcp import issue

pytestmark = pytest.mark.django_db(transaction=True)
AGUI = "stream_agui"
MANY = 10**6  # other agents' events may share the PUBLISH channels of a shared Redis server


async def test_a_question_asked_between_runs_is_shown_and_answered(two_servers, user, agent,
                                                                   agent_key):
    a, b = two_servers
    bot = await open_agent(a, agent_key)
    token = await issue(user, agent, AGUI)
    first = run_input(text="Hi")
    stream = await post_run(b.url, first, token)
    assert (await stream.next())["type"] == "RUN_STARTED"
    notice = await bot.recv_until(lambda m: m.get("method") == "agui.run_started"
                                  and m["params"]["run_id"] == first["runId"], limit=MANY)
    sid = notice["params"]["session_id"]
    await bot.send({"jsonrpc": "2.0", "id": "fin", "method": "agui.run_finish",
                    "params": {"session_id": sid, "run_id": first["runId"]}})
    assert (await stream.rest())[-1]["type"] == "RUN_FINISHED"
    await stream.close()

    # No run streams: the agent asks anyway, and waits.
    await bot.send({"jsonrpc": "2.0", "id": "ask", "method": "ui.request_input", "params": {
        "session_id": sid, "request_id": "city", "input_type": "text", "prompt": "City?"}})
    await _asked("city")
    second = run_input(thread_id=first["threadId"], text="Still there?")
    stream = await post_run(b.url, second, token)
    events = await stream.rest()
    await stream.close()
    assert [e["type"] for e in events] == ["RUN_STARTED", "STATE_SNAPSHOT", "RUN_FINISHED"]
    (interrupt,) = events[-1]["outcome"]["interrupts"]
    assert interrupt["id"] == "city" and interrupt["message"] == "City?"

    third = run_input(thread_id=first["threadId"], text="",
                      resume=[{"interruptId": "city", "status": "resolved", "payload": "Oslo"}])
    third["messages"] = []
    stream = await post_run(a.url, third, token)
    assert (await stream.next())["type"] == "RUN_STARTED"
    answer = await bot.recv_until(lambda m: m.get("id") == "ask", limit=MANY)
    assert answer["result"] == "Oslo", answer
    await bot.send({"jsonrpc": "2.0", "id": "fin3", "method": "agui.run_finish",
                    "params": {"session_id": sid, "run_id": third["runId"]}})
    events = await stream.rest()
    assert events[-1]["type"] == "RUN_FINISHED" and "outcome" not in events[-1], events
    await stream.close()
    await bot.close()


async def _asked(request_id):
    """The agent's request is stored (its socket's call is on its way to A)."""
    stored = database_sync_to_async(
        PendingRequest.objects.filter(request_id=request_id).exists)
    for _ in range(200):
        if await stored():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{request_id} was never stored")
