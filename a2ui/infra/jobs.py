"""Work every few seconds in each serving process: one task per event loop.

The agent sockets' liveness heartbeat (``agentroute``), agent presence's heartbeat and sweep
(``presence``) and the housekeeping sweep (``housekeeping``) are each an :class:`Every`: the
first caller on an event loop starts its task (again if it ended); a round that fails is one
line through ``outages`` when Redis or the database caused it (counted in the outage metrics),
else a logged traceback; the next round goes on either way.
"""

import asyncio
import logging
import weakref

from a2ui.infra import outages

log = logging.getLogger("a2ui.services")


class Every:
    """``await work()`` every ``interval()`` seconds (a callable: the module constant it reads
    stays what tests and settings change), on each event loop that asks for it."""

    def __init__(self, what, interval, work):
        self.what = what
        self.interval = interval
        self.work = work
        self._tasks = weakref.WeakKeyDictionary()  # event loop -> its task

    def ensure_started(self):
        loop = asyncio.get_running_loop()
        task = self._tasks.get(loop)
        if task is None or task.done():
            self._tasks[loop] = loop.create_task(self._run())

    async def _run(self):
        while True:
            await asyncio.sleep(self.interval())
            try:
                await self.work()
            except Exception as exc:
                if not outages.report(exc, self.what):
                    log.exception("a2ui: %s failed", self.what)
