"""The runtime of remote agents: a person's input becomes a run of the agent, the run's ops
become what the session shows (docs/remote-agents.md).

**In.** Every event for an agent reaches it through its channel-layer group or, for an answer,
the request's reply channel (``a2ui.infra.groups``). For a remote agent both are diverted
to ``a2ui.remote.inbound`` (set as ``groups.divert`` when the app is ready), in the process where the
event happens: a chat message of any client (``user.message``), an AG-UI 1.0 run against this
server (``agui.run_started``), a person's action on a surface (``a2ui.v09``, ``user.action``),
a cancel (``user.cancel``), the session's close, an answer. Which agents are remote is a
per-process cache of the ``RemoteAgent`` rows (:data:`CACHE_SECONDS`).

**Queue.** A turn is one ``RemoteRun`` row, ``queued``, then ``running`` (one per session: a
partial unique index, so one upstream run per thread at a time whichever processes the messages
arrive at), then ended. A message that arrives while a run runs waits in the queue (at most
``REMOTE_AGENT_MAX_QUEUED``; more are refused with a message); messages that waited are
answered by one run (the transcript holds them all). Whoever queues a turn drains the queue
of its session on its own event loop; a server process's sweep (:func:`sweep`, every
:data:`SWEEP_SECONDS`) drains queues nobody drains (a turn queued by a process that is not a
server, or whose drainer died).

**A run.** Places among the agent's runs in flight and the person's (``caps``: a clear refusal
in the chat), the consent gate, the run's lease (``runleases``: refreshed while it runs), the
``RunContext`` (transcript, state, what the session's clients can show, the agent's headers
decrypted), then the client's ops applied (:class:`Applier`) through ``port``: the same checks
as an agent's push. Its start and end are audited. Upstream errors, time limits and malformed
streams end it with a clear message in the chat and an audit entry; so does anything refused.

**Faults.** A running run whose lease lapsed lost its process: a sweep ends it as
``interrupted``, tells the person, and queues a ``resume`` turn: the client picks the run up
(``RemoteClient.resume``: A2A) or, when it cannot (AG-UI), the person is asked whether to try
again (a confirm whose approval queues the turn once more). Nothing is lost in silence.
"""

import asyncio
import contextlib
import logging
import threading
import time

from a2ui.infra import jobs
from a2ui.remote import agents, clients, ops, port, store, turns
from a2ui.remote.agents import HOLDER, http_client, join_presence, limits, remote_agent
from a2ui.remote.applier import Applier, _tell
from a2ui.remote.clients import Capabilities, RunContext, UpstreamError

log = logging.getLogger("a2ui.remote")

SWEEP_SECONDS = 2.0
STALE_QUEUE_SECONDS = 1.5
CONTROL_TYPE = "a2ui.remote_control"
AGUI_THREAD = "agui_thread_id"
ANSWER_QUEUE = 1000  # answers queue past REMOTE_AGENT_MAX_QUEUED (each answers one question)
Status = store.Status
_control = {"channel": None}


def _server_loop():
    """Runs started here outlive the caller: only on the main thread's loop (a server's, or a
    test's), not on one ``async_to_sync`` makes for a call and ends after it."""
    return threading.current_thread() is threading.main_thread()


async def submit(row, sid, turn, **extra):
    """Queue ``turn`` for the session's remote agent and drain the queue; a DomainError (to the
    person's client) when too many turns wait."""
    run_id = port.new_id()
    # An answer is not one more message of the person's: it resumes what the agent asked.
    limit = ANSWER_QUEUE if isinstance(turn, ops.Answer) else \
        port.settings.REMOTE_AGENT_MAX_QUEUED
    try:
        await port.db(store.enqueue, sid, row["agent_id"], run_id,
                      turns.to_json(turn, **extra), limit)
    except store.QueueFull:
        raise port.DomainError(port.Fault.RATE_LIMITED,
                               "The agent is still answering your earlier messages: wait for "
                               "its answer before sending more.",
                               {"reason": "queue_full"}) from None
    kick(sid)


