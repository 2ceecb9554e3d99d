"""Give the memory of closed sockets back.

A closed WebSocket leaves its objects (Daphne's protocol and request, the consumer, its queues,
tasks and futures: about 75 objects and 40 KB a socket) in reference cycles, which only the
cyclic garbage collector frees, and only in a full collection once they have lived long enough
to reach the oldest generation. The serving process raises the collector's thresholds
(``a2ui_project/asgi.py``) because a full collection stalls every socket; a full collection
then comes about every 10^8 allocations, and a process whose sockets closed stays idle with
their memory held: the soak's RSS grew 20-30 MB per round of 600 sockets and never came back
(docs/performance.md).

So the WebSocket application counts its sockets (``a2ui.asgi.websocket_application``) and,
once as many sockets have closed since the last full collection as are still open (and at
least ``MIN_CLOSED``), runs one full collection ``DELAY_SECONDS`` after the last close (a mass
disconnect is one collection), then hands freed heap pages back to the OS (glibc's
``malloc_trim``, where there is one). A full collection costs in proportion to the live
objects, so its pause is paid at most once per turnover of the live sockets, and never while
sockets only open and stay.
"""

import asyncio
import ctypes
import gc
import inspect
import re
import sys
import urllib.parse
import weakref

MIN_CLOSED = 50
DELAY_SECONDS = 5.0


class _Counts:
    open = 0
    closed = 0  # since the last collection
    handle = None  # the scheduled collection
    collections = 0
    finishing = 0  # sockets whose clean-up goes on after their application ended


counts = _Counts()


def socket_opened():
    counts.open += 1


def socket_closed():
    counts.open -= 1
    counts.closed += 1
    if counts.closed < max(MIN_CLOSED, counts.open):
        return
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return
    if counts.handle is not None:
        counts.handle.cancel()  # more closing: wait for the last of them
    counts.handle = loop.call_later(DELAY_SECONDS, collect)


def finishing(task):
    """``task`` cleans up after a socket whose application was cancelled (``consumers.base``):
    the collection waits for it, since what it holds is garbage only once it is done."""
    counts.finishing += 1

    def done(_):
        counts.finishing -= 1

    task.add_done_callback(done)


def collect():
    """Caches emptied, one full collection and a heap trim; resets the count of closed sockets.
    While clean-ups of closed sockets still run, it waits ``DELAY_SECONDS`` more."""
    if counts.finishing > 0:
        counts.handle = asyncio.get_running_loop().call_later(DELAY_SECONDS, collect)
        return
    counts.handle = None
    counts.closed = 0
    counts.collections += 1
    forget_caches()
    shrink_registries()
    run_private_steps()
    gc.collect()
    _trim()


def forget_caches():
    """Empty the caches that hold what the closed sockets left behind.

    Each is small and bounded, but its entries were made while the sockets were busy, so they
    are scattered over the memory those sockets used, and each survivor keeps the page (with
    C ``malloc``, ``a2ui_serve``'s default) or the 1 MB arena (CPython's allocator, freed only
    when empty) it sits in. Emptied, the trim gives those pages back; CPython's arenas stay
    pinned by the libraries' own survivors (docs/performance.md, "Soak"). Each refills on use.
    """
    from a2ui.core import adapters

    adapters.clear_caches()  # what the protocols declare (Adapter.caches): encoded pushes ...
    for forget in FORGETS:  # the owners' own (direct delivery's publishes, sessions activated)
        forget()
    urllib.parse.clear_cache()  # urlsplit's LRU: every socket's handshake URL
    re.purge()


#: Functions emptying a cache of what busy sockets left behind, called at each collection
#: (:func:`forget_caches`). Added to by the modules that own the caches (:func:`on_collect`).
FORGETS = []


def on_collect(forget):
    """Have ``forget()`` (emptying a cache of its module's) called at each collection."""
    if forget not in FORGETS:
        FORGETS.append(forget)


#: Functions returning dicts and sets that grow with the open sockets (a registry of them):
#: shrunk at each collection (:func:`shrink`). Added to by the modules that own them.
REGISTRIES = []


def register(containers):
    """Have ``containers()`` (a function returning dicts and sets) shrunk at each collection.
    A bound method is held weakly: registering does not keep its object alive."""
    if inspect.ismethod(containers):
        containers = weakref.WeakMethod(containers)
    else:
        function = containers
        containers = lambda: function  # noqa: E731 - the same shape as a WeakMethod
    REGISTRIES[:] = [r for r in REGISTRIES if r() is not None] + [containers]


def shrink(container):
    """Give back the table a dict or set grew to at its peak, in place (the object and what
    refers to it stay): CPython never shrinks a table as entries leave, so a registry of
    10,000 sockets keeps its 10,000-entry table (hundreds of KB, on pages the trim cannot
    free) with none left in it. Call it from the loop that uses the container, not while
    something iterates over it."""
    if not container:
        container.clear()  # an empty dict or set frees its table
        return
    entries = container.copy()
    container.clear()
    container.update(entries)


def shrink_registries():
    for ref in list(REGISTRIES):
        containers = ref()
        if containers is None:
            continue
        try:
            for container in containers():
                if isinstance(container, dict | set):
                    shrink(container)
        except Exception:  # a registry gone or changed shape: nothing to give back there
            pass


# The libraries' internals -------------------------------------------------------------------
#
# The steps below are the only places where the collection reaches into a library's private
# parts: tables that grow with the sockets and keep their peak size once empty (shrunk in
# place), and caches. What each pays is in docs/performance.md ("Memory after close: what the
# collection does"), measured with the step dropped (bench/capacity_settings.py,
# ``A2UI_BENCH_MEMORY_SKIP``); tests/infra/test_soak_memory.py has a test per library that fails
# when the internal a step relies on changes. At run time a step whose internal is gone or
# changed is skipped: there is nothing to give back there.

#: name -> step (a function of no arguments), each run at every collection. Only the steps that
#: give back more than 2% of RSS after 10,000 idle clients close (docs/performance.md).
PRIVATE_STEPS = {}


def _step(name):
    def add(function):
        PRIVATE_STEPS[name] = function
        return function
    return add


def _shrink_all(tables):
    for table in tables:
        if isinstance(table, dict | set):
            shrink(table)


def run_private_steps():
    for step in list(PRIVATE_STEPS.values()):
        try:
            step()
        except Exception:  # an internal gone or changed shape: nothing to give back there
            pass


@_step("asyncio")
def _asyncio():
    """asyncio's set of every task (a task or more per socket; a ``WeakSet`` up to Python 3.11)
    and the running loop's selector's map of descriptors."""
    _shrink_all([asyncio.tasks._all_tasks.data,
                 asyncio.get_running_loop()._selector._fd_to_key])


@_step("typecache")
def _typecache():
    """CPython's cache of attribute lookups per type (names looked up per message)."""
    sys._clear_type_cache()


def _malloc_trim():
    try:
        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None


_trimmer = []


def _trim():
    if not _trimmer:
        _trimmer.append(_malloc_trim())
    if _trimmer[0] is not None:
        _trimmer[0](0)


def reset():
    """Forget the counts and any scheduled collection (tests)."""
    if counts.handle is not None:
        counts.handle.cancel()
    counts.open = counts.closed = counts.collections = counts.finishing = 0
    counts.handle = None
