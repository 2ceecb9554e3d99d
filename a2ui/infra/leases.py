"""Leases: whether a thing is alive, answered once per thing, across processes.

A lease is one live thing's place (a *member*: its id, with an optional tag) in one or more
*scopes* (named sets, each with an optional limit): a session socket in its person's and its
address's caps (``a2ui.infra.caps``), a client in its session's registry
(``a2ui.sessions.clients``), an AG-UI 1.0 run's stream (``a2ui.agui1.runleases``), a remote
agent's run (``a2ui.remote``). :func:`acquire` admits it only when every scope is under its
limit; the process holding it refreshes it (one round trip per process and period, for all its
leases of that time to live); :meth:`Lease.release` when the thing ends; a killed process's
leases lapse by themselves after their time to live. :func:`alive`, :func:`count` and
:func:`members` answer for every process.

Two backends behind one interface, chosen by the settings as the shared state is
(``a2ui.infra.shared``; the way Channels' layers have one interface):

* Redis (``A2UI['REDIS_URL']``): each scope is a sorted set (member -> its expiry, Redis' own
  clock in milliseconds). Admission is one Lua script (drop lapsed members, check every limit,
  add to every scope), so two processes cannot both take the last place. Redis losing a scope
  only frees places until the next refresh puts the live members back; ``a2ui:lease:since``
  (set once, with no expiry) says when this Redis' leases began, so that :func:`alive` answers
  None (cannot tell) rather than False for a lease that may have been lost and not set again
  yet.
* process-local (the embedded one-process default): sets of members, which do not lapse: the
  process that holds them is the only one there is.

A lease its owner drops without releasing it (an exception on the way out) is released when it
is garbage collected, and no longer refreshed meanwhile: a place is never lost.
"""

import asyncio
import logging
import os
import time
import weakref
from dataclasses import dataclass

from django.core.signals import setting_changed

from a2ui.infra import jobs, memory, outages, shared
from a2ui.infra.leasebackends import LocalLeases, RedisLeases

log = logging.getLogger("a2ui.leases")

@dataclass(frozen=True)
class Scope:
    """A set a lease is a member of: its key, and at most ``limit`` live members (None: any)."""

    key: str
    limit: int | None = None


class Full(Exception):
    """A scope is at its limit: nothing was acquired."""

    def __init__(self, scope):
        super().__init__(scope.key)
        self.scope = scope


_counter = iter(range(1, 1 << 62))
_prefix = os.urandom(6).hex()


def new_member(tag=None):
    """A member no other lease has (a process-random prefix, then a counter), ``tag`` after it."""
    member = f"{_prefix}{next(_counter):x}"
    return member if tag is None else f"{member} {tag}"


class Lease:
    """One live thing's place in its scopes; :meth:`release` when it ends (idempotent)."""

    def __init__(self, scopes, ttl, member, counted):
        self.scopes, self.ttl, self.id = tuple(scopes), float(ttl), member
        self.counted = counted  # False: admitted uncounted (Redis unreachable)
        self.released = False
        self.adopted = False  # for owners that hand a lease on (a2ui.mcp)
        self._finalizer = None

    def keys(self):
        return [scope.key for scope in self.scopes]

    def counted_now(self):
        """Counted by the backend: from now on, a lease dropped unreleased frees its place."""
        self._finalizer = weakref.finalize(self, _dropped, tuple(self.keys()), self.id,
                                           asyncio.get_running_loop())
        self._finalizer.atexit = False

    async def release(self):
        if self.released:
            return
        self.released = True
        if self._finalizer is not None:
            self._finalizer.detach()
        _live.pop(self.id, None)
        if not self.counted:
            return
        try:
            await backend().release(self.keys(), self.id)
        except Exception:  # it lapses by itself
            outages.tally()
            log.warning("a2ui: releasing a lease failed (it lapses by itself)", exc_info=True)

    async def release_shielded(self):
        """:meth:`release`, finished even when the caller is being cancelled."""
        if not self.released:
            await asyncio.shield(asyncio.ensure_future(self.release()))


local = LocalLeases()


def backend():
    """The backend of the current settings (Redis when ``A2UI['REDIS_URL']`` is set)."""
    chosen = shared.backend()
    if chosen is shared.local:
        return local
    return RedisLeases(chosen)


def _settings_changed(*, setting, **kwargs):
    if setting == "A2UI":  # another backend (tests): the leases held were the old one's
        _live.clear()


setting_changed.connect(_settings_changed)


# Acquiring ----------------------------------------------------------------------------------------


async def acquire(scopes, ttl, *, tag=None, member=None, strict=False, refreshed=True):
    """A :class:`Lease` of ``ttl`` seconds in every scope, refreshed while it is held, or
    :class:`Full` (nothing acquired). ``member``: the lease's id in its scopes (default a new
    one, ``tag`` after it); ``refreshed`` False: it lapses after ``ttl`` unless acquired again
    (a thing about to be held elsewhere). When the backend cannot be reached the lease is
    admitted uncounted and logged (leases protect the service, they must not take it down),
    unless ``strict``: then the error is raised."""
    scopes = [scope for scope in scopes if scope is not None]
    lease = Lease(scopes, ttl, member or new_member(tag), counted=True)
    if not scopes:
        lease.counted = False
        return lease
    chosen = backend()
    try:
        if chosen is local:
            full = await chosen.acquire(lease.keys(), [s.limit for s in scopes], lease.id,
                                        _ms(ttl), lapses=not refreshed)
        else:
            full = await chosen.acquire(lease.keys(), [s.limit for s in scopes], lease.id,
                                        _ms(ttl))
    except Exception:
        if strict:
            raise
        outages.tally()
        log.warning("a2ui: a lease could not be taken (Redis unreachable?): admitted "
                    "uncounted", exc_info=True)
        lease.counted = False
        return lease
    if full:
        raise Full(scopes[full - 1])
    if not refreshed:
        return lease
    lease.counted_now()
    if chosen is not local:  # local leases never lapse: nothing to refresh
        _live[lease.id] = lease
        _ensure_refresher(lease.ttl)
    return lease


