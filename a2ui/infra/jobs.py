"""The background work of a serving process, in one list.

Two kinds of job, each registered here by the module that owns it (:func:`registered` lists
them all; ``python manage.py a2ui_jobs`` prints the list):

* :class:`Every`, an asyncio task per event loop: ``await work()`` every ``interval()``
  seconds (the agent presence sweep, the housekeeping sweep, the leases' refresh, the sequence
  watch, the remote agents' sweep). The first caller on an event loop starts it (again if it
  ended).
* :class:`Flusher`, a daemon thread per process that writes what a buffer gathered off the
  per-message path: woken by :meth:`Flusher.wake`, it waits ``interval()`` seconds more, then
  calls ``flush()`` (the session counters, the replay events, the metrics' tallies). A failure
  keeps what was not written for the next round.

A round that fails is one line through ``outages`` when Redis or the database caused it
(counted in the outage metrics), else a logged traceback; the next round goes on either way.
At shutdown :func:`stop` cancels the tasks and has each flusher write what it holds
(``a2ui.serving``, and ``atexit`` for the flushers).
"""

import asyncio
import atexit
import logging
import threading
import time
import weakref

from a2ui.infra import outages

log = logging.getLogger("a2ui.jobs")

#: name -> job: every job of the process, by the name it is known by.
_registry = {}


def registered():
    """``[(name, kind, interval in seconds, running)]`` of every job of the process."""
    return [(job.name, job.kind, job.interval(), job.running()) for job in _registry.values()]


def register(job):
    """Add ``job`` to the process's list under its name (a flusher made with
    ``register_now=False``: the one a module keeps, not every instance a test makes). A job
    made again under a name replaces the one before (a module reloaded, a test's job)."""
    _registry[job.name] = job
    return job


async def stop():
    """Cancel every task job of this event loop and flush every flusher (the process stops)."""
    for job in list(_registry.values()):
        await job.stop()


class Every:
    """``await work()`` every ``interval()`` seconds (a callable: the module constant it reads
    stays what tests and settings change), on each event loop that asks for it."""

    kind = "task"

    def __init__(self, name, interval, work, *, at_start=False):
        self.name = name
        self.interval = interval
        self.work = work
        self.at_start = at_start  # a first round as soon as it starts, then every interval
        self._tasks = weakref.WeakKeyDictionary()  # event loop -> its task
        register(self)

    def ensure_started(self):
        loop = asyncio.get_running_loop()
        task = self._tasks.get(loop)
        if task is None or task.done():
            self._tasks[loop] = loop.create_task(self._run(), name=f"a2ui-{self.name}")

    def running(self):
        return any(not task.done() for task in list(self._tasks.values()))

    async def stop(self):
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        task = self._tasks.pop(loop, None)
        if task is not None and not task.done():
            task.cancel()

    async def _run(self):
        first = self.at_start
        while True:
            if not first:
                await asyncio.sleep(self.interval())
            first = False
            try:
                await self.work()
            except Exception as exc:
                if not outages.report(exc, self.name):
                    log.exception("a2ui: %s failed", self.name)


class Loop:
    """A task of its own per event loop that a module runs itself (a loop with state between
    rounds: the sequence watch), listed here with how to tell it runs and how to stop it."""

    kind = "task"

    def __init__(self, name, interval, tasks):
        self.name = name
        self.interval = interval
        self.tasks = tasks  # the module's {event loop: task}
        register(self)

    def running(self):
        return any(not task.done() for task in list(self.tasks.values()))

    async def stop(self):
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        task = self.tasks.pop(loop, None)
        if task is not None and not task.done():
            task.cancel()


#: Consecutive failed rounds before a flusher logs an error instead of a warning.
FAILURES_BEFORE_ERROR = 5


class Flusher:
    """A daemon thread calling ``flush()`` ``interval()`` seconds after it is woken (or every
    ``interval()`` seconds with ``always``). ``after()`` runs after every round, failed or not
    (a thread's database connection going back to the pool). A failed round wakes it again
    (after ``retry_seconds`` at least): what ``flush`` did not write is its to keep."""

    kind = "thread"

    def __init__(self, name, interval, flush, *, after=None, always=False, retry_seconds=0.0,
                 register_now=True):
        self.name = name
        self.interval = interval
        self.flush = flush
        self.after = after
        self.always = always
        self.retry_seconds = retry_seconds
        self._wake = threading.Event()
        self._lock = threading.Lock()
        self._round = threading.Lock()  # held while a round writes
        self._thread = None
        if register_now:
            register(self)

    def wake(self):
        """There is something to write: the thread (started on first use) writes it after
        ``interval()`` seconds."""
        if self._thread is None:
            self._start()
        if not self._wake.is_set():
            self._wake.set()

    def running(self):
        return self._thread is not None and self._thread.is_alive()

    def paused(self):
        """A context in which no round of this flusher writes (one writing is waited for):
        what must not run beside its writes, as a test database's TRUNCATE."""
        return self._round

    async def stop(self):
        try:
            self.flush()
        except Exception as exc:
            outages.tally()
            log.warning("a2ui: %s at shutdown: %s", self.name, exc)

    def _start(self):
        with self._lock:
            if self._thread is not None:
                return
            self._thread = threading.Thread(target=self._run, name=f"a2ui-{self.name}",
                                            daemon=True)
            self._thread.start()

    def _run(self):
        failures = 0
        while True:
            if not self.always:
                self._wake.wait()
            time.sleep(self.interval())
            self._wake.clear()
            try:
                with self._round:
                    self.flush()
                failures = 0
            except Exception as exc:  # what was not written stays: retried next round
                failures += 1
                if outages.report(exc, self.name):
                    pass
                elif failures >= FAILURES_BEFORE_ERROR:
                    log.exception("a2ui: %s failed %d times in a row; retrying", self.name,
                                  failures)
                else:
                    log.warning("a2ui: %s failed (%s); retrying", self.name, exc)
                if self.retry_seconds:
                    time.sleep(self.retry_seconds)
                self._wake.set()
            finally:
                if self.after is not None:
                    try:
                        self.after()
                    except Exception as exc:  # the thread goes on
                        log.warning("a2ui: %s could not clean up: %s", self.name, exc)


def _flush_at_exit():
    for job in list(_registry.values()):
        if isinstance(job, Flusher) and job.running():
            try:
                job.flush()
            except Exception as exc:
                log.warning("a2ui: %s at exit: %s", job.name, exc)


atexit.register(_flush_at_exit)
