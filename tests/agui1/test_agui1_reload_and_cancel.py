"""Interrupts across a page reload, and a cancelled interrupt (docs/protocol-agui.md,
"Interrupts"), in process: a new run of the thread (what a reloaded page starts, knowing
nothing of the interrupt) shows the open interrupt again, and its resume answers the agent's
request exactly once; a cancelled interrupt reaches the agent as a cancellation (-32013
``cancelled_by: "person"``, ``request.closed`` with it), never as a closed session, and the
session goes on."""

import asyncio

import pytest
from channels.db import database_sync_to_async

from a2ui import agents
from a2ui.models import A2UISessionLog, AgentRun, PendingRequest
from a2ui.rpc.errors import ProtocolError
from tests.agui1.sse import Run, issue, post, start
from tests.wsutil import connect_agent, recv_until, send

pytestmark = pytest.mark.django_db(transaction=True)


@database_sync_to_async
def session_of(run_id):
    return str(AgentRun.objects.get(run_id=run_id).session_id)


@database_sync_to_async
def request_row(request_id):
    return PendingRequest.objects.values("status", "answer", "delivered_at").get(
        request_id=request_id)


@database_sync_to_async
def session_state(sid):
    return A2UISessionLog.objects.get(session_id=sid).state


async def asked(request_id):
    for _ in range(300):
        if await database_sync_to_async(PendingRequest.objects.filter(
                request_id=request_id).exists)():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"{request_id} was not asked")


def resume(request_id, status="resolved", payload=None):
    entry = {"interruptId": request_id, "status": status}
    if payload is not None:
        entry["payload"] = payload
    return [entry]


async def interrupted(token, agent, run_id, request_id):
    """A run during which the agent asks (``request_input``): (session id, the waiting call,
    the run's interrupt)."""
    run = await start(token, run_id)
    assert (await run.next())["type"] == "RUN_STARTED"
    sid = await session_of(run_id)
    asking = asyncio.ensure_future(agents.arequest_input(agent, sid, "text", "Name?",
                                                         request_id=request_id))
    final = (await run.rest())[-1]
    assert final["type"] == "RUN_FINISHED" and final["outcome"]["type"] == "interrupt"
    (interrupt,) = final["outcome"]["interrupts"]
    assert interrupt["id"] == request_id
    return sid, asking, interrupt


async def test_a_reload_during_an_interrupt_shows_it_again_and_its_resume_answers_once(
        user, agent):
    token = await issue(user, agent)
    sid, asking, interrupt = await interrupted(token, agent, "r1", "name")

    # The page reloads: the new page knows nothing of the interrupt and starts a new run of
    # the thread (its history, no resume). The run shows the same interrupt and ends at it.
    for run_id in ("r2", "r3"):  # and once more: it stays until it is answered
        events = await (await start(token, run_id, text="")).rest()
        assert [e["type"] for e in events] == ["RUN_STARTED", "STATE_SNAPSHOT", "RUN_FINISHED"]
        assert events[-1]["outcome"]["interrupts"] == [interrupt]
    assert not asking.done()

    # Two pages resume it at once: one run answers it, the other is refused (the interrupt is
    # no longer open, or the thread has a run in progress); the agent gets one answer.
    first, second = await asyncio.gather(
        post(token, "r4", text="", resume=resume("name", payload="Ada")),
        post(token, "r5", text="", resume=resume("name", payload="Bob")))
    statuses = sorted([first.status_code, second.status_code])
    assert statuses[0] == 200 and statuses[1] in (400, 409), statuses
    winner = "r4" if first.status_code == 200 else "r5"
    run = Run(first if winner == "r4" else second)
    assert (await run.next())["type"] == "RUN_STARTED"  # the stream gives the answer
    answer = await asyncio.wait_for(asking, 3)
    assert answer == ("Ada" if winner == "r4" else "Bob")
    row = await request_row("name")
    assert row["status"] == "answered" and row["answer"] == answer
    assert row["delivered_at"] is not None

    # A resume of it later (the old page, a retry) is refused before any run.
    late = await post(token, "r6", text="", resume=resume("name", payload="Eve"))
    assert late.status_code == 400 and late.json()["error"]["field"] == "resume.0.interruptId"
    await agents.afinish_run(agent, sid, winner, {"name": answer})
    assert (await run.rest())[-1]["result"] == {"name": answer}
    assert (await request_row("name"))["answer"] == answer


