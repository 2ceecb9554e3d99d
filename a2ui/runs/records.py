"""Runs of an agent in a session: the ``AgentRun`` rows (AG-UI 1.0's runs today, in no
protocol's words).

A run is an ``AgentRun`` row: at most one per session runs at a time (a partial unique index),
and whoever ends it does so with one conditional UPDATE on ``status='running'`` (:func:`end`), so
exactly one end wins whichever process it happens in. The stream serving a run beats
(:func:`aheartbeat`, batched), and a new run of the session finds the ids of the messages its
latest runs were sent (:func:`seen_message_ids`). What a protocol says of its runs (notices,
their streams' leases, the end of a run whose stream was lost) is the protocol's
(``a2ui.agui1.runs``).
"""

import asyncio
import functools
import operator
import uuid
import weakref

from channels.db import database_sync_to_async
from django.db import IntegrityError, connections, transaction
from django.db.models import Q
from django.utils import timezone

from a2ui.core.errors import DomainError, Fault
from a2ui.core.states import RUNS
from a2ui.infra import dbthreads
from a2ui.models import AgentRun
from a2ui.runs import sql as run_sql
from a2ui.sessions import lifecycle as sessions

Status = AgentRun.Status
SWEEP_LIMIT = 500  # running runs looked at per housekeeping sweep


def running_rows(session_id=None, run_id=None, started_before=None):
    """Running runs: ``(session_id, run_id, agent_id, started_at, heartbeat_at)``."""
    rows = AgentRun.objects.filter(status=Status.RUNNING)
    if session_id is not None:
        rows = rows.filter(session_id=session_id)
    if run_id is not None:
        rows = rows.filter(run_id=run_id)
    if started_before is not None:
        rows = rows.filter(started_at__lt=started_before)
    return list(rows.order_by("started_at").values_list(
        "session_id", "run_id", "session__agent_id", "started_at", "heartbeat_at")[:SWEEP_LIMIT])


arunning_rows = dbthreads.wrap(running_rows)


def running_of(session_id):
    """The session's running runs: ``[(run_id, agent_id)]``."""
    return [(row[1], row[2]) for row in running_rows(session_id)]


arunning_of = dbthreads.wrap(running_of)


def conflict(used_before):
    return DomainError(Fault.INVALID_REQUEST,
                       "This runId was used before on this thread." if used_before else
                       "Another run of this thread is in progress.",
                       {"path": "runId" if used_before else "threadId", "reason": "conflict"})


def busy():
    """The refusal of a run while another run of its thread is in progress (HTTP 409)."""
    return conflict(False)


def check_free(session_id, run_id):
    """The session's running runs (``_running_rows``), after refusing a runId used before in
    the session."""
    if AgentRun.objects.filter(session_id=session_id, run_id=run_id).exists():
        raise conflict(True)
    return running_rows(session_id)


def start(session_id, run_id, thread_id, notice, message_ids=()):
    """The session's new running run, or 409-like INVALID_REQUEST while another one runs.
    ``message_ids``: the ids of the run's candidate new messages (:func:`seen_message_ids`)."""
    now = timezone.now()
    try:
        with transaction.atomic():
            return AgentRun.objects.create(session_id=session_id, run_id=run_id,
                                           thread_id=thread_id, notice=notice,
                                           message_ids=list(message_ids),
                                           started_at=now, heartbeat_at=now)
    except IntegrityError:
        used = AgentRun.objects.filter(session_id=session_id, run_id=run_id).exists()
        raise conflict(used) from None


astart_row = dbthreads.wrap(start)


#: How many of a session's latest runs say which messages it has seen.
SEEN_RUNS = 5


def seen_message_ids(session_id):
    """The ids of the messages the session's latest runs were sent (each run keeps the ids of
    its candidates, seen before or not: a client resending a history with nothing new still
    renews them), so a message a client sends again (a retry, a ``resume`` run with the same
    history) is not new again."""
    rows = AgentRun.objects.filter(session_id=session_id).order_by("-started_at", "-pk")
    seen = set()
    for ids in rows.values_list("message_ids", flat=True)[:SEEN_RUNS]:
        seen.update(i for i in ids or () if isinstance(i, str))
    return seen


aseen_message_ids = dbthreads.wrap(seen_message_ids)


