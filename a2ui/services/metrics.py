"""Session metrics (seed 000 section 6.3) without a database write per message.

Counters accumulate in a per-process buffer and are flushed as additive ``F()`` updates every
``A2UI['METRICS_FLUSH_SECONDS']``, one thread hop per flush. Increments from several processes
add up correctly; a killed process loses at most one interval of counts. The first flush that
shows agent traffic moves a session from ``initialized`` to ``active``.
"""

import asyncio
import json
import logging
from collections import defaultdict

from channels.db import database_sync_to_async
from django.db import connection
from django.db.models import F
from django.utils import timezone

from ..conf import a2ui_settings
from ..models import A2UISessionLog

log = logging.getLogger(__name__)


class _Counts:
    __slots__ = ("messages", "rendered", "inputs", "pushed", "last_activity")

    def __init__(self):
        self.messages = self.rendered = self.inputs = self.pushed = 0
        self.last_activity = None


class MetricsBuffer:
    def __init__(self):
        self._counts = defaultdict(_Counts)
        self._task = None

    def add(self, session_id, *, messages=1, rendered=0, inputs=0, pushed=False):
        counts = self._counts[str(session_id)]
        counts.messages += messages
        counts.rendered += rendered
        counts.inputs += inputs
        counts.pushed += int(pushed)
        counts.last_activity = timezone.now()
        self._ensure_task()

    def _ensure_task(self):
        if self._task is not None and not self._task.done():
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.flush_sync()
            return
        self._task = loop.create_task(self._run())

    async def _run(self):
        while self._counts:
            await asyncio.sleep(a2ui_settings.METRICS_FLUSH_SECONDS)
            await self.flush()

    def _take(self, session_id=None):
        if session_id is None:
            taken, self._counts = self._counts, defaultdict(_Counts)
            return taken
        counts = self._counts.pop(str(session_id), None)
        return {str(session_id): counts} if counts else {}

    async def flush(self, session_id=None):
        taken = self._take(session_id)
        if taken:
            try:
                await database_sync_to_async(_write)(taken)
            except Exception:  # a flush must never take a consumer down
                log.exception("a2ui: metrics flush failed")

    def flush_sync(self, session_id=None):
        taken = self._take(session_id)
        if taken:
            _write(taken)


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
            pk__in=pushed, state=A2UISessionLog.State.INITIALIZED
        ).update(state=A2UISessionLog.State.ACTIVE)
        if len(_activated) > 100_000:
            _activated.clear()
        _activated.update(pushed)


# Sessions this process has already moved to active: the transition happens once, so later
# flushes skip it instead of re-sending every busy session id.
_activated = set()


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
    with connection.cursor() as cursor:
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
