"""The runs' heartbeats are batched (``runs.aheartbeat``): every running run's stream beats
every AGUI_KEEPALIVE_SECONDS (667 beats a second at 10,000 runs in a process); the beats that
come within ``BEAT_BATCH_SECONDS`` share one statement on PostgreSQL (an UPDATE and a SELECT
elsewhere). Each stream still gets its own run's stored status and outcome, a failure reaches
every stream of the batch, and the next beats go on."""

import asyncio
from datetime import timedelta

import pytest
from channels.db import database_sync_to_async
from django.db import DatabaseError
from django.utils import timezone

from a2ui import tokens
from a2ui.models import A2UISessionLog, AgentRun
from a2ui.runs import records as runs

pytestmark = pytest.mark.django_db(transaction=True)
Status = AgentRun.Status


@database_sync_to_async
def sessions_with_runs(user, agent, n, status=Status.RUNNING, outcome=None, first=0):
    """``n`` sessions (threads ``t<first>``...), each with one run of ``status`` whose row
    beat a minute ago."""
    long_ago = timezone.now() - timedelta(minutes=1)
    made = []
    for k in range(first, first + n):
        session = A2UISessionLog.objects.create(
            user=user, agent=agent, token=tokens.issue_stream_token(user, agent).record,
            state=A2UISessionLog.State.ACTIVE, client_info={"agui_thread_id": f"t{k}"},
            thread_id=f"t{k}")
        AgentRun.objects.create(session=session, run_id=f"r{k}", thread_id=f"t{k}",
                                notice={"run_id": f"r{k}", "messages": []}, status=status,
                                outcome=outcome or {}, started_at=long_ago,
                                heartbeat_at=long_ago)
        made.append((str(session.session_id), f"r{k}"))
    return made


@database_sync_to_async
def beaten(made):
    """How many of the runs ``made`` beat within the last 10 seconds."""
    recent = timezone.now() - timedelta(seconds=10)
    return sum(AgentRun.objects.filter(session_id=sid, run_id=rid,
                                       heartbeat_at__gte=recent).count() for sid, rid in made)


@pytest.fixture
def calls(monkeypatch):
    """The keys of each batch's statements."""
    seen = []
    real = runs.heartbeat_many

    def counted(keys):
        seen.append(list(keys))
        return real(keys)

    monkeypatch.setattr(runs, "heartbeat_many", counted)
    return seen


async def test_beats_at_once_share_one_batch_and_each_gets_its_run(user, agent, calls):
    running = await sessions_with_runs(user, agent, 30)
    ended = (await sessions_with_runs(user, agent, 1, Status.FINISHED, {"ok": True},
                                      first=30))[0]
    missing = (running[0][0], "no-such-run")
    answers = await asyncio.gather(
        *(runs.aheartbeat(sid, rid) for sid, rid in [*running, ended, missing]))
    assert len(calls) == 1 and len(calls[0]) == 32
    assert answers[:30] == [(Status.RUNNING, {})] * 30
    assert answers[30] == (Status.FINISHED, {"ok": True})
    assert answers[31] == (None, {})
    assert await beaten(running) == 30
    assert await beaten([ended]) == 0  # an ended run's row is not touched


async def test_a_batch_holds_at_most_beat_batch_max(user, agent, calls, monkeypatch):
    monkeypatch.setattr(runs, "BEAT_BATCH_MAX", 10)
    made = await sessions_with_runs(user, agent, 25)
    answers = await asyncio.gather(*(runs.aheartbeat(sid, rid) for sid, rid in made))
    assert [len(keys) for keys in calls] == [10, 10, 5]
    assert answers == [(Status.RUNNING, {})] * 25
    assert await beaten(made) == 25


async def test_beats_later_than_the_batch_go_in_the_next(user, agent, calls, monkeypatch):
    monkeypatch.setattr(runs, "BEAT_BATCH_SECONDS", 0.05)
    made = await sessions_with_runs(user, agent, 2)
    assert await runs.aheartbeat(*made[0]) == (Status.RUNNING, {})
    assert await runs.aheartbeat(*made[1]) == (Status.RUNNING, {})
    assert len(calls) == 2


async def test_a_failure_reaches_every_stream_of_the_batch_and_the_next_beats_go_on(
        user, agent, monkeypatch):
    made = await sessions_with_runs(user, agent, 3)
    real = runs.heartbeat_many

    def down(keys):
        raise DatabaseError("connection lost")

    monkeypatch.setattr(runs, "heartbeat_many", down)
    answers = await asyncio.gather(*(runs.aheartbeat(sid, rid) for sid, rid in made),
                                   return_exceptions=True)
    assert all(isinstance(a, DatabaseError) for a in answers)
    monkeypatch.setattr(runs, "heartbeat_many", real)
    assert await runs.aheartbeat(*made[0]) == (Status.RUNNING, {})


async def test_a_stream_that_goes_while_it_waits_leaves_the_others_theirs(user, agent, calls):
    made = await sessions_with_runs(user, agent, 2)
    gone = asyncio.ensure_future(runs.aheartbeat(*made[0]))
    staying = asyncio.ensure_future(runs.aheartbeat(*made[1]))
    await asyncio.sleep(0)
    gone.cancel()
    assert await staying == (Status.RUNNING, {})
    assert gone.cancelled()
    assert await beaten(made) == 2  # its row beat all the same: its stream was alive


async def test_the_waiting_beats_do_not_keep_their_peak_table(monkeypatch):
    """A dict keeps the table it grew to: once a batch of thousands has gone, the beats wait in
    a new one (the memory after a mass close, docs/performance.md)."""
    import sys
    import uuid

    async def run(fn, *args):
        return fn(*args)

    monkeypatch.setattr(runs, "heartbeat_many", lambda keys: {})
    monkeypatch.setattr(runs.dbthreads, "run", run)
    await asyncio.gather(*(runs.aheartbeat(uuid.uuid4(), f"r{i}") for i in range(3000)))
    beats = runs._beats[asyncio.get_running_loop()]
    assert beats.task is None and not beats.waiting
    assert sys.getsizeof(beats.waiting) < 1024


async def test_on_postgresql_a_batch_is_one_statement_of_one_shape(user, agent):
    """However many runs beat together, PostgreSQL gets the same one statement (the keys as
    arrays): no statement text per batch size for the server or psycopg to parse and keep."""
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("the one-statement heartbeat is PostgreSQL's")
    running = await sessions_with_runs(user, agent, 5)
    ended = await sessions_with_runs(user, agent, 1, status=Status.FINISHED,
                                     outcome={"ok": 1}, first=5)

    @database_sync_to_async
    def beat(keys):
        sent = []

        def wrapper(execute, sql, params, many, context):
            sent.append(sql)
            return execute(sql, params, many, context)

        with connection.execute_wrapper(wrapper):
            found = runs.heartbeat_many(keys)
        return found, sent

    small, small_sql = await beat(running[:2])
    large, large_sql = await beat([*running, *ended, (running[0][0], "no-such-run")])
    assert len(small_sql) == 1 and small_sql == large_sql  # the very same text
    assert {str(sid): v for (sid, _), v in small.items()} == {
        sid: (Status.RUNNING, {}) for sid, _ in running[:2]}
    assert {(str(sid), rid): v for (sid, rid), v in large.items()} == {
        **{key: (Status.RUNNING, {}) for key in running}, ended[0]: (Status.FINISHED, {"ok": 1})}
    assert await beaten(running) == 5 and await beaten(ended) == 0
