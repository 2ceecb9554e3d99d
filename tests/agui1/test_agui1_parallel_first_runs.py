"""A person's first runs of new threads started at once (two tabs, a page with several chats)
all start: none fails in PostgreSQL.

Each request runs as Daphne serves it: in its own ``ThreadSensitiveContext`` (what Django's
ASGI handler opens per request), so its database calls run on a thread of its own, with a
connection of its own, at the same time as the others': the transactions that open a
session and its first run (the agent's row locked, audit events chained) overlap as they do
under load. A lock taken in the wrong order (the agent's row FOR UPDATE against an audit
event's key-share check of it at COMMIT, while the chain's head is held: fixed by locking it
FOR NO KEY UPDATE) was a deadlock here: some runs answered HTTP 500.
"""

import asyncio
import json
import threading

import pytest
from asgiref.sync import ThreadSensitiveContext, sync_to_async
from channels.db import database_sync_to_async
from django.db import connection, connections

from a2ui.infra import dbthreads
from a2ui.models import A2UISessionLog, AgentRun
from tests.agui1 import sse

pytestmark = pytest.mark.django_db(transaction=True)
RUNS = 8


@pytest.fixture
def roomy_agent(agent):
    """Room for every run (the person's share of the agent's sessions: their half)."""
    agent.max_concurrent_sessions = 100
    agent.save()
    return agent


async def first_run(token, k):
    """One run's POST served as Daphne serves it; a run that started is read up to its
    RUN_STARTED (what Daphne does at once: the stream then leaves the request's thread, whose
    connection goes back to the pool), a refusal's thread gives its connection back as
    Django's handler does when the request finishes (the test client does not). A request
    that kept its thread's connection would starve the others of the pool's."""
    async with ThreadSensitiveContext():  # as django.core.handlers.asgi.ASGIHandler does
        response = await sse.post(token, f"par-run-{k}", thread=f"par-thread-{k}")
        if response.status_code != 200:
            await sync_to_async(connections.close_all)()  # on the request's thread
            return response, None, None
        run = sse.Run(response)
        return response, run, await run.next(10)


async def warm_per_message_threads():
    """Each of the per-message pool's threads takes the connection it keeps, as in a process
    that served messages before (a test file run after others in its worker)."""
    barrier = threading.Barrier(dbthreads.THREADS, timeout=10)

    def hold():
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        barrier.wait()  # so that each call has a thread of its own

    await asyncio.gather(*(dbthreads.run(hold) for _ in range(dbthreads.THREADS)))


async def assert_pool_not_drained(within=5.0):
    """The requests gave back what they took: only the per-message threads, the test's own
    thread and Django's one thread-sensitive thread may hold a connection now (within a few
    seconds: a request's thread closes its connections on itself as it ends, after the
    stream let it go)."""
    deadline = asyncio.get_running_loop().time() + within
    while True:
        stats = connection.pool.get_stats()
        in_use = stats["pool_size"] - stats["pool_available"]
        if in_use <= dbthreads.THREADS + 2 or asyncio.get_running_loop().time() > deadline:
            break
        await asyncio.sleep(0.05)
    assert in_use <= dbthreads.THREADS + 2, stats


@database_sync_to_async
def stored(user):
    return (A2UISessionLog.objects.filter(user=user, client_info__agui_thread_id__startswith=
                                          "par-thread-").count(),
            AgentRun.objects.filter(session__user=user, run_id__startswith="par-run-").count())


async def test_first_runs_of_one_person_started_at_once_all_start(user, roomy_agent):
    if connection.vendor != "postgresql":
        pytest.skip("row locks and their deadlocks are PostgreSQL's (SQLite locks the database)")
    token = await sse.issue(user, roomy_agent)
    await warm_per_message_threads()
    for _ in range(2):  # rounds (an interleaving that deadlocks need not come every time),
        # within the person's 20 runs in flight (A2UI_CAP_RUNS_PER_PERSON)
        await database_sync_to_async(
            lambda: AgentRun.objects.filter(session__user=user).delete())()
        await database_sync_to_async(
            lambda: A2UISessionLog.objects.filter(user=user).delete())()
        answers = await asyncio.gather(*(first_run(token, k) for k in range(RUNS)))
        responses = [response for response, _, _ in answers]
        statuses = [r.status_code for r in responses]
        bodies = [r.content if not r.streaming else b"" for r in responses]
        try:
            assert statuses == [200] * RUNS, list(zip(statuses, bodies, strict=True))
            assert [first["type"] for _, _, first in answers] == ["RUN_STARTED"] * RUNS
        finally:
            for _, run, _ in answers:
                if run is not None:
                    await run.close()
        assert await stored(user) == (RUNS, RUNS)
        await assert_pool_not_drained()


async def test_the_runs_bodies_were_refused_or_started_never_failed(user, roomy_agent):
    """The same at once with a run that is refused (a runId used on its thread already):
    a 409, the others 200; never a 500."""
    if connection.vendor != "postgresql":
        pytest.skip("row locks and their deadlocks are PostgreSQL's (SQLite locks the database)")
    token = await sse.issue(user, roomy_agent)
    await warm_per_message_threads()
    first = sse.Run(await sse.post(token, "par-run-0", thread="par-thread-0"))
    assert (await first.next())["type"] == "RUN_STARTED"
    answers = await asyncio.gather(*(first_run(token, k) for k in range(RUNS)))
    await first.close()
    responses = [response for response, _, _ in answers]
    statuses = sorted(r.status_code for r in responses)
    assert statuses == [200] * (RUNS - 1) + [409], [
        (r.status_code, json.loads(r.content) if not r.streaming else None) for r in responses]
    for _, run, first in answers:
        if run is not None:
            assert first["type"] == "RUN_STARTED"
            await run.close()
    await assert_pool_not_drained()
