"""The SSE stream of one AG-UI 1.0 run: the session's events in AG-UI 1.0 words until it ends.

``RunStream`` is a ``SessionStream`` (``a2ui.consumers.streams``): the connection base of
every person socket. In order: it joins the session's group (the run was counted as a socket
by ``threads.aopen``), reads what the session holds (components, surfaces, activity: the
translator's starting point), sends RUN_STARTED, STATE_SNAPSHOT and what the session holds
that the client lacks (``Run.screen``), tells the agent
``agui.run_started``, applies the ``resume`` answers (after joining, so nothing the agent
pushes once it has them is missed), then translates the session's events
(``a2ui.agui1.translate``) until the run ends:

* the agent ends it (``run.ended``): RUN_FINISHED (``result``) or RUN_ERROR;
* the agent asks the person (``request.opened``): RUN_FINISHED with an interrupt outcome;
* no event for ``AGUI_RUN_TIMEOUT_SECONDS``: RUN_ERROR ``RUN_TIMEOUT``;
* the session closes (or the token is revoked): RUN_ERROR ``SESSION_CLOSED``;
* the client goes away: the run is ``cancelled`` and the agent told so.

A lost event (a gap in the session's order, or a counter Redis lost) resends the run's state:
STATE_SNAPSHOT and a fresh snapshot of every activity the run has shown (``Run.resync``).
Each end is a conditional UPDATE of the run's row (``a2ui.runs.records``): when another end
won (e.g. the agent finished while the timeout fired), the stream sends what the row says. A
keepalive comment goes out every ``AGUI_KEEPALIVE_SECONDS`` while waiting, with a heartbeat of
the row that also notices an end whose event was lost.

Resumption (docs/protocol-agui.md, "Resuming a run"): every event carries its SSE ``id`` (1,
2, ... in the run) and is kept in the run's log (``a2ui.agui1.runlog``) before its client
gets it. The stream is a task of its own (``_produce``); the response only reads what it
sends (``body``). When the client goes before the run's end, the run goes on without it: a
client that comes back with ``Last-Event-ID`` (to any process: ``a2ui.agui1.resume``) gets
the rest from the log. A run with no client back for ``AGUI_RESUME_SECONDS`` ends as
``cancelled`` (``reason: "client_gone"``), as a run whose client went used to at once; a new
run of the thread takes the place of a run whose client went (``resume.asupersede``).
"""

import asyncio
import logging
import time
import weakref

from a2ui import surfaces as surface_service
from a2ui.agui1 import runleases, runlog
from a2ui.agui1 import runs as agui_runs
from a2ui.agui1.frames import (
    AWAY_CHECK_SECONDS,
    BEHIND_BYTES,
    CLIENT_GONE,
    CUT,
    KEEPALIVE,
    Status,
    astream_state,
    encode,
    end_run,
    final_events,
    is_final,
    log_ttl,
    resume_run,
    start_run,
    surface_events,
)
from a2ui.agui1.translate import known_messages
from a2ui.conf import a2ui_settings
from a2ui.consumers.streams import SessionStream, leave_request_thread
from a2ui.core.errors import DomainError
from a2ui.core.events import Kind
from a2ui.infra import memory
from a2ui.leanqueue import LeanQueue
from a2ui.push import sweep
from a2ui.requests import pending
from a2ui.runs import records as runs
from a2ui.sessions import clients

log = logging.getLogger("a2ui.agui")
def run_events(ctx, lease=None):
    """The response iterator of one run (``RunStream.frames``); ``lease`` (the person's place
    among their runs in flight, ``a2ui.infra.caps``) is released when the run's stream ends,
    or when the response is dropped unread."""
    stream = RunStream(ctx, lease)
    body = stream.frames()
    weakref.finalize(body, stream.unread)
    return body


