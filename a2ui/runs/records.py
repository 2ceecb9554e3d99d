"""Agent runs: a person asks, the agent answers until it ends the run (AG-UI 1.0's runs, in no
protocol's words; docs/agents.md, "Runs").

A run is an ``AgentRun`` row: at most one per session runs at a time (a partial unique index),
and whoever ends it does so with one conditional UPDATE on ``status='running'``, so exactly one
end wins whichever process it happens in:

* the agent: ``afinish`` / ``aerror`` (``agui.run_finish`` / ``agui.run_error`` on every agent
  path), emitted as a ``run.ended`` session event that the run's stream turns into its final
  event;
* the stream: ``aend`` when the agent asks the person something (``interrupted``), when the
  agent stays silent past ``AGUI_RUN_TIMEOUT_SECONDS`` (``timed_out``) or when the person's
  client goes away (``cancelled``); the agent is then told ``agui.run_ended``;
* nobody, when the process serving the run's stream died: the run's lease lapses
  (``a2ui.runs.leases``), and the thread's next run or the housekeeping sweep ends it
  (``aend_lost``: ``cancelled``, ``reason: "stream_lost"``) and tells the agent. An agent that
  ends a run whose stream is lost is told the client did not get the end (``delivered``
  False, or the -32602 of a run already ended so).

The agent learns of a run from the ``agui.run_started`` notification (``anotify_started``), or
by listing running runs (``running``, for agents with no socket).
"""

import asyncio
import functools
import logging
import operator
import uuid
import weakref
from datetime import timedelta

from channels.db import database_sync_to_async
from django.db import IntegrityError, connections, transaction
from django.db.models import Q
from django.utils import timezone

from a2ui.conf import a2ui_settings
from a2ui.core.content.sanitize import clean_display_string, sanitize_tree
from a2ui.core.errors import DomainError, Fault, invalid_input
from a2ui.core.events import Kind
from a2ui.infra import dbthreads, groups, outages
from a2ui.models import AgentRun
from a2ui.push import admit
from a2ui.push import fanout as stream
from a2ui.runs import leases as runleases
from a2ui.runs import sql as run_sql
from a2ui.sessions import lifecycle as sessions

log = logging.getLogger(__name__)
Status = AgentRun.Status
STARTED = "agui.run_started"
ENDED = "agui.run_ended"
STREAM_LOST = "stream_lost"
LOST = {"reason": STREAM_LOST,
        "message": "The run's stream was lost (the process serving it stopped): the client did "
                   "not receive the run's end."}
SWEEP_LIMIT = 500  # running runs looked at per housekeeping sweep


def _stale_before():
    """When Redis cannot say whether a run's lease lapsed: a running run whose stream has not
    beaten for this long lost its stream."""
    return timezone.now() - timedelta(seconds=3 * a2ui_settings.AGUI_KEEPALIVE_SECONDS + 5)


def _running_rows(session_id=None, run_id=None, started_before=None):
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


_arunning_rows = dbthreads.wrap(_running_rows)


def running_of(session_id):
    """The session's running runs: ``[(run_id, agent_id)]``."""
    return [(row[1], row[2]) for row in _running_rows(session_id)]


arunning_of = dbthreads.wrap(running_of)


def _lease_start():
    """A run started after this has its lease, or is about to (runs.astart sets it)."""
    return timezone.now() - timedelta(seconds=a2ui_settings.AGUI_RUN_LEASE_SECONDS)


async def _alost(rows):
    """The rows (``_running_rows``) whose stream is lost: older than a lease and no stream
    holds their lease (Redis unreachable: no heartbeat for three keepalives)."""
    settled = _lease_start()
    rows = [r for r in rows if r[3] < settled]
    if not rows:
        return []
    alive = await runleases.alive([(r[0], r[1]) for r in rows])
    stale = _stale_before()
    return [r for r, live in zip(rows, alive, strict=True)
            if live is False or (live is None and r[4] < stale)]


