"""The runtime of remote agents: a person's input becomes a run of the agent, the run's ops
become what the session shows (docs/remote-agents.md).

**In.** Every event for an agent reaches it through its channel-layer group or, for an answer,
the request's reply channel (``a2ui.infra.groups``). For a remote agent both are diverted
here (:func:`divert`, set as ``groups.divert`` when the app is ready), in the process where the
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
import copy
import hashlib
import logging
import os
import re
import threading
import time

import jsonpatch

from a2ui.remote import clients, net, ops, port, secrets, store, turns
from a2ui.remote.clients import (
    AgentConfig,
    Capabilities,
    Limits,
    Refusal,
    RunContext,
    UpstreamError,
)

log = logging.getLogger("a2ui.remote")

CACHE_SECONDS = 10.0
SWEEP_SECONDS = 2.0
STALE_QUEUE_SECONDS = 1.5
EVENT_TYPE = "a2ui.agent_event"
CONTROL_TYPE = "a2ui.remote_control"
AGUI_THREAD = "agui_thread_id"
SYSTEM_SENDER = "system"
TOOL_RESULT_LIMIT = 8000
ANSWER_QUEUE = 1000  # answers queue past REMOTE_AGENT_MAX_QUEUED (each answers one question)
Status = store.Status
_ID = re.compile(r"[A-Za-z0-9._:-]{1,100}")


def safe_id(value):
    """An upstream id as the core's ids are (1-128 of ``[A-Za-z0-9._:-]``): kept when it is
    one (with room for a suffix), else a digest of it (the same id always maps the same)."""
    text = str(value)
    if _ID.fullmatch(text):
        return text
    return "h:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:40]


# Which agents are remote (per process) ---------------------------------------------------------

_cache = {"at": -1e9, "agents": {}}
_targets = {}  # in-process import string -> loaded object


def forget():
    """Drop the cache of remote agents (a registration changed; tests)."""
    _cache["at"] = -1e9
    _present.clear()


async def remote_agent(agent_id):
    """The agent's cached row (a dict) if it is an active remote agent, else None."""
    now = time.monotonic()
    if now - _cache["at"] > CACHE_SECONDS:
        _cache["agents"] = await port.db(store.remote_agents)
        _cache["at"] = now
    return _cache["agents"].get(agent_id)


def preload(spec):
    """Import an in-process agent (at a server's start: a framework's import takes seconds,
    never on the event loop)."""
    from a2ui.remote.agui import inprocess

    if spec not in _targets:
        _targets[spec] = inprocess.load(spec)
    return _targets[spec]


async def _config(row):
    target = None
    if row["in_process"]:
        spec = row["in_process"]
        target = _targets.get(spec)
        if target is None:  # not preloaded: imported off the event loop
            target = await asyncio.to_thread(preload, spec)
    return AgentConfig(agent_id=row["agent_id"], name=row["name"], label=row["label"],
                       kind=row["kind"], url=row["url"],
                       headers=secrets.unseal(row["sealed_headers"]), config=row["config"],
                       target=target)


def limits():
    s = port.settings
    return Limits(connect_seconds=s.REMOTE_AGENT_CONNECT_TIMEOUT_SECONDS,
                  idle_seconds=s.REMOTE_AGENT_IDLE_TIMEOUT_SECONDS,
                  event_bytes=s.REMOTE_AGENT_MAX_EVENT_BYTES,
                  run_bytes=s.REMOTE_AGENT_MAX_RUN_BYTES,
                  run_events=s.REMOTE_AGENT_MAX_RUN_EVENTS)


_http = {}  # event loop -> (hosts setting, PolicyClient)


def http_client():
    """This event loop's outbound client (``net.PolicyClient``), for the current hosts."""
    from a2ui.remote import policy

    loop = asyncio.get_running_loop()
    hosts = tuple(port.settings.REMOTE_AGENT_HOSTS or ())
    found = _http.get(loop)
    if found is None or found[0] != hosts:
        lim = limits()
        client = net.new_client(policy.parse_hosts(hosts), connect_seconds=lim.connect_seconds,
                                idle_seconds=lim.idle_seconds)
        _http[loop] = (hosts, client)
        return client
    return found[1]


# The seam --------------------------------------------------------------------------------------