async def test_a_cancelled_interrupt_reaches_the_agent_as_a_cancellation(user, agent):
    token = await issue(user, agent)
    sid, asking, _ = await interrupted(token, agent, "r1", "name")
    run = await start(token, "r2", text="", resume=resume("name", "cancelled"))
    assert (await run.next())["type"] == "RUN_STARTED"
    with pytest.raises(ProtocolError) as info:
        await asyncio.wait_for(asking, 3)
    assert info.value.code == -32013, info.value  # not -32000 "Session closed ..."
    assert info.value.data == {"session_id": sid, "request_id": "name",
                               "cancelled_by": "person"}
    assert (await request_row("name"))["status"] == "cancelled"

    # The session goes on: the agent carries on in the same run, asks again in the next one.
    await agents.anotify(agent, sid, "Fine, no name.")
    await agents.afinish_run(agent, sid, "r2", {"cancelled": True})
    events = await run.rest()
    assert events[-1]["type"] == "RUN_FINISHED" and events[-1]["result"] == {"cancelled": True}
    assert await session_state(sid) in A2UISessionLog.LIVE_STATES
    _, again, _ = await interrupted(token, agent, "r3", "name-2")
    run = await start(token, "r4", text="", resume=resume("name-2", payload="Ada"))
    assert (await run.next())["type"] == "RUN_STARTED"
    assert await asyncio.wait_for(again, 3) == "Ada"
    await agents.afinish_run(agent, sid, "r4")
    assert (await run.rest())[-1]["type"] == "RUN_FINISHED"


async def test_the_agent_socket_hears_a_cancel_as_a_cancellation(user, agent, agent_key):
    """On the agent WebSocket: the waiting ``ui.request_input`` is answered -32013 with
    ``cancelled_by: "person"``; asked as a notification, the outcome is ``request.closed``
    ``cancelled`` with ``cancelled_by: "person"``. A confirm's cancel is a decline."""
    comm = await connect_agent(agent_key)
    token = await issue(user, agent)
    run = await start(token, "r1")
    assert (await run.next())["type"] == "RUN_STARTED"
    sid = await session_of("r1")
    await send(comm, {"jsonrpc": "2.0", "id": 7, "method": "ui.request_input", "params": {
        "session_id": sid, "request_id": "q1", "input_type": "text", "prompt": "Name?"}})
    assert (await run.rest())[-1]["outcome"]["interrupts"][0]["id"] == "q1"
    run = await start(token, "r2", text="", resume=resume("q1", "cancelled"))
    assert (await run.next())["type"] == "RUN_STARTED"
    reply = await recv_until(comm, lambda m: m.get("id") == 7, limit=100)
    assert reply["error"]["code"] == -32013, reply
    assert reply["error"]["data"] == {"session_id": sid, "request_id": "q1",
                                      "cancelled_by": "person"}

    await send(comm, {"jsonrpc": "2.0", "method": "ui.request_input", "params": {
        "session_id": sid, "request_id": "q2", "input_type": "text", "prompt": "Age?"}})
    assert (await run.rest())[-1]["outcome"]["interrupts"][0]["id"] == "q2"
    await send(comm, {"jsonrpc": "2.0", "id": 8, "method": "ui.confirm", "params": {
        "session_id": sid, "request_id": "q3", "title": "Go?"}})
    await asked("q3")
    # The next run cancels q2 and shows q3 (asked between runs); the one after cancels q3.
    events = await (await start(token, "r3", text="", resume=resume("q2", "cancelled"))).rest()
    assert events[-1]["outcome"]["interrupts"][0]["id"] == "q3"
    closed = await recv_until(comm, lambda m: m.get("method") == "request.closed", limit=100)
    assert closed["params"] == {"session_id": sid, "request_id": "q2", "status": "cancelled",
                                "method": "ui.request_input", "cancelled_by": "person"}
    run = await start(token, "r4", text="", resume=resume("q3", "cancelled"))
    assert (await run.next())["type"] == "RUN_STARTED"
    declined = await recv_until(comm, lambda m: m.get("id") == 8, limit=100)
    assert declined["result"] == {"approved": False, "reason": "cancelled"}
    assert await session_state(sid) in A2UISessionLog.LIVE_STATES
    await agents.afinish_run(agent, sid, "r4")
    assert (await run.rest())[-1]["type"] == "RUN_FINISHED"
    await comm.disconnect()


async def test_a_cancel_no_agent_heard_waits_in_a2ui_pending_as_the_persons(user, agent,
                                                                           agent_key):
    """The agent's socket went while its question waited; the person cancels it: the outcome
    waits for the agent (``a2ui.pending``) as ``cancelled`` ``cancelled_by: "person"``."""
    comm = await connect_agent(agent_key)
    token = await issue(user, agent)
    run = await start(token, "r1")
    assert (await run.next())["type"] == "RUN_STARTED"
    sid = await session_of("r1")
    await send(comm, {"jsonrpc": "2.0", "id": 7, "method": "ui.request_input", "params": {
        "session_id": sid, "request_id": "q1", "input_type": "text", "prompt": "Name?"}})
    assert (await run.rest())[-1]["outcome"]["interrupts"][0]["id"] == "q1"
    await comm.disconnect()
    run = await start(token, "r2", text="", resume=resume("q1", "cancelled"))
    assert (await run.next())["type"] == "RUN_STARTED"
    for _ in range(100):
        if (await request_row("q1"))["status"] == "cancelled":
            break
        await asyncio.sleep(0.02)
    (item,) = await agents.apending(agent, sid)
    assert item["request_id"] == "q1" and item["status"] == "cancelled"
    assert item["cancelled_by"] == "person" and item["answer"] is None
    await agents.afinish_run(agent, sid, "r2")
    assert (await run.rest())[-1]["type"] == "RUN_FINISHED"