async def alive(keys, ttl=None):
    """For each scope key: True while it has a live member, False when it has none, None when
    the backend cannot say (unreachable, or, with ``ttl``, younger than that: a member may be
    lost and not put back yet). Members this process holds are alive whatever Redis says."""
    keys = list(keys)
    if not keys:
        return []
    mine = {key for lease in list(_live.values()) if not lease.released
            for key in lease.keys()}
    chosen = backend()
    try:
        if chosen is local:
            found = await chosen.alive(keys)
        else:
            found = await chosen.alive(keys, None if ttl is None else _ms(ttl))
    except Exception:
        outages.tally()
        log.warning("a2ui: could not read %d lease(s)", len(keys), exc_info=True)
        found = [None] * len(keys)
    return [True if key in mine else answer for key, answer in zip(keys, found, strict=True)]


async def count(key):
    """How many live members the scope ``key`` has."""
    return await backend().count(key)


async def members(key):
    """The live members of the scope ``key`` (each ``"<id> <tag>"`` if tagged)."""
    return await backend().members(key)


def _ms(seconds):
    return int(seconds * 1000)


# Refreshing the leases this process holds ------------------------------------------------------

#: lease id -> Lease, the counted leases this process holds (weakly: one its owner dropped is
#: no longer refreshed, and its finalizer frees it).
_live = weakref.WeakValueDictionary()
memory.register(lambda: [_live.data])
_last_refresh = {}  # ttl -> time.monotonic() of its last refresh


def _tick():
    """How often the refresh looks: a third of the shortest time to live held (at least a
    quarter of a second)."""
    ttls = [lease.ttl for lease in list(_live.values()) if not lease.released]
    return max(0.25, min(ttls, default=3.0) / 3)


async def _refresh_due():
    """Refresh each time to live's leases a third of it after its last refresh."""
    now = time.monotonic()
    ttls = {lease.ttl for lease in list(_live.values()) if not lease.released}
    for ttl in sorted(ttls):
        if now - _last_refresh.get(ttl, 0.0) >= ttl / 3 - 0.05:
            _last_refresh[ttl] = now
            await refresh_now(ttl)


#: One job refreshes every lease this process holds (a2ui.infra.jobs).
_refresher = jobs.Every("leases refresh", _tick, _refresh_due)


def _ensure_refresher(ttl):
    _last_refresh.setdefault(ttl, time.monotonic())
    _refresher.ensure_started()


async def refresh_now(ttl=None):
    """Push back the expiry of every lease this process holds (of ``ttl`` seconds, or all):
    one round trip per time to live."""
    leases = [lease for lease in list(_live.values())
              if not lease.released and (ttl is None or lease.ttl == ttl)]
    by_ttl = {}
    for lease in leases:
        by_ttl.setdefault(lease.ttl, []).append(lease)
    for seconds, group in by_ttl.items():
        try:
            await backend().refresh(group, _ms(seconds))
        except Exception:
            outages.tally()
            log.warning("a2ui: refreshing %d leases failed (retried)", len(group),
                        exc_info=True)
            continue
        # A lease released while it was being refreshed was put back: take it out again.
        for lease in group:
            if lease.released and lease.counted:
                try:
                    await backend().release(lease.keys(), lease.id)
                except Exception:
                    outages.tally()


def _dropped(keys, member, loop):
    """A lease collected unreleased: its owner lost it (a bug, or an exception on the way
    out). Its place is freed (process-local now; in Redis soon, or by expiry)."""
    log.warning("a2ui: a lease was dropped without being released: freed")
    chosen = backend()
    if chosen is local:
        local.discard(keys, member)
    elif not loop.is_closed():
        loop.call_soon_threadsafe(lambda: loop.create_task(_release_quietly(chosen, keys,
                                                                            member)))


async def _release_quietly(chosen, keys, member):
    try:
        await chosen.release(keys, member)
    except Exception:  # it lapses by itself
        pass


def holding(lease, chunks):
    """An async iterator over ``chunks`` that releases ``lease`` when it ends or is closed
    (a streaming response's body: Django closes it when the client goes), or, never started
    (the client went before the body was read), when it is garbage collected."""
    body = _holding(lease, chunks)
    weakref.finalize(body, _release_soon, lease, asyncio.get_running_loop())
    return body


def _release_soon(lease, loop):
    if not lease.released and not loop.is_closed():
        loop.call_soon_threadsafe(lambda: loop.create_task(lease.release()))


async def _holding(lease, chunks):
    # ``chunks`` is not closed here: an async generator left unfinished is closed by the
    # event loop's own hooks (as it would be without this wrapper); closing it here as well
    # raced them ("aclose(): asynchronous generator is already running").
    try:
        async for chunk in chunks:
            yield chunk
    finally:
        await lease.release_shielded()
