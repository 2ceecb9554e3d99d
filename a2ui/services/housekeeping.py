"""A periodic task in every serving process: time out idle sessions and orphaned requests,
remove components whose ``ttl_seconds`` ran out and idempotency keys past their time, end the
AG-UI 1.0 runs whose stream was lost with its process (``runs.aend_lost``: their lease lapsed).

Each process runs it (started by the first socket); closing and expiring are conditional
updates, so two processes doing the same sweep is harmless.
"""

import asyncio
import logging
import weakref

from a2ui.services import components, dbthreads, outages, outcomes, pending, runs, sessions

log = logging.getLogger(__name__)
INTERVAL_SECONDS = 15
_tasks = weakref.WeakKeyDictionary()


async def sweep():
    closed = await sessions.areap()
    expired = await pending.areap()
    await components.aexpire_due()  # component.removed for each ttl run out
    await runs.aend_lost()  # agui.run_ended (stream_lost) for each run whose process died
    await dbthreads.run(outcomes.expire_due)
    return closed, expired


async def _loop():
    while True:
        await asyncio.sleep(INTERVAL_SECONDS)
        try:
            await sweep()
        except Exception as exc:
            if not outages.report(exc, "housekeeping sweep"):
                log.exception("a2ui: housekeeping sweep failed")


def ensure_started():
    loop = asyncio.get_running_loop()
    task = _tasks.get(loop)
    if task is None or task.done():
        _tasks[loop] = loop.create_task(_loop())
