"""The SSE stream of one AG-UI 1.0 run: the session's events in AG-UI 1.0 words until it ends.

In order: join the session's group (the run was counted as a socket by ``threads.aopen``), read
what the session holds (components, surfaces, activity: the translator's starting point), send
RUN_STARTED and STATE_SNAPSHOT, apply the ``resume`` answers (after joining, so nothing the
agent pushes once it has them is missed), tell the agent ``agui.run_started``, then translate
the session's events (``a2ui.agui1.translate``) until the run ends:

* the agent ends it (``run.ended``): RUN_FINISHED (``result``) or RUN_ERROR;
* the agent asks the person (``request.opened``): RUN_FINISHED with an interrupt outcome;
* no event for ``AGUI_RUN_TIMEOUT_SECONDS``: RUN_ERROR ``RUN_TIMEOUT``;
* the session closes: RUN_ERROR ``SESSION_CLOSED``;
* the client goes away: the run is ``cancelled`` and the agent told so.

Each end is a conditional UPDATE of the run's row (``a2ui.services.runs``): when another end
won (e.g. the agent finished while the timeout fired), the stream sends what the row says. A
keepalive comment goes out every ``AGUI_KEEPALIVE_SECONDS`` while waiting, with a heartbeat of
the row that also notices an end whose event was lost.
"""

import asyncio
import json
import logging
import time
from dataclasses import dataclass

from ag_ui.encoder import EventEncoder
from channels.layers import get_channel_layer

from ..conf import a2ui_settings
from ..core import activity as A
from ..core import events
from ..core.errors import DomainError
from ..core.events import Kind
from ..services import groups, pending, runs, sessions
from ..services import surfaces as surface_service
from . import threads
from .translate import Run

log = logging.getLogger("a2ui.agui")
ENCODER = EventEncoder()
Status = runs.Status
KEEPALIVE = b": keepalive\n\n"


@dataclass
class Context:
    session: object
    token: object
    run_input: object
    plan: list
    counted: object


def encode(event):
    """One ``data:`` frame (the package's EventEncoder; a value UTF-8 cannot carry, such as a
    lone surrogate, is sent escaped: the same JSON value), stamped in ms since the epoch."""
    event.timestamp = int(time.time() * 1000)
    try:
        return ENCODER.encode(event).encode()
    except (ValueError, UnicodeEncodeError):
        text = json.dumps(event.model_dump(by_alias=True), separators=(",", ":"))
        return f"data: {text}\n\n".encode()


async def _activity(sid):
    """The session's activity document, when the core keeps one (a2ui.services.activity)."""
    try:
        from ..services import activity as activity_service
    except ImportError:
        return A.Activity()
    load = getattr(activity_service, "aload", None)
    stored = await load(sid) if load is not None else None
    return A.from_dict(stored) if isinstance(stored, dict) else A.Activity()


async def _start(sid, ctx):
    snap = await sessions.asnapshot(sid)
    seq, states = await surface_service.aload(sid)
    tracker = surface_service.Tracker()
    tracker.seq = seq
    surfaces = {s.surface_id: s.snapshot_messages() for s in states if not s.deleted}
    run = Run(ctx.run_input.thread_id, ctx.run_input.run_id, activity=await _activity(sid),
              components=snap.components, surfaces=surfaces)
    return run, tracker


async def _resume(sid, plan):
    for request_id, kind, action in plan:
        if action[0] == "cancel":
            await pending.acancel(sid, request_id)
        else:
            await pending.aanswer(sid, request_id, kind, action[1])


def _final(run, status, outcome):
    """The closing events for a run another party ended, from its row."""
    if status == Status.FINISHED:
        return run.finish(outcome.get("result"))
    if status == Status.INTERRUPTED and run.pending:
        return run.interrupt()
    if status == Status.ERROR:
        return run.error(outcome.get("message"), outcome.get("code"))
    if status == Status.TIMED_OUT:
        return run.error("The agent did not end the run in time.", "RUN_TIMEOUT")
    return run.error(f"The run ended ({status}).", "RUN_ENDED")


async def _end(ctx, run, status, outcome, events_if_won):
    sid, run_id = ctx.session.session_id, ctx.run_input.run_id
    if await runs.aend(ctx.session.agent_id, sid, run_id, status, outcome):
        return events_if_won()
    stored, stored_outcome = await runs.aoutcome_of(sid, run_id)
    return _final(run, stored, stored_outcome)