async def aend_lost(session_id=None):
    """End the running runs whose stream is lost (of one session, or any: the housekeeping
    sweep) as ``cancelled`` with ``reason: "stream_lost"``: the agent hears ``agui.run_ended``
    and a stream of the run that still reads (its lease lost with Redis) hears ``run.ended``.
    Returns how many this call ended."""
    rows = await _arunning_rows(session_id, started_before=_lease_start())
    ended = 0
    for sid, run_id, agent_id, _, _ in await _alost(rows):
        try:
            if await aend(agent_id, sid, run_id, Status.CANCELLED, dict(LOST)):
                ended += 1
                await stream.emit(sid, Kind.RUN_ENDED, {"run_id": run_id,
                                                        "status": str(Status.CANCELLED), **LOST})
        except Exception:  # Redis away: the row is ended or the next sweep ends it
            outages.tally()
            log.warning("a2ui: ending the lost run %s of %s failed", run_id[:200], sid,
                        exc_info=True)
    return ended


def _conflict(used_before):
    return DomainError(Fault.INVALID_REQUEST,
                       "This runId was used before on this thread." if used_before else
                       "Another run of this thread is in progress.",
                       {"path": "runId" if used_before else "threadId", "reason": "conflict"})


def busy():
    """The refusal of a run while another run of its thread is in progress (HTTP 409)."""
    return _conflict(False)


def check_free(session_id, run_id):
    """The session's running runs (``_running_rows``), after refusing a runId used before in
    the session."""
    if AgentRun.objects.filter(session_id=session_id, run_id=run_id).exists():
        raise _conflict(True)
    return _running_rows(session_id)


async def acheck_free(session_id, run_id):
    """Refuse, before anything is stored, a run that :func:`astart` would refuse as things
    stand: its runId used before in the session, or another run whose stream lives (one whose
    stream is lost does not count: ``astart`` ends it). ``astart`` still decides under
    concurrency."""
    running = await dbthreads.run(check_free, session_id, run_id)
    if running and len(await _alost(running)) < len(running):
        raise _conflict(False)


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
        raise _conflict(used) from None


_astart_row = dbthreads.wrap(start)


async def astart(session_id, run_id, thread_id, notice, message_ids=()):
    """:func:`start` once a run of the session whose stream is lost is ended (the agent told);
    the new run's lease is set (its stream keeps it: ``runleases.ahold``)."""
    await aend_lost(session_id)
    row = await _astart_row(session_id, run_id, thread_id, notice, message_ids)
    await runleases.aset(session_id, run_id)
    return row

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
    """True if this call ended the run (it was running)."""
    return bool(AgentRun.objects.filter(
        session_id=session_id, run_id=run_id, status=Status.RUNNING,
    ).update(status=status, outcome=outcome or {}, ended_at=timezone.now()))


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


def _check_run_id(run_id, path):
    if not isinstance(run_id, str) or not run_id or len(run_id) > 200 or "\x00" in run_id:
        raise invalid_input(path, "must be a run_id (a string of 1 to 200 characters, no NUL)")


def _field(path, name):
    return path.rsplit(".", 1)[0] + "." + name if "." in path else name


async def _agent_end(agent_id, session_id, run_id, status, outcome, path):
    """``{"ended": true, "delivered": bool, "seq": n}``: ``delivered`` False when the run's
    stream was lost (its process died), so no client receives the end."""
    _check_run_id(run_id, path)
    sid = await admit.agent_session(agent_id, session_id)
    lost = await _alost(await _arunning_rows(sid, run_id))
    if not await aend_row(sid, run_id, status, outcome):
        raise await _not_running(sid, run_id, path)
    seq = await stream.emit(sid, Kind.RUN_ENDED, {"run_id": run_id, "status": str(status),
                                                  **outcome})
    return {"ended": True, "delivered": not lost, "seq": seq}


async def _not_running(session_id, run_id, path):
    """The -32602 of ending a run that is not running: what ended it, when it exists."""
    status, outcome = await aoutcome_of(session_id, run_id)
    if status is None:
        return DomainError(Fault.INVALID_INPUT, "No such running run in this session.",
                           {"path": path, "reason": "not running"})
    data = {"path": path, "reason": "not running", "status": str(status)}
    if isinstance(outcome, dict) and outcome.get("reason") == STREAM_LOST:
        data["stream_lost"] = True
        return DomainError(Fault.INVALID_INPUT, "The run already ended: its stream was lost (the "
                           "process serving it stopped), so the client did not receive the "
                           "run's end.", data)
    return DomainError(Fault.INVALID_INPUT, f"The run already ended ({status}).", data)


