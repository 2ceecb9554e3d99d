"""A client coming back to a run whose stream broke off (docs/protocol-agui.md, "Resuming a
run"): ``POST /api/v4/agui/run`` with the run's ``RunAgentInput`` again (same ``threadId`` and
``runId``) and ``Last-Event-ID: <the id of the last event it received>``, on any process.

The run's own stream (``a2ui.agui1.stream``) keeps every event in the run's log
(``a2ui.agui1.runlog``) and goes on without its client for ``AGUI_RESUME_SECONDS``. This
reader sends the log's events after ``Last-Event-ID``, in order and each once (their ids and
bytes as first sent), then the new ones as the stream appends them, until the run's final
event. It polls the log (every 50 ms after an event, slowing to every 0.5 s while quiet; one
round trip that also keeps the reader attached, so the stream knows a client is back), sends
a keepalive comment every ``AGUI_KEEPALIVE_SECONDS`` and looks at the run's row meanwhile.

* History gone (Redis lost the log, it expired after the run ended, or the oldest events were
  trimmed): never a silent skip. The reader sends ``RUN_ERROR`` ``code: "RESUME_UNAVAILABLE"``
  (no id) and ends the run if it still runs (``cancelled``, ``reason: "resume_unavailable"``,
  the agent told), so the thread's next run starts from the session's state.
* The run ended and its stream is gone without its final event in the log (its process died):
  the final event is made from the run's row (``RUN_ERROR`` ``STREAM_LOST``, ...), no id.
* Another reader attached to the run since (the client came back once more): this one stops.
* The bearer token it came back with is revoked: ``RUN_ERROR`` ``AUTH_FAILED``, and it stops
  (the run's own stream ends the run when the run's token is revoked).

A run whose client went and that no reader reads is *unattended*: a new run of the thread (a
page reload starts one) takes its place (:func:`asupersede`: ``cancelled``, ``reason:
"superseded"``) instead of being refused with 409.
"""

import asyncio
import re
import time
import uuid

from ag_ui.core import RunErrorEvent

from a2ui.agui1 import runleases, runlog, threads
from a2ui.agui1 import runs as agui_runs
from a2ui.agui1.frames import KEEPALIVE, Status, encode, final_events
from a2ui.agui1.inputs import InputError
from a2ui.agui1.translate import Run
from a2ui.conf import a2ui_settings
from a2ui.core.events import Kind
from a2ui.requests import pending
from a2ui.runs import records as runs

HEADER = "Last-Event-ID"
_NUMBER = re.compile(r"[0-9]{1,18}")
FAST, SLOW = 0.05, 0.5  # seconds between reads of the log: after an event, at most
ROW_CHECK_SECONDS = 2.0  # how often a quiet reader looks at the run's row
RESUME_UNAVAILABLE = "resume_unavailable"
SUPERSEDED = {"reason": "superseded",
              "message": "A new run of the thread took the place of this run, whose client "
                         "had gone."}


def parse_last_event_id(raw):
    """The number of ``Last-Event-ID`` (the id of an event of this server's runs), or a 400
    :class:`InputError` naming the header."""
    value = raw.strip()
    if not _NUMBER.fullmatch(value):
        raise InputError(400, f"{HEADER} must be the id of an event of the run (a number).",
                         HEADER)
    return int(value)


def unavailable_event(after):
    return RunErrorEvent(
        message=f"The run's events after {after} are no longer kept: start a new run of the "
                "thread; it begins with the session's state.",
        code=RESUME_UNAVAILABLE.upper())


async def asupersede(session_id):
    """End the session's running runs whose client went and that no reader reads (a new run of
    the thread takes their place): ``cancelled``, ``reason: "superseded"``, the agent told.
    Their stream ends with RUN_ERROR ``SUPERSEDED`` in their log."""
    for run_id, agent_id in await runs.arunning_of(session_id):
        if await runlog.unattended(session_id, run_id):
            await agui_runs.aend_said(agent_id, session_id, run_id, Status.CANCELLED,
                                 dict(SUPERSEDED))


async def _final_from_row(session_id, thread_id, run_id, status, outcome):
    """The final event of a run whose stream ended without one in the log (its process died),
    from the run's row. Interrupts still open are said again as the run's interrupt."""
    run = Run(thread_id, run_id)
    if status == Status.INTERRUPTED:
        asked = set(outcome.get("interrupts") or ())
        for data in await pending.aopen_requests(session_id):
            if str(data["params"].get("request_id")) in asked:
                run.translate(Kind.REQUEST_OPENED, data)
    return final_events(run, status, outcome)


async def reattach_events(session_id, agent_id, thread_id, run_id, after, token_jti=None):
    """The response of a client back at run ``run_id`` after event ``after`` (module docs);
    ``token_jti``: the bearer token it came back with (None: the session cookie)."""
    token = uuid.uuid4().hex
    await runlog.attach(session_id, run_id, token)
    pause, keepalive = FAST, a2ui_settings.AGUI_KEEPALIVE_SECONDS
    now = time.monotonic()
    next_beat, next_row = now + keepalive, now + ROW_CHECK_SECONDS
    ended_at = None  # (monotonic) when the row was first seen ended
    try:
        while True:
            try:
                found = await runlog.read(session_id, run_id, after, token)
            except Exception:  # Redis away: read again (the numbers still decide)
                found = None
            if found is not None and (found.taken or found.complete):
                return  # another reader took over; or the client has the run's final event
            if found is not None and found.lost:
                yield encode(unavailable_event(after))
                await agui_runs.aend_said(agent_id, session_id, run_id, Status.CANCELLED, {
                    "reason": RESUME_UNAVAILABLE,
                    "message": "The client came back, but the run's events it missed are no "
                               "longer kept: it starts again from the session's state."})
                return
            if found is not None and found.entries:
                frames = []
                for number, frame, final in found.entries:
                    frames.append(frame)
                    after = number
                    if final:
                        yield b"".join(frames)
                        return
                yield b"".join(frames)
                pause = FAST
                continue
            now = time.monotonic()
            if now >= next_beat:
                next_beat = now + keepalive
                yield KEEPALIVE
            if ended_at is not None:
                # The row says the run ended, the log has no final event: its stream appends
                # it soon, unless the stream is gone (its lease) or it took too long.
                (alive,) = await runleases.alive([(session_id, run_id)])
                if alive is False or now - ended_at > 2 * keepalive + ROW_CHECK_SECONDS:
                    status, outcome = await runs.aoutcome_of(session_id, run_id)
                    for event in await _final_from_row(session_id, thread_id, run_id, status,
                                                       outcome or {}):
                        yield encode(event)
                    return
            elif now >= next_row:
                next_row = now + ROW_CHECK_SECONDS
                if token_jti is not None and await threads.arevoked(token_jti):
                    yield encode(RunErrorEvent(message="The credential was revoked.",
                                               code="AUTH_FAILED"))
                    return
                status, _ = await runs.aoutcome_of(session_id, run_id)
                if status != Status.RUNNING:
                    ended_at = now
                    pause = FAST
                    continue  # read the log once more first
            await asyncio.sleep(pause)
            pause = min(pause * 2, SLOW)
    finally:
        await asyncio.shield(runlog.detach(session_id, run_id, token))
