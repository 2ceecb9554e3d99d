"""A run shows every open question of its session (issue 23, item 3): a question the agent
asked while no run was streaming is the next run's interrupt, and that run's resume answers
it. In process, through Django's async test client and the Python API's waiting calls."""

import asyncio

import pytest
from channels.db import database_sync_to_async

from a2ui import agents
from a2ui.models import AgentRun, PendingRequest
from tests.agui1.sse import issue, start

pytestmark = pytest.mark.django_db(transaction=True)


@database_sync_to_async
def _session_of(run_id):
    return str(AgentRun.objects.get(run_id=run_id).session_id)


@database_sync_to_async
def _status(run_id):
    return AgentRun.objects.get(run_id=run_id).status


@database_sync_to_async
def _open_count():
    return PendingRequest.objects.filter(status=PendingRequest.Status.PENDING).count()


async def _asked(n):
    for _ in range(300):
        if await _open_count() == n:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"{n} open requests expected")


async def _a_finished_run(token, agent):
    """Thread t1's session, after a first run the agent finished: no run streams now."""
    run = await start(token, "r1")
    assert (await run.next())["type"] == "RUN_STARTED"
    sid = await _session_of("r1")
    await agents.afinish_run(agent, sid, "r1")
    assert (await run.rest())[-1]["type"] == "RUN_FINISHED"
    return sid


async def test_a_question_asked_between_runs_is_the_next_runs_interrupt(user, agent):
    token = await issue(user, agent)
    sid = await _a_finished_run(token, agent)
    asking = asyncio.ensure_future(agents.arequest_input(agent, sid, "text", "Name?",
                                                         request_id="name"))
    await _asked(1)

    # The next run starts, shows the question as its interrupt and ends waiting for it
    # (it streamed RUN_STARTED, STATE_SNAPSHOT and keepalives until the run timeout).
    events = await (await start(token, "r2")).rest()
    assert [e["type"] for e in events] == ["RUN_STARTED", "STATE_SNAPSHOT", "RUN_FINISHED"]
    outcome = events[-1]["outcome"]
    assert outcome["type"] == "interrupt"
    (interrupt,) = outcome["interrupts"]
    assert interrupt["id"] == "name" and interrupt["reason"] == "input_required"
    assert interrupt["message"] == "Name?" and interrupt["responseSchema"] == {"type": "string"}
    assert interrupt["metadata"]["a2ui"]["kind"] == "input"
    assert await _status("r2") == AgentRun.Status.INTERRUPTED
    assert not asking.done()

    # Its resume answers it: the agent's waiting call returns the answer, the run streams on.
    run = await start(token, "r3", text="", resume=[
        {"interruptId": "name", "status": "resolved", "payload": "Ada"}])
    assert [(await run.next())["type"], (await run.next())["type"]] == [
        "RUN_STARTED", "STATE_SNAPSHOT"]
    assert await asyncio.wait_for(asking, 3) == "Ada"
    await agents.anotify(agent, sid, "Hello Ada")
    await agents.afinish_run(agent, sid, "r3", {"name": "Ada"})
    events = await run.rest()
    assert [e["type"] for e in events] == ["CUSTOM", "TEXT_MESSAGE_START",
                                           "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END",
                                           "RUN_FINISHED"], events
    assert events[0]["name"] == "a2ui.request_closed"
    assert events[-1]["result"] == {"name": "Ada"}
    assert await _status("r3") == AgentRun.Status.FINISHED


async def test_two_open_questions_are_one_interrupt_and_one_resume_answers_both(user, agent):
    token = await issue(user, agent)
    sid = await _a_finished_run(token, agent)
    name = asyncio.ensure_future(agents.arequest_input(agent, sid, "text", "Name?",
                                                       request_id="q-name"))
    await _asked(1)
    sure = asyncio.ensure_future(agents.aconfirm(agent, sid, "Deploy?", description="Now",
                                                 request_id="q-sure"))
    await _asked(2)

    final = (await (await start(token, "r2")).rest())[-1]
    assert final["type"] == "RUN_FINISHED" and final["outcome"]["type"] == "interrupt"
    assert [(i["id"], i["reason"]) for i in final["outcome"]["interrupts"]] == [
        ("q-name", "input_required"), ("q-sure", "confirmation_required")]

    # A resume answering one of them: the other is the new run's interrupt again.
    run = await start(token, "r3", text="", resume=[
        {"interruptId": "q-name", "status": "resolved", "payload": "Ada"}])
    events = await run.rest()
    assert await asyncio.wait_for(name, 3) == "Ada"
    assert events[-1]["type"] == "RUN_FINISHED", events
    assert [i["id"] for i in events[-1]["outcome"]["interrupts"]] == ["q-sure"]
    assert not sure.done()

    run = await start(token, "r4", text="", resume=[
        {"interruptId": "q-sure", "status": "resolved", "payload": True}])
    assert (await run.next())["type"] == "RUN_STARTED"
    assert await asyncio.wait_for(sure, 3) == {"approved": True, "reason": ""}
    await agents.afinish_run(agent, sid, "r4")
    assert (await run.rest())[-1]["type"] == "RUN_FINISHED"
    assert await _status("r4") == AgentRun.Status.FINISHED