HOLDER = f"{os.uname().nodename[:40]}:{os.getpid()}"  # until the control channel is open
_control = {"channel": None}


def _server_loop():
    """Runs started here outlive the caller: only on the main thread's loop (a server's, or a
    test's), not on one ``async_to_sync`` makes for a call and ends after it."""
    return threading.current_thread() is threading.main_thread()


async def divert(target, event):
    """``groups.divert``: take the events of remote agents (see the module's docstring)."""
    if target.startswith(port.REPLY_PREFIX):
        await _on_answer(event)
        return True
    try:
        agent_id = int(target[len(port.AGENT_GROUP_PREFIX):])
    except ValueError:
        return False
    row = await remote_agent(agent_id)
    if row is None:
        return False
    if event.get("type") == EVENT_TYPE:
        await _on_agent_event(row, event.get("method"), event.get("params") or {})
    return True


def install():
    """Set the seam (``AppConfig.ready``)."""
    port.set_divert(divert)


async def _on_agent_event(row, method, params):
    try:
        sid = port.session_id(params.get("session_id"))
    except Exception:
        return
    _ensure_sweeping()
    if method == "user.message":
        await submit(row, sid, ops.UserText(str(params.get("content") or ""),
                                            sender=params.get("sender")))
    elif method == "agui.run_started":
        await _agui_run(row, sid, params)
    elif method == "a2ui.v09":
        for message in params.get("messages") or ():
            if isinstance(message, dict) and isinstance(message.get("action"), dict):
                await submit(row, sid, ops.Action(message["action"], params.get("dataModel")))
    elif method == "user.action":
        action = {"name": params.get("action_type")}
        if params.get("component_id") is not None:
            action["sourceComponentId"] = params["component_id"]
        if isinstance(params.get("payload"), dict):
            action["context"] = params["payload"]
        await submit(row, sid, ops.Action(action))
    elif method == "user.cancel":
        await cancel(sid, "person")
    elif method == "session.closed":
        await cancel(sid, "session_closed")
        await port.db(store.cancel_queued, sid, "session_closed")
    elif method in ("session.opened", "session.resumed"):
        _kick(sid)  # a queue left behind, a run lost meanwhile: looked at now


async def _agui_run(row, sid, notice):
    """A person's AG-UI 1.0 run against this server: its new user messages (already in the
    transcript) or frontend tool results are the turn; its tools, context and forwarded props
    go with it. A run that only resumes interrupts has no turn of its own: the answers are."""
    extra = {"agui1": {"tools": [t for t in notice.get("tools") or () if isinstance(t, dict)],
                       "context": [c for c in notice.get("context") or ()
                                   if isinstance(c, dict)],
                       "forwarded": notice.get("forwarded_props")
                       if isinstance(notice.get("forwarded_props"), dict) else {},
                       "run_id": notice.get("run_id")}}
    turn = None
    for message in notice.get("messages") or ():
        if not isinstance(message, dict):
            continue
        if message.get("role") == "tool" and message.get("toolCallId"):
            content = message.get("content")
            turn = ops.ToolResult(str(message["toolCallId"]),
                                  content if isinstance(content, str) else str(content))
        elif message.get("role") == "user":
            content = message.get("content")
            turn = ops.UserText(content if isinstance(content, str) else "")
    if turn is not None:
        await submit(row, sid, turn, **extra)
    elif not notice.get("resume"):
        # Nothing for the agent (a history it has seen): end the run at once.
        await port.finish_agui_run(row["agent_id"], sid, notice.get("run_id"))


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
    _kick(sid)


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


async def _on_answer(event):
    """The outcome of a request a run asked: claimed once, then the answer is the next turn."""
    if event.get("status") == "moved":
        return
    try:
        sid = port.session_id(event.get("session_id"))
    except Exception:
        return
    request_id = event.get("request_id")
    if not await port.claim_answer(sid, request_id, _reply_channel()):
        return  # another waiter (process) took it
    asked = await port.db(store.asked, sid, request_id)
    if asked is None:
        return
    row = await remote_agent(asked.agent_id)
    if row is None:
        return
    resume = (asked.asks or {}).get(request_id)
    status = event.get("status") or "answered"
    if isinstance(resume, dict) and "retry" in resume:  # "try again?" after a lost run
        value = event.get("value") if isinstance(event.get("value"), dict) else {}
        if status == "answered" and value.get("approved"):
            again = turns.from_json(resume["retry"])
            if again is not None:
                await submit(row, sid, again)
        return
    await submit(row, sid, ops.Answer(str(request_id), event.get("value"), resume, status))


