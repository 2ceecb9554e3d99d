"""The housekeeping sweep, every ``INTERVAL_SECONDS`` in every serving process: time out idle
sessions and orphaned requests, close detached sessions past their resume window, remove
components whose ``ttl_seconds`` ran out and idempotency keys past their time; each change
said to the session's clients and agents. A protocol adds its own part with its adapter's
``sweep`` (AG-UI 1.0: runs whose stream was lost with its process).

Each process runs it (started by the first socket); closing and expiring are conditional
updates, so two processes doing the same sweep is harmless.
"""

from a2ui.core import adapters
from a2ui.core.events import Kind
from a2ui.infra import dbthreads, jobs
from a2ui.push import answers, fanout, keys
from a2ui.push import sessions as session_actions
from a2ui.surfaces import components

INTERVAL_SECONDS = 15

async def sweep():
    closed = await session_actions.areap()
    expired = await answers.areap()
    await aexpire_components()  # component.removed for each ttl run out
    for adapter in adapters.registered():
        if adapter.sweep is not None:
            await adapter.sweep()
    await dbthreads.run(keys.expire_due)
    return closed, expired


async def aexpire_components():
    """``components.expire_due``, then one ``component.removed`` event for each component it
    deleted."""
    gone = await dbthreads.run(components.expire_due)
    for session_id, component_id in gone:
        await fanout.emit(session_id, Kind.COMPONENT_REMOVED, {"component_id": component_id})
    return gone


_every = jobs.Every("housekeeping sweep", lambda: INTERVAL_SECONDS, sweep)
ensure_started = _every.ensure_started