async def cancel(sid, reason):
    """Stop the session's running run (here, or in the process that holds it)."""
    found = await port.db(store.run_holder, sid)
    if found is None:
        return False
    run_id, holder = found
    task = _local.get(run_id)
    if task is not None:
        _reasons[run_id] = reason
        task.cancel()
        return True
    if holder and holder != _control["channel"] and "!" in holder:
        with contextlib.suppress(Exception):
            await port.send_channel(holder, {"type": CONTROL_TYPE, "cancel": run_id,
                                             "reason": reason})
    return True


# Draining the queue ----------------------------------------------------------------------------

_local = {}  # run_id -> the task running it in this process
_reasons = {}  # run_id -> why it was cancelled
_draining = {}  # session id -> the drain task of this process


def kick(sid):
    """Drain the session's queue on this loop (once at a time), if this is a server's loop."""
    if not _server_loop():
        return
    task = _draining.get(sid)
    if task is not None and not task.done():
        task.again = True
        return
    loop = asyncio.get_running_loop()
    task = loop.create_task(_drain(sid), name=f"a2ui-remote-{sid.hex[:8]}")
    task.again = False
    _draining[sid] = task
    task.add_done_callback(lambda t: _draining.pop(sid, None) if _draining.get(sid) is t
                           else None)


async def _drain(sid):
    try:
        while True:
            await _check_lost(sid)
            row = await port.db(store.claim_next, sid, await _holder())
            if row is None:
                task = asyncio.current_task()
                if getattr(task, "again", False):
                    task.again = False
                    continue
                return
            await _run(row)
    except Exception as exc:
        log.warning("a2ui: the remote agent queue of %s failed: %s", sid, exc, exc_info=True)


async def _holder():
    if _control["channel"] is None and _server_loop():
        with contextlib.suppress(Exception):
            channel = await port.new_channel()
            _control["channel"] = channel
            asyncio.get_running_loop().create_task(_control_loop(channel))
    return _control["channel"] or HOLDER


async def _control_loop(channel):
    while True:
        try:
            message = await port.receive(channel)
        except asyncio.CancelledError:
            raise
        except Exception:
            await asyncio.sleep(1.0)
            continue
        if message.get("type") == CONTROL_TYPE and message.get("cancel") in _local:
            _reasons[message["cancel"]] = message.get("reason") or "person"
            _local[message["cancel"]].cancel()