def _reply_channel():
    return f"{port.REPLY_PREFIX}runtime"


# Draining the queue ----------------------------------------------------------------------------

_local = {}  # run_id -> the task running it in this process
_reasons = {}  # run_id -> why it was cancelled
_draining = {}  # session id -> the drain task of this process


def _kick(sid):
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
        config = await _config(agent_row)
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


async def _tell(agent_id, sid, text):
    """A system message in the session's chat (every client shows it)."""
    try:
        await port.store_activity(agent_id, sid, "message", {
            "message_id": port.new_id(), "role": "system", "sender": SYSTEM_SENDER,
            "content": text[:2000]})
    except Exception:
        log.warning("a2ui: could not tell session %s: %s", sid, text[:200], exc_info=True)


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
        _kick(session)
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
        _kick(sid)


_sweepers = {}


def _ensure_sweeping():
    if not _server_loop():
        return
    loop = asyncio.get_running_loop()
    task = _sweepers.get(loop)
    if task is None or task.done():
        _sweepers[loop] = loop.create_task(_sweep_forever(), name="a2ui-remote-sweep")


_present = {}  # agent id -> this process's presence member for it


async def _join_presence():
    """A remote agent is online while a server process can run it: each process that serves
    remote agents is a presence member of each (``presence``: refreshed by its heartbeat,
    lapsed when the process dies); one no longer remote leaves."""
    await remote_agent(0)  # the cache, fresh enough
    agents = _cache["agents"]
    for agent_id in [a for a in _present if a not in agents]:
        await port.leave_presence(_present.pop(agent_id))
    for agent_id in [a for a in agents if a not in _present]:
        member = _present[agent_id] = f"{port.REPLY_PREFIX}presence.{agent_id}.{HOLDER}"
        await port.join_presence(agent_id, member)


async def _sweep_forever():
    await _holder()
    with contextlib.suppress(Exception):
        await _join_presence()
    while True:
        await asyncio.sleep(SWEEP_SECONDS)
        try:
            await _join_presence()
            await sweep()
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.warning("a2ui: the remote agents' sweep failed: %s", exc)


# Applying ops ----------------------------------------------------------------------------------


class _Text:
    __slots__ = ("id", "role", "content", "part", "shown", "flushed_at", "metadata")

    def __init__(self, message_id, role, metadata=None):
        self.id, self.role, self.content, self.part = message_id, role, "", 0
        self.shown, self.flushed_at, self.metadata = "", 0.0, metadata