async def afinish(agent_id, session_id, run_id, result=None, *, path="params.run_id"):
    """The agent ends the run: RUN_FINISHED (with ``result`` when given: any JSON value, its
    text cleaned of control and bidi characters, under the one JSON value policy)."""
    outcome = {}
    if result is not None:
        outcome["result"] = sanitize_tree(result, (), _field(path, "result"),
                                          text=clean_display_string)
    return await _agent_end(agent_id, session_id, run_id, Status.FINISHED, outcome, path)


async def aerror(agent_id, session_id, run_id, message, code=None, *, path="params.run_id"):
    """The agent ends the run as failed: RUN_ERROR ``message`` (``code`` optional)."""
    if isinstance(message, str):
        message = clean_display_string(message)[:4096]
    if not isinstance(message, str) or not message.strip():
        raise invalid_input(_field(path, "message"), "must be a non-empty string")
    if code is not None and not isinstance(code, str):
        raise invalid_input(_field(path, "code"), "must be a string")
    code = clean_display_string(code)[:200] if code else None
    outcome = {"message": message, **({"code": code} if code else {})}
    return await _agent_end(agent_id, session_id, run_id, Status.ERROR, outcome, path)


async def aend(agent_id, session_id, run_id, status, outcome=None):
    """The stream ends the run (interrupt, timeout, person gone); tells the agent if it won."""
    if not await aend_row(session_id, run_id, status, outcome):
        return False
    await groups.tell_agent(agent_id, ENDED, {
        "session_id": str(session_id), "run_id": run_id, "status": str(status),
        **(outcome or {})})
    return True


async def aend_said(agent_id, session_id, run_id, status, outcome):
    """:func:`aend` by someone other than the run's stream (a new run taking the place of a
    run whose client went, a reader finding its history gone): the stream, on whichever
    process, hears it at once (``run.ended``) and sends its final event."""
    if not await aend(agent_id, session_id, run_id, status, outcome):
        return False
    await stream.emit(session_id, Kind.RUN_ENDED, {"run_id": run_id, "status": str(status),
                                                   **outcome})
    return True


FINISH, ERROR = "agui.run_finish", "agui.run_error"
AGENT_METHODS = (FINISH, ERROR)


async def acall(agent_id, method, params):
    """``agui.run_finish`` ``{session_id, run_id, result?}`` / ``agui.run_error``
    ``{session_id, run_id, message, code?}`` as sent on the agent socket (or the MCP tools)."""
    if not isinstance(params, dict):
        raise invalid_input("params", "must be an object")
    if "session_id" not in params:
        raise invalid_input("params.session_id", "is required")
    if method == FINISH:
        return await afinish(agent_id, params["session_id"], params.get("run_id"),
                             params.get("result"))
    return await aerror(agent_id, params["session_id"], params.get("run_id"),
                        params.get("message"), params.get("code"))


def outcome_of(session_id, run_id):
    """(status, outcome) of a run as stored."""
    row = AgentRun.objects.filter(session_id=session_id, run_id=run_id).values_list(
        "status", "outcome").first()
    return row or (None, {})


aoutcome_of = database_sync_to_async(outcome_of)


async def anotify_started(agent_id, session_id, notice):
    """``agui.run_started`` to the agent's socket holding the session (``agentroute``)."""
    await groups.tell_agent(agent_id, STARTED, {"session_id": str(session_id), **notice})


def running(agent_id, session_id=None):
    """The agent's running runs: what each ``agui.run_started`` said, for agents that poll."""
    rows = AgentRun.objects.filter(session__agent_id=agent_id, status=Status.RUNNING,
                                   session__state__in=sessions.LIVE)
    if session_id is not None:
        rows = rows.filter(session_id=session_id)
    return [{"session_id": str(r.session_id), **r.notice,
             "started_at": r.started_at.isoformat()} for r in rows.order_by("started_at")[:100]]


arunning = database_sync_to_async(running)
