"""Per-message database work on a few threads, not queued behind the one thread-sensitive thread.

Why: ``database_sync_to_async`` runs every call of a process on ONE thread. With a realistic
push mix (renders, updates, input requests and their answers: three or four PostgreSQL round
trips each) that thread was over 80% busy waiting for PostgreSQL at 300 sessions x 1 msg/s,
and every render, the metrics flush and the housekeeping sweep queued behind each other: the
soak's p99 of seconds (docs/performance.md). ``run`` hands such a call to a small pool of
threads, each with its own pooled connection, so the waits overlap.

What stays on the thread-sensitive thread:

* anything that is not PostgreSQL (SQLite allows one writer; the embedded default);
* calls made inside ``async_to_sync`` (a sync view, a command, a sync test): the calling thread
  may hold an open transaction whose rows a connection of another thread would not see.

With ``A2UI['PER_MESSAGE_SYNCHRONOUS_COMMIT']`` False (not the default) each call on the pool
commits without waiting for the WAL flush (``synchronous_commit`` off for the call, reset
after it): a commit that waits for the disk took 7 ms at the median and seconds under load on
the soak's machine, and an agent socket's next push waits for its render's commit
(docs/performance.md); but a PostgreSQL crash may then lose the last fraction of a second of
such writes (renders, input requests and answers, metrics) that agents were told were
delivered, so durability is the default.

The per-message callers run each socket's messages one at a time, so one agent's render and
its following update keep their order; pushes from different sockets were concurrent already.
"""

import asyncio
import concurrent.futures
import contextlib
import contextvars
import functools
import threading
import weakref

from asgiref.sync import AsyncToSync
from channels.db import database_sync_to_async
from django.db import DatabaseError, connections

from a2ui.conf import a2ui_settings
from a2ui.infra import dbconn

#: Threads for per-message work; each keeps a connection of the pool once it made a call, so
#: keep it below the pool's ``max_size`` (DB_POOL_MAX, 10 by default).
THREADS = 4

_executor = []


def _pool():
    if not _executor:
        _executor.append(concurrent.futures.ThreadPoolExecutor(max_workers=THREADS,
                                            thread_name_prefix="a2ui-db"))
    return _executor[0]


def concurrent_ok():
    """True when a call may run on the pool (see the module docstring)."""
    return (_on_postgresql()
            and getattr(AsyncToSync.executors, "current", None) is None)


def _on_postgresql():
    """The default database's vendor is PostgreSQL (:func:`vendor`)."""
    return vendor() == "postgresql"


def vendor():
    """The default database's vendor, looked up once per database setting: ``connections[...]``
    goes through asgiref's context-local storage, a cost on every push, and on the event loop
    (an async context) makes a connection object of its own per task context that asks: about
    2.5 KB for as long as that task's context lives (an AG-UI 1.0 run's request)."""
    engine = connections.settings["default"]["ENGINE"]
    found = _vendor.get(engine)
    if found is None:
        found = _vendor[engine] = connections["default"].vendor
    return found


_vendor = {}


@contextlib.contextmanager
def relaxed_commit(alias="default"):
    """Commits inside do not wait for PostgreSQL's WAL flush (unless the setting says so).

    Session-level, reset on the way out: the connection goes back to a pool other code shares.
    """
    connection = connections[alias]
    if connection.vendor != "postgresql" or a2ui_settings.PER_MESSAGE_SYNCHRONOUS_COMMIT:
        yield
        return
    with connection.cursor() as cursor:
        cursor.execute("SET synchronous_commit TO off")
    try:
        yield
    finally:
        try:
            with connection.cursor() as cursor:
                cursor.execute("RESET synchronous_commit")
        except DatabaseError:  # a broken connection is not given back to the pool
            pass


def _relaxed(func, *args, **kwargs):
    with relaxed_commit():
        return func(*args, **kwargs)


def _on_pool_thread(func, args, kwargs):
    """One call on a pool thread, which keeps its database connection between calls.

    ``database_sync_to_async`` would take a connection from the pool and give it back around
    every call (``close_old_connections`` with ``CONN_MAX_AGE`` 0) and run asgiref's
    thread-handling machinery: about 250 us of CPU per call on the soak's machine, as much as
    the query itself (docs/performance.md). Each pool thread holds one connection instead and
    gives it back only when it is broken, and rolls back a transaction a call left open.
    A connection the server closed since the last call (``pg_terminate_backend``, a restart)
    is replaced before the call (``dbconn.replace_if_gone``: no round trip when it is alive).
    """
    connection = connections["default"]
    dbconn.replace_if_gone(connection)
    try:
        if a2ui_settings.PER_MESSAGE_SYNCHRONOUS_COMMIT:  # the default: nothing to relax
            return func(*args, **kwargs)
        return _relaxed(func, *args, **kwargs)
    finally:
        if connection.connection is not None:
            if connection.in_atomic_block or not connection.get_autocommit():
                _reset(connection)  # left mid-transaction: never carry it into the next call
            elif connection.errors_occurred:
                if connection.is_usable():
                    connection.errors_occurred = False
                else:
                    connection.close()


