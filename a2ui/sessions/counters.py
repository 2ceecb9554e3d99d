"""Session metrics (seed 000 section 6.3) without a database write per message.

Counters accumulate in a per-process buffer; a flusher thread of the process writes them as
additive ``F()`` updates every ``A2UI['METRICS_FLUSH_SECONDS']``. The thread outlives every
request and every event loop: ``add`` may be called from a consumer on the server's loop, from
a sync DRF view through ``async_to_sync`` (whose loop, and whose thread-sensitive executor,
end with the request) or from a script, and the counts are written all the same. A write that
fails puts its counts back for the next one. Increments from several processes add up
correctly; a killed process loses at most one interval of counts (a normal exit writes what is
left). The first flush that shows agent traffic moves a session from ``initialized`` to
``active``.
"""

import datetime
import json
import logging
import os
import threading
import time
from collections import defaultdict

from channels.db import database_sync_to_async
from django.conf import settings
from django.db import connection, connections
from django.db.models import F

from a2ui.conf import a2ui_settings
from a2ui.core.states import SESSIONS
from a2ui.infra import dbthreads, jobs, memory, outages
from a2ui.models import A2UISessionLog

log = logging.getLogger(__name__)


class _Counts:
    """One session's counts since the last write; ``stamp``: the last activity's
    ``time.time()`` (a float per message; the datetime is made once, when written)."""

    __slots__ = ("messages", "rendered", "inputs", "pushed", "stamp")

    def __init__(self):
        self.messages = self.rendered = self.inputs = self.pushed = 0
        self.stamp = None

    @property
    def last_activity(self):
        if self.stamp is None:
            return None
        # as timezone.now() would have given it: aware (UTC) or, without USE_TZ, naive local
        return datetime.datetime.fromtimestamp(self.stamp, datetime.UTC if settings.USE_TZ
                                               else None)

    @last_activity.setter
    def last_activity(self, value):
        self.stamp = None if value is None else value.timestamp()

    def merge(self, other):
        self.messages += other.messages
        self.rendered += other.rendered
        self.inputs += other.inputs
        self.pushed += other.pushed
        if other.stamp is not None and (self.stamp is None or other.stamp > self.stamp):
            self.stamp = other.stamp


#: Consecutive failed flushes before the flusher logs an error instead of a warning.
FAILURES_BEFORE_ERROR = 5


class MetricsBuffer:
    def __init__(self):
        self._reset()

    def _reset(self):
        self._counts = defaultdict(_Counts)
        self._lock = threading.Lock()  # the counts
        self._writing = threading.Lock()  # one write at a time: a flush sees earlier ones done
        # Sleeps until there is something to write, gathers an interval's worth, writes it; a
        # failed write keeps its counts for the next interval (a2ui.infra.jobs.Flusher).
        self.flusher = jobs.Flusher(
            "metrics flush", lambda: a2ui_settings.METRICS_FLUSH_SECONDS,
            self.flush_sync, after=connections.close_all, register_now=False)

    def add(self, session_id, *, messages=1, rendered=0, inputs=0, pushed=False):
        with self._lock:
            counts = self._counts[str(session_id)]
            counts.messages += messages
            counts.rendered += rendered
            counts.inputs += inputs
            counts.pushed += int(pushed)
            counts.stamp = time.time()
        self.flusher.wake()

    def _take(self, session_id=None):
        with self._lock:
            if session_id is None:
                taken, self._counts = self._counts, defaultdict(_Counts)
                return taken
            counts = self._counts.pop(str(session_id), None)
        return {str(session_id): counts} if counts else {}

    def _put_back(self, taken):
        with self._lock:
            for session_id, counts in taken.items():
                self._counts[session_id].merge(counts)

    async def flush(self, session_id=None):
        """Write now (a consumer closing its session's socket, tests). A session with nothing
        counted since the last write costs no thread hop (an idle socket's close)."""
        if (session_id is not None and str(session_id) not in self._counts
                and not self._writing.locked()):
            return
        try:
            await database_sync_to_async(self.flush_sync)(session_id)
        except Exception as exc:  # a flush must never take a consumer down; the flusher retries
            if not outages.report(exc, "metrics flush", session_id):
                outages.tally()
                log.exception("a2ui: metrics flush failed")
            self.flusher.wake()

    def flush_sync(self, session_id=None):
        """Write the counts; when it returns, everything counted before the call is written."""
        # Bounded wait: the updates are additive, so writing beside a stuck write is still right.
        waited = self._writing.acquire(timeout=5)
        try:
            taken = self._take(session_id)
            if taken:
                try:
                    _write(taken)
                except BaseException:
                    self._put_back(taken)
                    raise
        finally:
            if waited:
                self._writing.release()

def _write(taken):
    """One statement for every buffered session on PostgreSQL; a loop elsewhere."""
    if connection.vendor == "postgresql":
        _write_postgresql(taken)
    else:
        for session_id, c in taken.items():
            fields = {
                "message_count": F("message_count") + c.messages,
                "components_rendered": F("components_rendered") + c.rendered,
                "inputs_requested": F("inputs_requested") + c.inputs,
            }
            if c.last_activity is not None:
                fields["last_activity"] = c.last_activity
            A2UISessionLog.objects.filter(pk=session_id).update(**fields)
    pushed = [sid for sid, c in taken.items() if c.pushed and sid not in _activated]
    if pushed:
        A2UISessionLog.objects.filter(
            pk__in=pushed, state__in=SESSIONS.sources("first_push")
        ).update(state=SESSIONS.target("first_push"))
        _activated.update(dict.fromkeys(pushed))
        if len(_activated) > MAX_ACTIVATED:  # keep the newest half: at worst one UPDATE more
            newest = list(_activated)[-(MAX_ACTIVATED // 2):]
            _activated.clear()
            _activated.update(dict.fromkeys(newest))


# Sessions this process has already moved to active: the transition happens once, so later
# flushes skip it instead of re-sending every busy session id. Insertion-ordered and bounded;
# a session forgotten here costs one more (no-op) UPDATE the next time it is pushed to.
MAX_ACTIVATED = 4096
_activated = {}


def forget_activated():
    """Drop the sessions remembered as active (``a2ui.infra.memory``, once sockets closed)."""
    _activated.clear()


memory.on_collect(forget_activated)


def _write_postgresql(taken):
    """One UPDATE ... FROM jsonb_to_recordset for every buffered session.

    The rows travel as one JSON parameter (encoded in C) rather than five adapted parameters
    per session, so a flush of a thousand busy sessions holds the GIL for about a millisecond
    instead of stalling the event loop for tens.
    """
    table = connection.ops.quote_name(A2UISessionLog._meta.db_table)
    rows = json.dumps([
        {"id": str(session_id), "m": c.messages, "r": c.rendered, "i": c.inputs,
         "t": c.last_activity.isoformat() if c.last_activity else None}
        for session_id, c in taken.items()
    ])
    with dbthreads.relaxed_commit(), connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {table} AS s SET "
            "message_count = s.message_count + v.m, "
            "components_rendered = s.components_rendered + v.r, "
            "inputs_requested = s.inputs_requested + v.i, "
            "last_activity = GREATEST(s.last_activity, COALESCE(v.t, s.last_activity)) "
            "FROM jsonb_to_recordset(%s::jsonb) "
            "AS v(id uuid, m integer, r integer, i integer, t timestamptz) "
            "WHERE s.session_id = v.id",
            [rows],
        )


buffer = MetricsBuffer()
jobs.register(buffer.flusher)  # and written at exit
os.register_at_fork(after_in_child=buffer._reset)  # the thread does not survive a fork