def end(session_id, run_id, status, outcome=None):
    """True if this call ended the run (it was running): ``status`` names the outcome, the
    transition into it (``a2ui.core.states.RUNS``) the states it may end from."""
    event = RUNS.into(str(status))
    return bool(AgentRun.objects.filter(
        session_id=session_id, run_id=run_id, status__in=RUNS.sources(event),
    ).update(status=RUNS.target(event), outcome=outcome or {}, ended_at=timezone.now()))


aend_row = dbthreads.wrap(end)


def heartbeat_many(keys):
    """Each run's stream is alive (its row's ``heartbeat_at``, while it runs); returns
    ``{(session_id, run_id): (status, outcome)}`` as stored, for the runs that have a row
    (``session_id`` a UUID). On PostgreSQL one statement of one shape whatever the number of
    runs (the keys as two arrays); elsewhere two, of a shape per number."""
    if connections["default"].vendor == "postgresql":
        return run_sql.heartbeat_runs(keys, timezone.now())
    match = functools.reduce(operator.or_, (Q(session_id=sid, run_id=rid) for sid, rid in keys))
    AgentRun.objects.filter(match, status=Status.RUNNING).update(heartbeat_at=timezone.now())
    return {(sid, rid): (status, outcome) for sid, rid, status, outcome in
            AgentRun.objects.filter(match).values_list("session_id", "run_id", "status",
                                                       "outcome")}


#: How long a heartbeat waits for others to share its statements, and the most in one batch.
BEAT_BATCH_SECONDS = 0.25
BEAT_BATCH_MAX = 500


class _Beats:
    """The heartbeats of one event loop's runs waiting for their batch."""

    def __init__(self):
        self.waiting = {}  # (session UUID, run_id) -> future of (status, outcome)
        self.task = None

    async def flush_later(self):
        try:
            await asyncio.sleep(BEAT_BATCH_SECONDS)
            while self.waiting:
                keys = list(self.waiting)[:BEAT_BATCH_MAX]
                batch = {key: self.waiting.pop(key) for key in keys}
                try:
                    found = await dbthreads.run(heartbeat_many, keys)
                except Exception as exc:  # each waiting stream gets it, as from its own call
                    for future in batch.values():
                        if not future.done():
                            future.set_exception(exc)
                    continue
                for key, future in batch.items():
                    if not future.done():
                        future.set_result(found.get(key, (None, {})))
        finally:
            self.task = None
            if not self.waiting:  # a dict keeps the table it grew to: 144 KB at 10,000 runs
                self.waiting = {}


_beats = weakref.WeakKeyDictionary()  # event loop -> _Beats


def _retrieved(future):
    if not future.cancelled():
        future.exception()  # a waiter that went is not reported as an unretrieved failure


async def aheartbeat(session_id, run_id):
    """The run's stream is alive; returns (status, outcome) of the run as stored (``(None,
    {})`` without a row). Batched (:func:`heartbeat_many`): every running run's stream beats every
    ``AGUI_KEEPALIVE_SECONDS``, 667 beats a second at 10,000 runs in a process; the beats of
    ``BEAT_BATCH_SECONDS`` share one statement on PostgreSQL (of up to ``BEAT_BATCH_MAX``
    runs), on the pool of per-message threads (``dbthreads``):
    on the one thread-sensitive thread they held up every other database call of the process."""
    loop = asyncio.get_running_loop()
    beats = _beats.get(loop)
    if beats is None:
        beats = _beats[loop] = _Beats()
    key = (session_id if isinstance(session_id, uuid.UUID) else uuid.UUID(str(session_id)),
           run_id)
    future = beats.waiting.get(key)
    if future is None:
        future = beats.waiting[key] = loop.create_future()
        future.add_done_callback(_retrieved)
        if beats.task is None:
            beats.task = loop.create_task(beats.flush_later())
    return await asyncio.shield(future)


def outcome_of(session_id, run_id):
    """(status, outcome) of a run as stored."""
    row = AgentRun.objects.filter(session_id=session_id, run_id=run_id).values_list(
        "status", "outcome").first()
    return row or (None, {})


aoutcome_of = database_sync_to_async(outcome_of)


def running(agent_id, session_id=None):
    """The agent's running runs: what each ``agui.run_started`` said, for agents that poll."""
    rows = AgentRun.objects.filter(session__agent_id=agent_id, status=Status.RUNNING,
                                   session__state__in=sessions.LIVE)
    if session_id is not None:
        rows = rows.filter(session_id=session_id)
    return [{"session_id": str(r.session_id), **r.notice,
             "started_at": r.started_at.isoformat()} for r in rows.order_by("started_at")[:100]]


arunning = database_sync_to_async(running)