async def _run(row):
    """Run one claimed turn to its end (see the module's docstring)."""
    sid, run_id = row.session_id, row.run_id
    _local[run_id] = asyncio.current_task()
    agent_row = await remote_agent(row.agent_id)
    place = None
    applier = None
    status, outcome = Status.ERROR, {}
    agui1 = (row.turn or {}).get("agui1") or {}
    started = time.monotonic()
    try:
        await port.hold_lease(sid, run_id)
        if agent_row is None:
            raise UpstreamError("This agent is no longer available.", "agent_gone")
        person = await port.db(store.session_person, sid)
        if person is None or not person[3]:
            status, outcome = Status.CANCELLED, {"reason": "session_closed"}
            return
        user_id, username, client_info, _ = person
        limit = agent_row["max_runs"] or port.settings.REMOTE_AGENT_MAX_RUNS
        place = await port.acquire_run(row.agent_id, user_id, limit,
                                       port.settings.REMOTE_AGENT_MAX_RUNS_PER_PERSON)
        await port.require_consent(sid)
        config = await agents.config(agent_row)
        ctx = await _context(config, row, sid, username, client_info, agui1)
        applier = Applier(config, sid, ctx, row.pk)
        await port.audit_event("remote.run_started", agent_row["agent"], sid, {
            "run_id": run_id, "kind": config.kind,
            "turn": (row.turn or {}).get("type", "")})
        client = clients.client_for(config.kind)
        turn = turns.from_json(row.turn)
        if (row.turn or {}).get("type") == turns.RESUME:
            source = await client.resume(ctx)
            if source is None:
                await applier.offer_retry((row.turn or {}).get("turn"))
                source = None
        else:
            source = client.run(ctx, turn)
        if source is not None:
            async with asyncio.timeout(port.settings.REMOTE_AGENT_RUN_TIMEOUT_SECONDS):
                async with contextlib.aclosing(source) as stream:
                    async for op in stream:
                        await applier.apply(op)
                        if applier.done:
                            break
        status, outcome = applier.outcome()
    except UpstreamError as exc:
        status, outcome = Status.ERROR, {"code": exc.code, "message": exc.message}
        if applier is not None or agent_row is not None:
            await _tell(row.agent_id, sid, f"The agent could not answer: {exc.message}")
    except TimeoutError:
        status, outcome = Status.ERROR, {"code": "run_timeout"}
        await _tell(row.agent_id, sid, "The agent took too long and was stopped.")
    except port.Busy as exc:
        status, outcome = Status.ERROR, {"code": "busy", **(exc.data or {})}
        await _tell(row.agent_id, sid, exc.message)
    except asyncio.CancelledError:
        reason = _reasons.pop(run_id, None)
        status, outcome = Status.CANCELLED, {"reason": reason or "stopped"}
        if reason is None:  # the server is stopping: the sweep of another process tells
            status, outcome = Status.INTERRUPTED, {"reason": "process_stopping"}
        if reason == "person":
            if applier is not None:  # the agent's side too (A2A: tasks/cancel), bounded
                with contextlib.suppress(Exception):
                    client = clients.client_for(applier.config.kind)
                    await asyncio.wait_for(asyncio.shield(client.cancel(applier.ctx)), 15)
            with contextlib.suppress(Exception):
                await _tell(row.agent_id, sid, "Stopped.")
    except port.DomainError as exc:
        said = exc.message or str(exc.fault).replace("_", " ")
        status, outcome = Status.ERROR, {"code": str(exc.fault), "message": said[:300]}
        if str(exc.fault) == "consent_required":  # the person was asked for it: no run
            status, outcome = Status.CANCELLED, {"reason": "consent_required"}
        elif str(exc.fault) != "session_not_found":
            await _tell(row.agent_id, sid, f"The agent's answer could not be shown: "
                                           f"{said[:300]}")
    except Exception as exc:  # a bug: the person is told, the log has the traceback
        log.exception("a2ui: a remote agent's run failed")
        status, outcome = Status.ERROR, {"code": "internal_error", "type": type(exc).__name__}
        await _tell(row.agent_id, sid, "The agent's answer failed on this server.")
    finally:
        _local.pop(run_id, None)
        await _finish(row, agent_row, applier, status, outcome, agui1, started, place)


async def _finish(row, agent_row, applier, status, outcome, agui1, started, place):
    sid, run_id = row.session_id, row.run_id
    try:
        if applier is not None:
            await asyncio.shield(applier.close())
            outcome = {**outcome, **applier.counts()}
        ids = {**(applier.ids if applier else {})}
        asks = applier.asks if applier else {}
        kept = {k: v for k, v in outcome.items() if k != "result"}  # the agent's JSON: not kept
        await port.db(store.end, row.pk, status, kept, ids, asks)
        if agent_row is not None:
            await _end_agui_runs(row.agent_id, sid, status, outcome, agui1)
            await port.audit_event("remote.run_ended", agent_row["agent"], sid, {
                "run_id": run_id, "status": str(status),
                "seconds": round(time.monotonic() - started, 3),
                **{k: v for k, v in outcome.items() if k in (
                    "code", "reason", "events", "refused", "asked", "unknown_events")}})
    except Exception:
        log.warning("a2ui: ending the remote run %s of %s failed", run_id, sid, exc_info=True)
    finally:
        with contextlib.suppress(Exception):
            await port.release_lease(sid, run_id)
        if place is not None:
            await place.release_shielded()


