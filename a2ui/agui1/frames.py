"""What an AG-UI 1.0 run's stream is made of: its context and ids, its events encoded as SSE
frames (with their ids and the run log's time to live), where it starts from (a new run, or a
run taken up again) and how it ends (the run's row, then the final event). Used by the stream
(``a2ui.agui1.stream``) and by a client coming back (``a2ui.agui1.resume``).
"""

import json
import logging
import time
from dataclasses import dataclass

from ag_ui.encoder import EventEncoder

from a2ui import surfaces as surface_service
from a2ui.agui1 import runs as agui_runs
from a2ui.agui1.translate import Run
from a2ui.conf import a2ui_settings
from a2ui.core import activity as A
from a2ui.core.events import Kind
from a2ui.infra import dbthreads
from a2ui.push import answers
from a2ui.runs import records as runs
from a2ui.sessions import lifecycle as sessions
from a2ui.surfaces import activity as activity_service

log = logging.getLogger("a2ui.agui")

ENCODER = EventEncoder()
Status = runs.Status
KEEPALIVE = b": keepalive\n\n"
FINAL_TYPES = {"RUN_FINISHED", "RUN_ERROR"}
CLIENT_GONE = "client_gone"
AWAY_CHECK_SECONDS = 1.0  # how often a run whose client went looks for one that came back
#: A client this far behind (bytes sent by the stream, not yet taken by the response) is cut
#: off: it comes back with Last-Event-ID and reads the rest from the run's log at its pace.
BEHIND_BYTES = 8 * 1024 * 1024
CUT = object()  # what the response takes as "the client is too far behind: end here"


@dataclass
class Context:
    session: object
    token: object
    run_input: object
    plan: list
    counted: object
    #: The transcript ids of this run's own new messages (recorded before the stream joins;
    #: their ``message.batch`` may still be numbered after it: not echoed to this run).
    own_messages: frozenset = frozenset()

    def started(self):
        """What the stream keeps of its context once the run has started: the ids, not the
        session's row nor the parsed request (its messages, tools, context and state: the
        whole body, held for as long as the run lasts otherwise)."""
        return Context(Ids(self.session.session_id, self.session.agent_id), self.token,
                       Ids(run_id=self.run_input.run_id, thread_id=self.run_input.thread_id),
                       [], self.counted)


@dataclass(slots=True)
class Ids:
    session_id: object = None
    agent_id: object = None
    run_id: str = None
    thread_id: str = None


def encode(event, number=None):
    """One ``data:`` frame (the package's EventEncoder; a value UTF-8 cannot carry, such as a
    lone surrogate, is sent escaped: the same JSON value), stamped in ms since the epoch;
    preceded by ``id: <number>`` when the event has a place in the run's log."""
    event.timestamp = int(time.time() * 1000)
    try:
        frame = ENCODER.encode(event).encode()
    except (ValueError, UnicodeEncodeError):
        text = json.dumps(event.model_dump(by_alias=True), separators=(",", ":"))
        frame = f"data: {text}\n\n".encode()
    return frame if number is None else b"id: %d\n" % number + frame


def is_final(event):
    return str(getattr(event.type, "value", event.type)) in FINAL_TYPES


def log_ttl(final=False):
    """How long the run's log is kept from now: an ended run's ``AGUI_RESUME_SECONDS``; a
    running run's, past any quiet period it may have (its timeout) and a client's return."""
    resume = a2ui_settings.AGUI_RESUME_SECONDS
    return resume if final else a2ui_settings.AGUI_RUN_TIMEOUT_SECONDS + resume + 60


def stream_state(sid):
    """What a run's stream shows of the session, read in one call on the per-message pool:
    its live components, its surfaces (with the surface sequence they are at) and its
    activity document."""
    components = sessions.live_components(sid)
    seq, states = surface_service.load(sid)
    stored = activity_service.load(sid)
    activity = A.from_dict(stored) if isinstance(stored, dict) else A.Activity()
    surfaces = {s.surface_id: s.snapshot_messages() for s in states if not s.deleted}
    return components, seq, surfaces, activity


astream_state = dbthreads.wrap(stream_state)


async def start_run(sid, ctx):
    components, seq, surfaces, activity = await astream_state(sid)
    tracker = surface_service.Tracker()
    tracker.seq = seq
    run = Run(ctx.run_input.thread_id, ctx.run_input.run_id, activity=activity,
              components=components, surfaces=surfaces)
    return run, tracker


async def resume_run(sid, plan):
    for request_id, kind, action in plan:
        if action[0] == "cancel":
            await answers.acancel(sid, request_id)
        else:
            await answers.aanswer(sid, request_id, kind, action[1], via="agui1")


def final_events(run, status, outcome):
    """The closing events for a run another party ended, from its row."""
    if status == Status.FINISHED:
        return run.finish(outcome.get("result"))
    if status == Status.INTERRUPTED and run.pending:
        return run.interrupt()
    if status == Status.ERROR:
        return run.error(outcome.get("message"), outcome.get("code"))
    if status == Status.TIMED_OUT:
        return run.error("The agent did not end the run in time.", "RUN_TIMEOUT")
    reason = outcome.get("reason")
    if isinstance(reason, str) and reason:
        # stream_lost (taken for lost: its lease lost with Redis), client_gone, superseded,
        # resume_unavailable: the code says which
        return run.error(outcome.get("message") or f"The run ended ({reason}).", reason.upper())
    return run.error(f"The run ended ({status}).", "RUN_ENDED")


async def end_run(ctx, run, status, outcome, events_if_won):
    sid, run_id = ctx.session.session_id, ctx.run_input.run_id
    if await agui_runs.aend(ctx.session.agent_id, sid, run_id, status, outcome):
        return events_if_won()
    stored, stored_outcome = await runs.aoutcome_of(sid, run_id)
    return final_events(run, stored, stored_outcome)


def surface_events(run, tracker, data, states=None):
    if states is not None:  # a gap: the surfaces touched again, whole
        return run.translate(Kind.SURFACE_BATCH, {"messages": tracker.resync(*states)})
    numbered = tracker.accept_numbered(surface_service.tracked(data))
    if numbered is None:
        return None
    return run.translate(Kind.SURFACE_BATCH, {"messages": [m for _, m in numbered]})