def _reset(connection):
    """Roll back what a call left open and return to autocommit; close what cannot."""
    try:
        if connection.in_atomic_block:
            raise DatabaseError("left inside atomic()")
        connection.rollback()
        connection.set_autocommit(True)
    except DatabaseError:
        connection.in_atomic_block = False
        connection.needs_rollback = False
        connection.close()


async def run(func, *args, **kwargs):
    """``await database_sync_to_async(func)(*args, **kwargs)``, on the pool when allowed."""
    if concurrent_ok():
        loop = asyncio.get_running_loop()
        context = contextvars.copy_context()
        return await loop.run_in_executor(
            _pool(), context.run, _on_pool_thread, func, args, kwargs)
    return await database_sync_to_async(func)(*args, **kwargs)


def wrap(func):
    """``run`` as a decorator: an async twin of ``func``."""

    @functools.wraps(func)
    async def call(*args, **kwargs):
        return await run(func, *args, **kwargs)

    return call


class _Waiting:
    """One event loop's items waiting for their batch (:func:`batched`)."""

    def __init__(self):
        self.items = []  # (item, future)
        self.task = None


def batched(run_many, most=500):
    """An async function of one item that runs ``run_many(items)`` (on the pool, as :func:`run`)
    for the items of many callers at once, and returns this item's result (``run_many`` returns
    one per item, in order).

    A batch starts on the loop's next turn after its first item: what the callers of that turn
    add goes in it, and what they add while it runs goes in the next (of at most ``most``). So a
    lone call waits no longer than a turn, and a burst (10,000 sockets closing at once) shares
    a statement, a round trip and a thread hop per batch instead of per item. A batch that
    fails fails each of its callers with the exception. A caller cancelled while it waits does
    not take its item out: the batch runs it all the same."""
    loops = weakref.WeakKeyDictionary()  # event loop -> _Waiting

    async def flush(waiting):
        try:
            while waiting.items:
                batch, waiting.items = waiting.items[:most], waiting.items[most:]
                try:
                    results = await run(run_many, [item for item, _ in batch])
                except Exception as exc:
                    for _, future in batch:
                        if not future.done():
                            future.set_exception(exc)
                    continue
                for (_, future), result in zip(batch, results, strict=True):
                    if not future.done():
                        future.set_result(result)
        finally:
            waiting.task = None

    @functools.wraps(run_many)
    async def one(item):
        loop = asyncio.get_running_loop()
        waiting = loops.get(loop)
        if waiting is None:
            waiting = loops[loop] = _Waiting()
        future = loop.create_future()
        future.add_done_callback(_retrieved)
        waiting.items.append((item, future))
        if waiting.task is None:
            waiting.task = loop.create_task(flush(waiting))
        return await future

    return one


def _retrieved(future):
    if not future.cancelled():
        future.exception()  # a caller that went is not reported as an unretrieved failure


def _on_every_thread(pool, func, timeout):
    """Run ``func`` once on each of the pool's THREADS threads, after every call handed to the
    pool before it (the queue is first in, first out, and each thread is held at a barrier
    until all THREADS have come to it, so none runs a second one or anything queued later).
    True when all THREADS ran it within ``timeout``."""
    barrier = threading.Barrier(THREADS, timeout=timeout)

    def each():
        func()
        try:
            barrier.wait()
        except threading.BrokenBarrierError:
            return False
        return True

    futures = [pool.submit(each) for _ in range(THREADS)]
    done, late = concurrent.futures.wait(futures, timeout + 1)
    return not late and all(future.result() for future in done)


def drain(timeout=10.0):
    """Wait until every call handed to the pool so far has ended; True when it did within
    ``timeout``. The test suite calls it before it empties a test's database: a call a finished
    test's socket made (an audit record of its last message) would otherwise still be writing,
    and PostgreSQL's TRUNCATE and that transaction can deadlock."""
    if not _executor:
        return True
    return _on_every_thread(_executor[0], lambda: None, timeout)


def shutdown(timeout=5.0):
    """Close every pool thread's database connection and stop the threads (the test suite
    calls it before it drops the test database; a server process just exits)."""
    if not _executor:
        return
    pool = _executor.pop()
    _on_every_thread(pool, connections.close_all, timeout)
    pool.shutdown(wait=True)


def queue_depth():
    """Calls waiting for a pool thread (0 before the pool exists); read at a metrics scrape."""
    return _executor[0]._work_queue.qsize() if _executor else 0
