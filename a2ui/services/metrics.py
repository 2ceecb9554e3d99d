"""Session metrics (seed 000 section 6.3) without a database write per message.

Counters accumulate in a per-process buffer and are flushed as additive ``F()`` updates every
``A2UI['METRICS_FLUSH_SECONDS']``, one thread hop per flush. Increments from several processes
add up correctly; a killed process loses at most one interval of counts. The first flush that
shows agent traffic moves a session from ``initialized`` to ``active``.
"""

import asyncio
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
    pushed = [session_id for session_id, c in taken.items() if c.pushed]
    if pushed:
        A2UISessionLog.objects.filter(
            pk__in=pushed, state=A2UISessionLog.State.INITIALIZED
        ).update(state=A2UISessionLog.State.ACTIVE)


def _write_postgresql(taken, chunk=500):
    """UPDATE ... FROM (VALUES ...): a thousand busy sessions cost one round trip, not 1000."""
    table = connection.ops.quote_name(A2UISessionLog._meta.db_table)
    items = list(taken.items())
    for start in range(0, len(items), chunk):
        rows = items[start:start + chunk]
        values = ", ".join(["(%s::uuid, %s::int, %s::int, %s::int, %s::timestamptz)"] * len(rows))
        params = []
        for session_id, c in rows:
            params += [str(session_id), c.messages, c.rendered, c.inputs, c.last_activity]
        with connection.cursor() as cursor:
            cursor.execute(
                f"UPDATE {table} AS s SET "
                "message_count = s.message_count + v.m, "
                "components_rendered = s.components_rendered + v.r, "
                "inputs_requested = s.inputs_requested + v.i, "
                "last_activity = GREATEST(s.last_activity, COALESCE(v.t, s.last_activity)) "
                f"FROM (VALUES {values}) AS v(id, m, r, i, t) WHERE s.session_id = v.id",
                params,
            )


buffer = MetricsBuffer()