class Applier:
    """One run's ops as session events, through ``port`` (the checks of an agent's push)."""

    def __init__(self, config, sid, ctx, pk=None):
        self.config, self.sid, self.ctx, self.pk = config, sid, ctx, pk
        self.agent_id = config.agent_id
        self.texts = {}
        self.state = copy.deepcopy(ctx.state)
        self.ids = dict(ctx.ids)
        self.asks = {}
        self.result = None
        self.failed = None
        self.finished = False
        self.done = False
        self.events = 0
        self.refused = 0
        self.told_refused = False
        s = port.settings
        self.flush_seconds = s.REMOTE_AGENT_TEXT_FLUSH_MS / 1000
        self.max_length = s.ACTIVITY_MAX_MESSAGE_LENGTH
        self.reasoning = s.REMOTE_AGENT_SHOW_REASONING
        self.ticker = None
        self.surfaces = None  # the session's surface ids, read on the first Surface

    async def apply(self, op):
        self.events += 1
        handler = getattr(self, "_" + type(op).__name__.lower(), None)
        if handler is None:
            return
        try:
            await handler(op)
        except port.DomainError as exc:
            if str(exc.fault) == "session_not_found":
                raise
            self.refused += 1
            detail = getattr(exc, "data", None)
            said = exc.message or str(exc.fault).replace("_", " ")
            self.ctx.refused.append(Refusal(op, str(exc.fault), said, detail))
            log.info("a2ui: a remote agent's %s was refused: %s %s", type(op).__name__,
                     said[:200], str(detail)[:300])
            if isinstance(op, ops.Surface) and not self.told_refused:
                self.told_refused = True
                await _tell(self.agent_id, self.sid, "A screen from the agent could not be "
                            f"shown ({said[:200]}).")

    # Text ---------------------------------------------------------------------------------

    async def _textdelta(self, op):
        await self._delta(op.message_id, op.role, op.delta)

    async def _reasoning(self, op):
        if self.reasoning:
            await self._delta(f"reasoning-{op.message_id}", "agent", op.delta,
                              {"reasoning": True})

    async def _delta(self, message_id, role, delta, metadata=None):
        text = self.texts.get(message_id)
        if text is None:
            text = self.texts[message_id] = _Text(message_id, role, metadata)
        text.content += delta
        while len(text.content) > self.max_length:  # the rest continues in a new message
            head, text.content = text.content[:self.max_length], text.content[self.max_length:]
            await self._store_text(text, head)
            text.part += 1
            text.shown = ""
        now = time.monotonic()
        wait = self.flush_seconds + len(text.content) / 200_000
        if now - text.flushed_at >= wait:
            await self._show_text(text)
        elif self.ticker is None:
            self.ticker = asyncio.get_running_loop().create_task(self._tick(wait))

    async def _tick(self, wait):
        try:
            await asyncio.sleep(wait)
            for text in list(self.texts.values()):
                if text.content != text.shown:
                    await self._show_text(text)
        except asyncio.CancelledError:
            pass
        except Exception as exc:
            log.info("a2ui: a streamed message could not be shown: %s", exc)
        finally:
            self.ticker = None

    def _message_id(self, text):
        base = safe_id(text.id)
        return base if text.part == 0 else f"{base}:{text.part}"

    def _data(self, text, content, streaming):
        data = {"message_id": self._message_id(text),
                "role": "system" if text.role == "system" else "agent",
                "sender": self.config.label, "content": content}
        metadata = dict(text.metadata or {})
        if streaming:
            metadata["streaming"] = True
        if metadata:
            data["metadata"] = metadata
        return data

    async def _show_text(self, text):
        text.flushed_at = time.monotonic()
        if not text.content or text.content == text.shown:
            return
        text.shown = text.content
        await port.show_message(self.sid, self._data(text, text.content, True))

    async def _store_text(self, text, content):
        if content:
            await port.store_activity(self.agent_id, self.sid, "message",
                                      self._data(text, content, False))

    async def _textend(self, op):
        text = self.texts.pop(op.message_id, None)
        if text is not None:
            await self._store_text(text, text.content)

    async def _reasoningend(self, op):
        await self._textend(ops.TextEnd(f"reasoning-{op.message_id}"))

    async def close(self):
        """The texts still open are complete (the run ended)."""
        if self.ticker is not None:
            self.ticker.cancel()
        for message_id in list(self.texts):
            with contextlib.suppress(Exception):
                await self._textend(ops.TextEnd(message_id))

    # Surfaces, questions, state, tools -----------------------------------------------------

    async def _surface(self, op):
        if self.surfaces is None:
            self.surfaces = await port.db(store.surface_ids, self.sid)
        messages = []
        for message in op.messages:
            create = message.get("createSurface") if isinstance(message, dict) else None
            if isinstance(create, dict) and create.get("surfaceId") in self.surfaces:
                continue  # shown already: snapshots repeat it (@ag-ui/a2ui-middleware)
            messages.append(message)
        if not messages:
            return
        await port.push(self.agent_id, self.sid, "a2ui.v09", {"messages": messages})
        for message in messages:
            for key in ("createSurface",):
                body = message.get(key) if isinstance(message, dict) else None
                if isinstance(body, dict) and isinstance(body.get("surfaceId"), str):
                    self.surfaces.add(body["surfaceId"])
            gone = message.get("deleteSurface") if isinstance(message, dict) else None
            if isinstance(gone, dict):
                self.surfaces.discard(gone.get("surfaceId"))

    async def _ask(self, op):
        """The question is kept with the run before the person sees it: an answer that comes
        at once (while the run still streams) finds what it resumes."""
        params = {**op.params, "request_id": op.request_id}
        await self._keep_ask(op.request_id, op.resume)
        await port.ask(self.agent_id, self.sid, op.kind, params, _reply_channel())

    async def _keep_ask(self, request_id, resume):
        self.asks[request_id] = resume
        if self.pk is not None:
            await port.db(store.add_ask, self.pk, request_id, resume)

    async def offer_retry(self, turn):
        """After a lost run no client can resume: ask the person whether to try again."""
        if not isinstance(turn, dict) or turn.get("type") not in ("text", "action", "tool",
                                                                  "answer"):
            return
        request_id = port.new_id()
        await self._keep_ask(request_id, {"retry": turn})
        await port.ask(self.agent_id, self.sid, "confirm", {
            "request_id": request_id, "title": "The agent's answer was interrupted. Try again?",
            "severity": "info"}, _reply_channel())

    async def _state(self, op):
        await self._set_state(op.snapshot if isinstance(op.snapshot, dict) else {})

    async def _statepatch(self, op):
        try:
            after = jsonpatch.apply_patch(self.state, list(op.ops))
        except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException, TypeError,
                ValueError, IndexError, KeyError):
            raise port.DomainError(port.Fault.INVALID_INPUT, "A state patch did not apply.",
                                   {"path": "delta"}) from None
        await self._set_state(after if isinstance(after, dict) else {})

    async def _set_state(self, after):
        """The state document becomes ``after``: one ``state.delta`` per top-level key that
        changed (the core's checks and limits apply to each)."""
        before = self.state
        for key in [k for k in before if k not in after]:
            await port.store_activity(self.agent_id, self.sid, "state.delta",
                                      {"path": str(key), "removed": True})
            del before[key]
        for key, value in after.items():
            if key in before and before[key] == value:
                continue
            await port.store_activity(self.agent_id, self.sid, "state.delta", {
                "path": str(key), "new_value": value, "removed": False})
            before[key] = copy.deepcopy(value)

    async def _tool(self, op):
        data = {"call_id": safe_id(op.call_id), "phase": op.phase}
        if op.phase == "requested":
            data.update(tool_name=str(op.name or "tool")[:128], status="PENDING",
                        parameters=op.args if isinstance(op.args, dict) else
                        {"arguments": op.args})
        elif op.phase == "result":
            if op.error:
                data.update(status="FAILED", error=str(op.error)[:TOOL_RESULT_LIMIT])
            else:
                result = op.result
                if isinstance(result, str) and len(result) > TOOL_RESULT_LIMIT:
                    result = result[:TOOL_RESULT_LIMIT] + "…"
                data.update(status="COMPLETED", result=result)
        else:
            data.update(status=op.status or "RUNNING",
                        **({"message": op.message} if op.message else {}))
        await port.store_activity(self.agent_id, self.sid, "tool_call", data)

    async def _notice(self, op):
        params = {"level": op.level if op.level in ("info", "success", "warning", "error")
                  else "info", "title": op.title or self.config.label, "message": op.message}
        await port.push(self.agent_id, self.sid, "ui.notify", params)

    async def _failed(self, op):
        self.failed = op
        await _tell(self.agent_id, self.sid, f"The agent's run failed: {op.message}"[:2000])

    async def _finished(self, op):
        self.finished = True
        self.result = op.outcome

    async def _runids(self, op):
        """Kept with the run at once (not only at its end): a run whose process dies can be
        picked up by another one with them (A2A's task id)."""
        before = dict(self.ids)
        self.ids.update(op.as_dict())
        if self.pk is not None and self.ids != before:
            await port.db(store.set_ids, self.pk, dict(self.ids))

    # The end --------------------------------------------------------------------------------

    def counts(self):
        out = {"events": self.events}
        if self.refused:
            out["refused"] = self.refused
        if self.asks:
            out["asked"] = len(self.asks)
        unknown = self.ids.pop("agui_unknown_events", None)
        if unknown:
            out["unknown_events"] = unknown
        return out

    def outcome(self):
        if self.failed is not None:
            return Status.ERROR, {"code": self.failed.code or "run_error",
                                  "message": self.failed.message[:500]}
        if self.asks:
            return Status.WAITING, {}
        out = {}
        if self.result is not None:
            out["result"] = self.result
        return Status.FINISHED, out
