"""AG-UI 1.0 runs as the agent sees them: a person asks, the agent answers until it ends the run
(docs/agents.md, "Runs"); the rows are ``a2ui.runs.records``'.

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
  (``a2ui.agui1.runleases``), and the thread's next run or the housekeeping sweep ends it
  (``aend_lost``: ``cancelled``, ``reason: "stream_lost"``) and tells the agent. An agent that
  ends a run whose stream is lost is told the client did not get the end (``delivered``
  False, or the -32602 of a run already ended so).

The agent learns of a run from the ``agui.run_started`` notification (``anotify_started``), or
by listing running runs (``running``, for agents with no socket).
"""

import logging
from datetime import timedelta

from django.utils import timezone

from a2ui.agui1 import runleases
from a2ui.conf import a2ui_settings
from a2ui.core.content.sanitize import clean_display_string, sanitize_tree
from a2ui.core.errors import DomainError, Fault, invalid_input
from a2ui.core.events import Kind
from a2ui.infra import dbthreads, groups, outages
from a2ui.push import admit
from a2ui.push import fanout as stream
from a2ui.runs import records
from a2ui.runs.records import Status

log = logging.getLogger(__name__)
STARTED = "agui.run_started"
ENDED = "agui.run_ended"
STREAM_LOST = "stream_lost"
LOST = {"reason": STREAM_LOST,
        "message": "The run's stream was lost (the process serving it stopped): the client did "
                   "not receive the run's end."}


def _stale_before():
    """When Redis cannot say whether a run's lease lapsed: a running run whose stream has not
    beaten for this long lost its stream."""
    return timezone.now() - timedelta(seconds=3 * a2ui_settings.AGUI_KEEPALIVE_SECONDS + 5)


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
    rows = await records.arunning_rows(session_id, started_before=_lease_start())
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


async def acheck_free(session_id, run_id):
    """Refuse, before anything is stored, a run that :func:`astart` would refuse as things
    stand: its runId used before in the session, or another run whose stream lives (one whose
    stream is lost does not count: ``astart`` ends it). ``astart`` still decides under
    concurrency."""
    running = await dbthreads.run(records.check_free, session_id, run_id)
    if running and len(await _alost(running)) < len(running):
        raise records.conflict(False)


async def astart(session_id, run_id, thread_id, notice, message_ids=()):
    """:func:`start` once a run of the session whose stream is lost is ended (the agent told);
    the new run's lease is set (its stream keeps it: ``runleases.ahold``)."""
    await aend_lost(session_id)
    row = await records.astart_row(session_id, run_id, thread_id, notice, message_ids)
    await runleases.aset(session_id, run_id)
    return row

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
    lost = await _alost(await records.arunning_rows(sid, run_id))
    if not await records.aend_row(sid, run_id, status, outcome):
        raise await _not_running(sid, run_id, path)
    seq = await stream.emit(sid, Kind.RUN_ENDED, {"run_id": run_id, "status": str(status),
                                                  **outcome})
    return {"ended": True, "delivered": not lost, "seq": seq}


async def _not_running(session_id, run_id, path):
    """The -32602 of ending a run that is not running: what ended it, when it exists."""
    status, outcome = await records.aoutcome_of(session_id, run_id)
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
    if not await records.aend_row(session_id, run_id, status, outcome):
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


# The agent's methods (``agui.run_finish``, ``agui.run_error``, ``agui.runs``: a2ui.agui1.adapter)


def agent_params(params):
    """``(session_id, the other params)`` of ``agui.run_finish`` ``{session_id, run_id,
    result?}`` / ``agui.run_error`` ``{session_id, run_id, message, code?}``."""
    if not isinstance(params, dict):
        raise invalid_input("params", "must be an object")
    if "session_id" not in params:
        raise invalid_input("params.session_id", "is required")
    params = dict(params)
    return params.pop("session_id"), params


def _run_path(where):
    return f"{where}.run_id" if where else "run_id"


async def finish_call(agent_id, session_id, params, *, where="params", **_):
    return await afinish(agent_id, session_id, params.get("run_id"), params.get("result"),
                         path=_run_path(where))


async def error_call(agent_id, session_id, params, *, where="params", **_):
    return await aerror(agent_id, session_id, params.get("run_id"), params.get("message"),
                        params.get("code"), path=_run_path(where))


async def running_call(agent_id, session_id, params, **_):
    """The agent's running runs (of one session when ``session_id`` is not None)."""
    from a2ui.sessions import lifecycle as sessions

    sid = sessions.parse_session_id(session_id) if session_id is not None else None
    return await records.arunning(agent_id, sid)


async def anotify_started(agent_id, session_id, notice):
    """``agui.run_started`` to the agent's socket holding the session (``agentroute``)."""
    await groups.tell_agent(agent_id, STARTED, {"session_id": str(session_id), **notice})
