"""A run whose stream was lost with its process (issue 23, item 8), in process: the run's
stream holds a lease (a2ui.agui1.runleases); a running run past its first lease with no
lease held lost its stream. Such a run does not hold its thread, the agent hears
``agui.run_ended`` (``cancelled``, ``reason: "stream_lost"``) from the thread's next run or
the housekeeping sweep, and an agent ending it is told the client did not receive the end.
The live test (tests/live/test_live_agui_lost_stream.py) kills the serving process."""

import asyncio
import time
from datetime import timedelta

import pytest
from channels.db import database_sync_to_async
from django.utils import timezone

from a2ui import agents, tokens
from a2ui.agui1 import runs as agui_runs
from a2ui.core.errors import DomainError
from a2ui.infra import leasebackends, shared
from a2ui.models import A2UISessionLog, AgentRun
from a2ui.push import sweep
from a2ui.rpc.errors import ProtocolError
from tests.agui1.sse import issue, post, start

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
async def _settled_redis():
    """On Redis (the PostgreSQL + Redis tier): its leases began long ago, so a missing lease
    is a lapsed one (a Redis younger than a lease says "unknown": test_agui1_run_leases)."""
    redis = shared.backend()
    if redis is not shared.local:
        await redis.execute(("SET", leasebackends.SINCE, str(int((time.time() - 3600) * 1000))))


@database_sync_to_async
def a_lost_run(user, agent, run_id="r1", thread="t1"):
    """Thread ``thread``'s session with a run its process left running a minute ago: its row
    beat 10 s ago (within three keepalives), nobody holds its lease."""
    now = timezone.now()
    session = A2UISessionLog.objects.create(
        user=user, agent=agent, token=tokens.issue_stream_token(user, agent).record,
        state=A2UISessionLog.State.ACTIVE, client_info={"agui_thread_id": thread},
        thread_id=thread)
    AgentRun.objects.create(session=session, run_id=run_id, thread_id=thread,
                            notice={"run_id": run_id, "messages": []},
                            started_at=now - timedelta(minutes=1),
                            heartbeat_at=now - timedelta(seconds=10))
    return str(session.session_id)


@database_sync_to_async
def row(run_id):
    return AgentRun.objects.filter(run_id=run_id).values("status", "outcome").get()


async def settled(run_id, status):
    """The run's row once it has ``status`` (a closed stream ends its run as it leaves)."""
    for _ in range(300):
        found = await row(run_id)
        if found["status"] == status:
            return found
        await asyncio.sleep(0.01)
    raise AssertionError(f"{run_id}: {found}")


@database_sync_to_async
def age(run_id):
    AgentRun.objects.filter(run_id=run_id).update(
        started_at=timezone.now() - timedelta(minutes=1))


async def ended(listener, run_id):
    while True:
        event = await listener.next(timeout=3)
        if event["method"] == "agui.run_ended" and event["params"]["run_id"] == run_id:
            return event["params"]


async def test_a_lost_run_frees_its_thread_and_the_agent_hears_it_ended(user, agent):
    sid = await a_lost_run(user, agent)
    token = await issue(user, agent)
    async with agents.events(agent, events="all") as listener:
        run = await start(token, "r2")  # was 409 until the row had not beaten for 50 s
        assert (await run.next())["type"] == "RUN_STARTED"
        params = await ended(listener, "r1")
    assert params["session_id"] == sid and params["status"] == "cancelled"
    assert params["reason"] == "stream_lost" and "did not receive" in params["message"]
    assert (await row("r1"))["status"] == AgentRun.Status.CANCELLED

    # Finishing the lost run does not claim the client got it.
    with pytest.raises(DomainError) as info:
        await agents.afinish_run(agent, sid, "r1", {"late": True})
    assert ProtocolError.of(info.value).code == -32602
    assert info.value.data["stream_lost"] is True and info.value.data["status"] == "cancelled"
    assert "did not receive" in info.value.message
    # The new run's stream is alive: its end is delivered.
    done = await agents.afinish_run(agent, sid, "r2")
    assert done["ended"] is True and done["delivered"] is True
    assert (await run.rest())[-1]["type"] == "RUN_FINISHED"


async def test_a_run_whose_stream_lives_holds_its_thread(user, agent):
    token = await issue(user, agent)
    run = await start(token, "r1")
    assert (await run.next())["type"] == "RUN_STARTED"
    await age("r1")  # past its first lease: only the lease its stream holds keeps it
    refused = await post(token, "r2")
    assert refused.status_code == 409 and refused.json()["error"]["field"] == "threadId"
    # The client went away: the run waits for it to come back (AGUI_RESUME_SECONDS), but a new
    # run of the thread takes its place at once (a page reload starts one).
    await run.close()
    assert (await post(token, "r3")).status_code == 200
    assert (await settled("r1", AgentRun.Status.CANCELLED))["outcome"]["reason"] == "superseded"


async def test_ending_a_run_whose_stream_is_lost_says_it_was_not_delivered(user, agent):
    sid = await a_lost_run(user, agent)
    done = await agents.afinish_run(agent, sid, "r1", {"ok": 1})
    assert done["ended"] is True and done["delivered"] is False
    assert await row("r1") == {"status": "finished", "outcome": {"result": {"ok": 1}}}
    sid = await a_lost_run(user, agent, "r2", "t2")
    failed = await agents.aerror_run(agent, sid, "r2", "failed")
    assert failed["ended"] is True and failed["delivered"] is False


async def test_the_housekeeping_sweep_ends_lost_runs_and_tells_the_agent(user, agent):
    sid = await a_lost_run(user, agent)
    token = await issue(user, agent)
    young = await start(token, "r-young", thread="t-young")  # its lease: it is streaming
    assert (await young.next())["type"] == "RUN_STARTED"
    async with agents.events(agent, events="all") as listener:
        await sweep.sweep()
        params = await ended(listener, "r1")
    assert params["session_id"] == sid and params["reason"] == "stream_lost"
    assert (await row("r1"))["outcome"]["reason"] == "stream_lost"
    assert (await row("r-young"))["status"] == AgentRun.Status.RUNNING
    await young.close()


async def test_a_notice_that_fails_does_not_stop_ending_the_lost_runs(user, agent, monkeypatch):
    """Ending lost runs goes on when a notice cannot be sent (Redis away): the thread's next
    run is not a 500 and the sweep ends every lost run."""
    async def unreachable(*args, **kwargs):
        raise ConnectionError("Redis away")

    await a_lost_run(user, agent)
    await a_lost_run(user, agent, "r2", "t2")
    monkeypatch.setattr(agui_runs.stream, "emit", unreachable)
    assert await agui_runs.aend_lost() == 2
    assert [(await row(r))["status"] for r in ("r1", "r2")] == ["cancelled", "cancelled"]