async def _end_agui_runs(agent_id, sid, status, outcome, agui1):
    """A person's AG-UI 1.0 run ends with the agent's: finished, or the error. One that the
    run asked something of ends by itself (its stream ends at the question)."""
    if status == Status.WAITING:
        return
    for run in await port.open_agui_runs(agent_id, sid):
        run_id = run.get("run_id")
        if status == Status.FINISHED:
            await port.finish_agui_run(agent_id, sid, run_id, outcome.get("result"))
        else:
            await port.fail_agui_run(agent_id, sid, run_id, outcome.get("message")
                                     or "The agent's run did not finish.",
                                     outcome.get("code"))


async def _context(config, row, sid, username, client_info, agui1):
    act = await port.db(port.session_activity, sid)
    shown = await port.capabilities(sid)
    ids = await port.db(store.thread_ids, sid)
    thread = ids.get("thread_id") or client_info.get(AGUI_THREAD) or sid.hex
    transcript = list(act.get("transcript") or [])
    return RunContext(
        session_id=str(sid), run_id=row.run_id, thread_id=str(thread), agent=config, ids=ids,
        transcript=transcript, state=dict(act.get("state") or {}),
        capabilities=Capabilities(protocols=dict(shown.get("clients") or {}),
                                  catalogs=tuple(shown.get("catalogs") or ()),
                                  server_catalogs=port.server_catalogs()),
        tools=[t for t in agui1.get("tools") or () if isinstance(t.get("name"), str)],
        context=list(agui1.get("context") or ()), forwarded=dict(agui1.get("forwarded") or {}),
        user=username, limits=limits(),
        http=None if config.target is not None else http_client())


# Lost runs -------------------------------------------------------------------------------------


async def _check_lost(sid=None):
    """End the running runs whose lease lapsed (their process died) as interrupted, tell the
    person, and queue their resumption. Of one session, or every one (the sweep)."""
    before = _now() - _seconds(port.lease_seconds())
    rows = await port.db(store.running_rows, before)
    if sid is not None:
        rows = [r for r in rows if r[1] == sid]
    mine = _control["channel"]
    rows = [r for r in rows if r[4] != mine or r[2] not in _local]
    if not rows:
        return 0
    alive = await port.leases_alive([(r[1], r[2]) for r in rows])
    ended = 0
    for (pk, session, run_id, agent_id, _), live in zip(rows, alive, strict=True):
        if live is not False or run_id in _local:
            continue
        if not await port.db(store.end, pk, Status.INTERRUPTED, {"reason": "process_lost"}):
            continue
        ended += 1
        row = await remote_agent(agent_id)
        if row is None:
            continue
        original = await port.db(_turn_of, pk)
        await _tell(agent_id, session, "The agent's run was interrupted: the server process "
                                       "running it stopped.")
        await port.audit_event("remote.run_lost", row["agent"], session, {"run_id": run_id})
        with contextlib.suppress(Exception):
            await port.db(store.enqueue, session, agent_id, port.new_id(),
                          {"type": turns.RESUME, "of": run_id, "turn": original}, 1000)
        kick(session)
    return ended


def _turn_of(pk):
    row = store.RemoteRun.objects.filter(pk=pk).values_list("turn", flat=True).first()
    return row or {}


def _now():
    from django.utils import timezone

    return timezone.now()


def _seconds(value):
    from datetime import timedelta

    return timedelta(seconds=value)


async def sweep():
    """Lost runs, and queues nobody drains (see the module's docstring)."""
    await _check_lost()
    for sid in await port.db(store.stale_queues, _now() - _seconds(STALE_QUEUE_SECONDS)):
        kick(sid)


async def _sweep_round():
    await _holder()
    await join_presence()
    await sweep()


_sweeper = jobs.Every("remote agents' sweep", lambda: SWEEP_SECONDS, _sweep_round,
                      at_start=True)


def ensure_sweeping():
    """The remote agents' sweep (and this process's presence in them) on a server's loop."""
    if _server_loop():
        _sweeper.ensure_started()