class RunStream(SessionStream):
    """One run's SSE stream, on the connection base every socket shares
    (``a2ui.consumers.streams.SessionStream``): the run was counted as a socket of the session
    by ``threads.aopen``; the base joins, keeps the session's event order (a gap or a new
    epoch resends the run's state: ``send_state``), takes direct pushes and the sequence
    watch's resync orders, follows consent changes and operator closes."""

    adapter_name = "agui1"
    client_protocol = "agui1"

    def client_catalogs(self):
        return clients.ALL  # surfaces of any catalog, as ``a2ui-surface`` activities

    def __init__(self, ctx, lease=None):
        super().__init__(ctx.token, ctx.session.session_id, counted=ctx.counted)
        self.ctx = ctx
        self.run = self.tracker = None
        self.deadline = None
        self.lease = lease
        self.numbered = 0  # the id of the last event
        self.to_log = []  # [(id, frame, final)] not in the run's log yet
        self.inbox = LeanQueue()  # what the response sends; None: the end; CUT
        self.behind = 0  # bytes in the inbox
        self.task = None  # the stream (_produce), once the response is read
        self.done = False  # the response sent the stream's end
        self.away = False  # the response's client went before the run's end
        self.away_marked = False
        self.unattended_since = None  # (monotonic) since when no client reads the run
        self.checked_away = 0.0
        self.last_beat = None
        self.row_end = None  # (loop time, status, outcome): the row said the run ended

    # The response and the stream -------------------------------------------------------------

    def frames(self):
        return self.body()

    async def body(self):
        """The response: what the stream sends (``_produce``, started on the first read),
        until the stream ends. When the client goes first, the stream goes on without it."""
        if self.task is None:
            leave_request_thread()  # the run may outlive its request: no thread of its own
            self.task = asyncio.ensure_future(self._produce())
        try:
            while True:
                data = await self.inbox.get()
                if data is None:
                    self.done = True
                    return
                if data is CUT:
                    return  # the client goes (went_away): it comes back for the rest
                self.behind -= len(data)
                yield data
        finally:
            if not self.done:
                self.went_away()

    def went_away(self):
        """The response's client went before the run's end: the run goes on, for a client that
        comes back (``_abandoned``); a new run of the thread may take its place at once."""
        if not self.away:
            self.away = True
            self.unattended_since = time.monotonic()
            self.wake()  # the stream marks it at once (idle_seconds), then looks on

    async def _mark_away(self):
        if not self.away_marked:
            self.away_marked = True
            await runlog.mark_away(self.session_id or self.target, self.ctx.run_input.run_id,
                                   log_ttl())

    def unread(self):
        """The response was dropped without being read: no stream started; the person's place
        among their runs goes (the run, whose lease lapses, is ended as lost)."""
        if self.task is None and self.lease is not None and not self.lease.released:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                return  # the lease is released when it is collected
            loop.create_task(self.lease.release())

    async def _produce(self):
        # The run counts as a socket for the collection after a mass close
        # (``services.memory``) until its stream ends: it goes on AGUI_RESUME_SECONDS without its
        # client, so the collection its response's close scheduled comes too early for it.
        memory.socket_opened()
        try:
            async for data in self.listen():
                await self._keep()
                if not self.away:
                    self._send(data)
        except Exception:
            log.exception("a2ui: the stream of AG-UI 1.0 run %s failed",
                          self.ctx.run_input.run_id[:200])
        finally:
            try:
                await self._keep()
            finally:
                self.inbox.put_nowait(None)
                try:
                    if self.lease is not None:
                        await self.lease.release_shielded()
                finally:
                    memory.socket_closed()

    def _send(self, data):
        self.inbox.put_nowait(data)
        self.behind += len(data)
        if self.behind > BEHIND_BYTES:  # a slow client does not hold the stream's memory
            while not self.inbox.empty():
                self.inbox.get_nowait()
            self.behind = 0
            self.inbox.put_nowait(CUT)
            self.went_away()

    async def _keep(self):
        """The events written since, into the run's log (before the client gets them)."""
        if self.to_log:
            entries, self.to_log = self.to_log, []
            await runlog.append(self.session_id or self.target, self.ctx.run_input.run_id,
                                entries, log_ttl(any(final for _, _, final in entries)))

    def emit(self, out):
        for event in out:
            self.numbered += 1
            frame = encode(event, self.numbered)
            self.to_log.append((self.numbered, frame, is_final(event)))
            self.write(frame)
        if self.run is not None and self.run.ended:
            self.ended = True

    @property
    def idle_seconds(self):
        keepalive = a2ui_settings.AGUI_KEEPALIVE_SECONDS
        wait = keepalive if self.deadline is None else max(
            0.0, min(keepalive, self.deadline - self.loop.time()))
        if self.away and not self.away_marked:  # marked gone at once: a new run may take its
            return 0.0  # place
        if self.away or self.row_end is not None:
            return min(wait, AWAY_CHECK_SECONDS)
        return wait

    def _restart_timeout(self):
        self.deadline = self.loop.time() + a2ui_settings.AGUI_RUN_TIMEOUT_SECONDS

    async def _end(self, status, outcome, events_if_won):
        return await end_run(self.ctx, self.run, status, outcome, events_if_won)

    async def open(self):
        sid = self.session_id
        # This process streams the run: it keeps the run's lease while the stream lives, and
        # its housekeeping ends the runs of processes that died (agui_runs.aend_lost).
        await runleases.ahold(sid, self.ctx.run_input.run_id)
        sweep.ensure_started()
        self.run, self.tracker = await start_run(sid, self.ctx)
        self.last_beat = self.loop.time()
        self.run.own_messages = set(self.ctx.own_messages)
        self.emit(self.run.start())
        # What the session holds that the client lacks (a surface pushed before the run, ...).
        self.emit(self.run.screen(known_messages(self.ctx.run_input.model.messages)))
        # The agent hears of the run first, then gets the answers its resume entries carry.
        await agui_runs.anotify_started(self.ctx.session.agent_id, sid, self.ctx.run_input.notice())
        plan, self.ctx = self.ctx.plan, self.ctx.started()
        try:
            await resume_run(sid, plan)
        except DomainError as exc:
            reason = f"The answer was not taken: {exc.message or exc.fault}."
            self.emit(await self._end(Status.ERROR, {"message": reason, "code": "RESUME_FAILED"},
                                      lambda: self.run.error(reason, "RESUME_FAILED")))
            return
        self._restart_timeout()
        await self.ask_open_questions()

    async def ask_open_questions(self):
        """The session's questions still open (asked between runs, or left open by a run that
        ended otherwise) are the run's starting state: each goes through the translator as the
        ``request.opened`` it was, and the run ends with their interrupt as when the agent asks
        mid-run (``_ask``). Read after the run joined the session and gave the resume answers,
        so a question is either read here or arrives as an event after it."""
        if self.run is None or self.run.ended:
            return
        out = []
        for data in await pending.aopen_requests(self.session_id):
            out += self.run.translate(Kind.REQUEST_OPENED, data)
        self.emit(out + await self._ask())

    async def _ask(self):
        """The run's end with an interrupt when the agent asked something, else nothing."""
        if not self.run.pending:
            return []
        ids = [i.id for i in self.run.pending]
        return await self._end(Status.INTERRUPTED, {"interrupts": ids}, self.run.interrupt)

    async def idle(self):
        if self.away and await self._abandoned():
            return
        now = self.loop.time()
        if self.row_end is not None and now - self.row_end[0] >= AWAY_CHECK_SECONDS:
            self.emit(final_events(self.run, *self.row_end[1:]))  # its event was lost
            return
        if now >= self.deadline:
            self.emit(await self._end(Status.TIMED_OUT, {}, lambda: self.run.error(
                "The agent did not end the run in time.", "RUN_TIMEOUT")))
            return
        if now - self.last_beat < a2ui_settings.AGUI_KEEPALIVE_SECONDS - 0.05:
            return  # looked in more often (away, or an end said by the row): same pace
        self.last_beat = now
        if not self.away:
            self.write(KEEPALIVE)
        # The row also says when an end's event was lost (another process ended the run).
        # Its event may only be on its way (queued behind others): it gets a moment first.
        stored, outcome = await runs.aheartbeat(self.session_id, self.ctx.run_input.run_id)
        if stored != Status.RUNNING and self.row_end is None:
            self.row_end = (now, stored, outcome)

    async def _abandoned(self):
        """The response's client went: True once the run ended for want of a client back
        (none read it for ``AGUI_RESUME_SECONDS``). A reader attached on any process
        (``a2ui.agui1.resume``) keeps it going; so does not knowing (Redis away)."""
        sid, run_id = self.session_id, self.ctx.run_input.run_id
        now = self.checked_away = time.monotonic()
        await self._mark_away()
        if await runlog.attended(sid, run_id) is not False:
            self.unattended_since = now
            return False
        if now - self.unattended_since < a2ui_settings.AGUI_RESUME_SECONDS:
            return False
        message = "The client went away and did not come back in time."
        self.emit(await self._end(Status.CANCELLED, {"reason": CLIENT_GONE, "message": message},
                                  lambda: self.run.error(message, CLIENT_GONE.upper())))
        return True

    async def show(self, kind, message):
        data = message.get("data")
        if self.run is None or self.run.ended or not isinstance(data, dict):
            return
        if self.away and time.monotonic() - self.checked_away >= AWAY_CHECK_SECONDS \
                and await self._abandoned():
            return  # a busy agent does not keep a run whose client is gone
        if kind is Kind.RUN_ENDED:
            if data.get("run_id") == self.run.run_id:
                self.emit(final_events(self.run, data.get("status"), data))
            return
        if kind is Kind.SURFACE_BATCH:
            out = surface_events(self.run, self.tracker, data)
            if out is None:
                out = surface_events(self.run, self.tracker, None,
                                await surface_service.aload(self.session_id))
        else:
            out = self.run.translate(kind, data)
        out += await self._ask()
        self._restart_timeout()  # the agent is alive: the timeout starts again
        self.emit(out)

    async def send_state(self):
        """A lost event: the run's state and what it has shown, whole again."""
        if self.run is None or self.run.ended:
            return
        components, seq, surfaces, activity = await astream_state(self.session_id)
        self.tracker.seq = seq
        self.emit(self.run.resync(activity=activity, components=components, surfaces=surfaces))
        await self.ask_open_questions()  # the lost event may have been a question

    async def announce_close(self, code, reason):
        """The session closed (or the token was revoked): the run ends with RUN_ERROR."""
        if self.run is not None and not self.run.ended:
            self.emit(await self._end(Status.ERROR, {"message": "The session was closed."},
                                      lambda: self.run.error("The session was closed.",
                                                             "SESSION_CLOSED")))

    async def leaving(self):
        sid = self.session_id or self.target
        if self.run is None or not self.run.ended:  # the client went away (or the stream failed)
            await agui_runs.aend(self.ctx.session.agent_id, sid, self.ctx.run_input.run_id,
                            Status.CANCELLED)
        await runleases.arelease(sid, self.ctx.run_input.run_id)
