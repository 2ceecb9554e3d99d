"""A periodic task in every serving process: time out idle sessions and orphaned requests,
remove components whose ``ttl_seconds`` ran out and idempotency keys past their time, end the
AG-UI 1.0 runs whose stream was lost with its process (``runs.aend_lost``: their lease lapsed).

Each process runs it (started by the first socket); closing and expiring are conditional
updates, so two processes doing the same sweep is harmless.
"""

from a2ui.infra import dbthreads
from a2ui.infra import jobs as periodic
from a2ui.push import keys as outcomes
from a2ui.requests import pending
from a2ui.runs import records as runs
from a2ui.sessions import lifecycle as sessions
from a2ui.surfaces import components

INTERVAL_SECONDS = 15


async def sweep():
    closed = await sessions.areap()
    expired = await pending.areap()
    await components.aexpire_due()  # component.removed for each ttl run out
    await runs.aend_lost()  # agui.run_ended (stream_lost) for each run whose process died
    await dbthreads.run(outcomes.expire_due)
    return closed, expired


_every = periodic.Every("housekeeping sweep", lambda: INTERVAL_SECONDS, sweep)
ensure_started = _every.ensure_started