def _surfaces(run, tracker, data, states=None):
    if states is not None:  # a gap: the surfaces touched again, whole
        return run.translate(Kind.SURFACE_BATCH, {"messages": tracker.resync(*states)})
    numbered = tracker.accept_numbered(surface_service.tracked(data))
    if numbered is None:
        return None
    return run.translate(Kind.SURFACE_BATCH, {"messages": [m for _, m in numbered]})


async def run_events(ctx):
    sid, run_id = ctx.session.session_id, ctx.run_input.run_id
    layer = get_channel_layer()
    channel = await layer.new_channel()
    joined = [groups.session_group(sid), groups.token_group(ctx.token.jti)]
    for group in joined:
        await layer.group_add(group, channel)
    receiving, run = None, None
    loop = asyncio.get_running_loop()
    try:
        run, tracker = await _start(sid, ctx)
        for event in run.start():
            yield encode(event)
        # The agent hears of the run first, then gets the answers its resume entries carry.
        await runs.anotify_started(ctx.session.agent_id, sid, ctx.run_input.notice())
        try:
            await _resume(sid, ctx.plan)
        except DomainError as exc:
            reason = f"The answer was not taken: {exc.message or exc.fault}."
            out = await _end(ctx, run, Status.ERROR, {"message": reason, "code": "RESUME_FAILED"},
                             lambda: run.error(reason, "RESUME_FAILED"))
            for event in out:
                yield encode(event)
            return
        timeout = a2ui_settings.AGUI_RUN_TIMEOUT_SECONDS
        keepalive = a2ui_settings.AGUI_KEEPALIVE_SECONDS
        deadline = loop.time() + timeout
        while not run.ended:
            if receiving is None:
                receiving = asyncio.ensure_future(layer.receive(channel))
            left = deadline - loop.time()
            done, _ = await asyncio.wait({receiving}, timeout=max(0.0, min(keepalive, left)))
            if not done:
                if loop.time() >= deadline:
                    out = await _end(ctx, run, Status.TIMED_OUT, {}, lambda: run.error(
                        "The agent did not end the run in time.", "RUN_TIMEOUT"))
                else:
                    yield KEEPALIVE
                    stored, outcome = await runs.aheartbeat(sid, run_id)
                    out = _final(run, stored, outcome) if stored != Status.RUNNING else []
                for event in out:
                    yield encode(event)
                continue
            message, receiving = receiving.result(), None
            out = await _handle(ctx, run, tracker, message)
            if out is None:
                continue
            deadline = loop.time() + timeout  # the agent is alive: the timeout starts again
            for event in out:
                yield encode(event)
    finally:
        if receiving is not None:
            receiving.cancel()
        if run is None or not run.ended:  # the client went away (or the stream failed)
            await runs.aend(ctx.session.agent_id, sid, run_id, Status.CANCELLED)
        for group in joined:
            await layer.group_discard(group, channel)
        await threads.arelease(sid, ctx.counted)


async def _handle(ctx, run, tracker, message):
    """The AG-UI events for one channel-layer message; None when it is not the agent's."""
    if message.get("type") == "a2ui.close":
        return await _end(ctx, run, Status.ERROR, {"message": "The session was closed."},
                          lambda: run.error("The session was closed.", "SESSION_CLOSED"))
    if message.get("type") != events.MESSAGE_TYPE or message.get("resync"):
        return None
    kind, data = events.kind_of(message), message.get("data")
    if kind is None or not isinstance(data, dict):
        return None
    if kind is Kind.RUN_ENDED:
        if data.get("run_id") != run.run_id:
            return None
        return _final(run, data.get("status"), data)
    if kind is Kind.SURFACE_BATCH:
        out = _surfaces(run, tracker, data)
        if out is None:
            out = _surfaces(run, tracker, None, await surface_service.aload(ctx.session.session_id))
    else:
        out = run.translate(kind, data)
    if run.pending and not run.ended:
        ids = [i.id for i in run.pending]
        out += await _end(ctx, run, Status.INTERRUPTED, {"interrupts": ids}, run.interrupt)
    return out
