"""What replay needs, kept: a session's visible events (``a2ui.core.replay.KINDS``).

``arecord`` keeps one event as its clients get it (``stream.send`` calls it for the kinds
replay folds, after the event has its sequence number): into this process's buffer, written in
batches by a flusher thread every ``REPLAY_FLUSH_SECONDS``, so the push path makes no database
call for it; a failure to write is logged and retried, never the push's failure. The rows belong to the session and are deleted with it, so the
retention that purges sessions purges them (docs/compliance.md, "Replay").

``events(session)`` gives them back oldest first, with the session's consent choices merged in
by time (``consent.recorded``), for ``a2ui.core.replay``.
"""

import json
import logging
import threading

from django.db import DataError, IntegrityError, connection, connections, transaction
from django.utils import timezone

from a2ui.conf import a2ui_settings
from a2ui.core import replay
from a2ui.infra import dbthreads, jobs, outages
from a2ui.models import A2UIConsentRecord, SessionEvent

log = logging.getLogger("a2ui.services")


def _insert_sql():
    q = connection.ops.quote_name
    names = ", ".join(q(SessionEvent._meta.get_field(f).column)
                      for f in ("session", "seq", "kind", "data", "at"))
    return f"INSERT INTO {q(SessionEvent._meta.db_table)} ({names}) VALUES (%s, %s, %s, %s, %s)"


def _row(session_id, seq, kind, data, at):
    sid = session_id.hex if connection.vendor == "sqlite" else session_id
    return [sid, seq or 0, str(kind), json.dumps(data), at]


#: Rows waiting for the flusher beyond which the oldest are dropped (with a warning): a
#: database away for long does not grow the process without bound.
MAX_PENDING = 50_000


class ReplayBuffer:
    """The events to keep, written off the per-message path: ``add`` appends to this
    process's list (no database call, no thread hop); a flusher thread writes what gathered
    every ``REPLAY_FLUSH_SECONDS`` in one ``executemany`` (a session deleted meanwhile loses
    its rows, nothing else). A killed process loses at most one interval of moments: replay
    shows the moments kept, in order. ``flush_sync`` writes now (readers, tests, exit)."""

    def __init__(self):
        self._rows = []
        self._lock = threading.Lock()
        self._writing = threading.Lock()
        self.flusher = jobs.Flusher(
            "replay flush", lambda: a2ui_settings.REPLAY_FLUSH_SECONDS, self.flush_sync,
            after=connections.close_all, retry_seconds=1.0, register_now=False)

    def add(self, session_id, seq, kind, data):
        with self._lock:
            self._rows.append((session_id, seq, kind, data, timezone.now()))
            if len(self._rows) > MAX_PENDING:
                dropped = len(self._rows) - MAX_PENDING
                del self._rows[:dropped]
                log.warning("a2ui: %d replay events dropped (the database is away)", dropped)
        self.flusher.wake()

    def flush_sync(self):
        """Write what was added before the call (bounded wait for a write in progress)."""
        waited = self._writing.acquire(timeout=5)
        try:
            with self._lock:
                taken, self._rows = self._rows, []
            if not taken:
                return
            try:
                _write(taken)
            except BaseException:
                with self._lock:
                    self._rows[:0] = taken
                raise
        finally:
            if waited:
                self._writing.release()

    def clear(self):
        """Forget what was not written yet (tests: a test's events stay with its database)."""
        with self._lock:
            self._rows = []


def _write(taken):
    rows = [_row(*r) for r in taken]
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.executemany(_insert_sql(), rows)
    except (IntegrityError, DataError):  # one row the database refuses (e.g. a NUL in JSON):
        for row in rows:                    # the others are written, it is dropped, logged
            try:
                with transaction.atomic(), connection.cursor() as cursor:
                    cursor.execute(_insert_sql(), row)
            except (IntegrityError, DataError) as exc:
                log.warning("a2ui: a replay event of session %s not kept (%s)", row[0],
                            type(exc).__name__)


buffer = ReplayBuffer()
jobs.register(buffer.flusher)  # and written at exit


def record(session_id, seq, kind, data):
    """Keep one event now (synchronously; tests and scripts)."""
    _write([(session_id, seq, kind, data, timezone.now())])


async def arecord(session_id, seq, kind, data):
    """Keep one event for replay (unless ``A2UI['REPLAY_KEEP_EVENTS']`` is False): into the
    buffer, written within ``REPLAY_FLUSH_SECONDS``; True when kept."""
    if kind not in replay.KINDS or not a2ui_settings.REPLAY_KEEP_EVENTS:
        return False
    if dbthreads.vendor() == "sqlite":
        # SQLite (one process, development) has one writer at a time: a second writing thread
        # beside the per-message one meets "table is locked". Written there, in turn.
        try:
            await dbthreads.run(record, session_id, seq, kind, data)
        except Exception as exc:  # replay loses a moment; the push goes on
            outages.tally()
            log.warning("a2ui: event %s of session %s not kept for replay (%s: %s)", kind,
                        session_id, type(exc).__name__, exc)
            return False
        return True
    buffer.add(session_id, seq, kind, data)
    return True


def events(session):
    """``[(at, kind, data)]`` of ``session`` oldest first: its kept events and consent choices
    (this process's buffer written first)."""
    buffer.flush_sync()
    rows = [(e.at, 0, e.id, e.kind, e.data)
            for e in SessionEvent.objects.filter(session=session).order_by("at", "id")]
    for rec in A2UIConsentRecord.objects.filter(session=session).order_by("granted_at", "pk"):
        rows.append((rec.granted_at, 1, rec.pk, replay.CONSENT_RECORDED,
                     {"consent_type": rec.consent_type, "granted": rec.granted}))
    rows.sort(key=lambda r: (r[0], r[1], r[2]))
    return [(at, kind, data) for at, _, _, kind, data in rows]


def screen(session, at, registry=None, limits=None):
    """``(moments, at, screen)``: the session's replay moments, ``at`` clamped to them, and
    the screen at moment ``at`` (``a2ui.core.replay.Screen``)."""
    from a2ui import surfaces as surface_service
    from a2ui.surfaces import activity as activity_service

    kept = [(kind, data) for _, kind, data in events(session)]
    moments = replay.moments(kept)
    at = len(kept) if at is None else max(0, min(int(at), len(kept)))
    shown = replay.replay(kept, at, registry or surface_service.catalog_registry(),
                          limits or activity_service.limits())
    return moments, at, shown


def moment_links(session, entries):
    """Set ``entry.extra["replay_at"]`` on the timeline's answer and consent entries: the
    moment whose screen stood when the answer or choice was given (before it took effect)."""
    kept = events(session)
    closed = {data.get("request_id"): i for i, (_, kind, data) in enumerate(kept)
              if kind == "request.closed"}
    chosen = [(at, data.get("consent_type"), i) for i, (at, kind, data) in enumerate(kept)
              if kind == replay.CONSENT_RECORDED]
    for entry in entries:
        if entry.kind == "answer" and entry.extra.get("request_id") in closed:
            entry.extra["replay_at"] = closed[entry.extra["request_id"]]
        elif entry.kind == "consent":
            found = [i for at, ctype, i in chosen
                     if at == entry.at and ctype == entry.extra.get("consent_type")]
            entry.extra["replay_at"] = found[0] if found else sum(
                1 for at, _, _ in kept if at <= entry.at)
    return entries
