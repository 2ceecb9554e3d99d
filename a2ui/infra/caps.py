"""Caps on long-lived things, per credential and per client address, across processes.

Each kind of long-lived thing (an MCP session, a session socket, an agent socket, an SSE
stream, an AG-UI 1.0 run) is counted under *holders*: its credential (a person, per agent, or
an agent key) and the client address it came from, each with a limit (``A2UI['CAP_...']``,
docs/operations.md "Caps"). :func:`acquire` admits one more thing only when every holder is
under its limit, and gives it a :class:`Lease`; the thing releases it when it ends. Otherwise
it raises :class:`CapReached` (a ``DomainError`` with ``Fault.RATE_LIMITED``: HTTP 429, or each
socket protocol's rate-limit error and close code) and nothing was counted.

With ``A2UI['REDIS_URL']`` each holder is a Redis sorted set ``a2ui:cap:<kind>:<per>:<id>``:
member the lease id, score the lease's expiry (Redis' own clock, milliseconds). Admission is
one Lua script (drop expired members, check every holder, add to every holder), so two
processes cannot both take the last place. Each process refreshes the expiry of the leases it
holds every ``CAP_LEASE_SECONDS / 3`` (one pipelined round trip), so a killed process's leases
expire by themselves within ``CAP_LEASE_SECONDS``; a released lease may linger as long if a
refresh raced its release. Redis losing the keys only frees capacity until the next refresh
puts the live leases back. When Redis cannot be reached at admission the thing is admitted
uncounted (logged): caps protect the service, they must not take it down.

Without Redis the counts are process-local (the embedded one-process default) and leases do
not expire: the process that holds them is the only one there is.
"""

import asyncio
import logging
import os
import time
import weakref
from dataclasses import dataclass

from django.core.signals import setting_changed

from a2ui.conf import a2ui_settings
from a2ui.core.errors import DomainError, Fault
from a2ui.infra import memory, outages, prom, shared

log = logging.getLogger("a2ui.caps")

#: What each kind is called in refusals.
NOUNS = {
    "mcp": "MCP sessions",
    "socket": "session sockets",
    "agent_socket": "agent sockets",
    "stream": "SSE streams",
    "run": "AG-UI runs in flight",
    "client": "clients",
}
#: Who a holder is, in refusals.
PERS = {"person": "this person", "agent": "this agent key", "address": "this address"}

# KEYS: the holders' sorted sets. ARGV: lease id, lease TTL (ms), then each key's limit.
# Returns 0 when admitted (added to every key), else the 1-based index of the full key.
ACQUIRE_SCRIPT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
for i, key in ipairs(KEYS) do
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
  if redis.call('ZCARD', key) >= tonumber(ARGV[2 + i]) then return i end
end
for i, key in ipairs(KEYS) do
  redis.call('ZADD', key, now + tonumber(ARGV[2]), ARGV[1])
  redis.call('PEXPIRE', key, tonumber(ARGV[2]))
end
return 0
"""

# KEYS: holders; ARGV: lease TTL (ms), then one lease id per key. Puts each lease back with a
# new expiry (a key Redis lost is rebuilt by the leases that are still live).
REFRESH_SCRIPT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
for i, key in ipairs(KEYS) do
  redis.call('ZADD', key, now + tonumber(ARGV[1]), ARGV[1 + i])
  redis.call('PEXPIRE', key, tonumber(ARGV[1]))
end
return 0
"""


@dataclass(frozen=True)
class Holder:
    """One count a lease is in: ``per`` ("person", "agent", "address"), its id, its limit."""

    per: str
    ident: str
    limit: int

    def key(self, kind):
        return f"a2ui:cap:{kind}:{self.per}:{self.ident}"


class CapReached(DomainError):
    def __init__(self, kind, holder):
        noun = NOUNS.get(kind, kind)
        super().__init__(
            Fault.RATE_LIMITED,
            f"Too many open {noun} for {PERS.get(holder.per, holder.per)} "
            f"(limit {holder.limit}): close some first.",
            {"reason": "cap_reached", "kind": kind, "per": holder.per, "limit": holder.limit},
        )
        self.kind, self.holder = kind, holder
        if prom.ON:
            prom.cap_refused(kind)


_counter = iter(range(1, 1 << 62))
_prefix = os.urandom(6).hex()


class Lease:
    """One admitted thing's place in its holders' counts; :meth:`release` when it ends
    (idempotent). ``adopted`` is for owners that hand a lease on (``a2ui.mcp``).

    A lease its owner drops without releasing it (an exception on the way out) is released
    when it is garbage collected, and no longer refreshed meanwhile: a place is never lost.
    """

    def __init__(self, kind, holders, counted, tag=None):
        self.kind, self.holders = kind, tuple(holders)
        self.id = f"{_prefix}{next(_counter):x}"
        if tag is not None:  # carried in the member itself (a2ui.sessions.clients)
            self.id = f"{self.id} {tag}"
        self.counted = counted  # False: admitted uncounted (Redis unreachable)
        self.released = False
        self.adopted = False
        self._finalizer = None

    def keys(self):
        return [h.key(self.kind) for h in self.holders]

    def counted_now(self):
        """Counted by the backend: from now on, a lease dropped unreleased frees its place."""
        self._finalizer = weakref.finalize(self, _dropped, self.kind, tuple(self.keys()),
                                           self.id, asyncio.get_running_loop())
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
            await _backend().release(self.keys(), self.id)
        except Exception:  # it expires by itself
            outages.tally()
            log.warning("a2ui: releasing a %s lease failed (it expires by itself)", self.kind,
                        exc_info=True)

    async def release_shielded(self):
        """:meth:`release`, finished even when the caller is being cancelled."""
        if not self.released:
            await asyncio.shield(asyncio.ensure_future(self.release()))


# Backends --------------------------------------------------------------------------------------


class LocalCaps:
    """Process-local counts: ``{key: {lease id}}`` (kept in ``shared.local``, cleared with it)."""

    @property
    def held(self):
        return shared.local.caps

    async def acquire(self, lease, limits):
        keys = lease.keys()
        for index, (key, limit) in enumerate(zip(keys, limits, strict=True)):
            if len(self.held.get(key, ())) >= limit:
                return index + 1
        for key in keys:
            self.held.setdefault(key, set()).add(lease.id)
        return 0

    async def release(self, keys, lease_id):
        self.discard(keys, lease_id)

    def discard(self, keys, lease_id):
        for key in keys:
            members = self.held.get(key)
            if members is not None:
                members.discard(lease_id)
                if not members:
                    del self.held[key]

    async def refresh(self, leases, ttl_ms):
        pass

    async def count(self, kind, holder):
        return len(self.held.get(holder.key(kind), ()))

    async def members(self, kind, holder):
        return list(self.held.get(holder.key(kind), ()))


class RedisCaps:
    def __init__(self, redis):
        self.redis = redis  # a2ui.infra.redisstate.RedisBackend

    async def acquire(self, lease, limits):
        keys = lease.keys()
        reply, = await self.redis.execute(
            ("EVAL", ACQUIRE_SCRIPT, len(keys), *keys, lease.id, _ttl_ms(), *limits))
        return int(reply)

    async def release(self, keys, lease_id):
        await self.redis.execute(*[("ZREM", key, lease_id) for key in keys])

    async def refresh(self, leases, ttl_ms):
        keys, ids = [], []
        for lease in leases:
            for key in lease.keys():
                keys.append(key)
                ids.append(lease.id)
        if keys:
            await self.redis.execute(("EVAL", REFRESH_SCRIPT, len(keys), *keys, ttl_ms, *ids))

    async def count(self, kind, holder):
        key = holder.key(kind)
        _, count = await self.redis.execute(
            ("ZREMRANGEBYSCORE", key, "-inf", int(time.time() * 1000)), ("ZCARD", key))
        return int(count)

    async def members(self, kind, holder):
        members, = await self.redis.execute(
            ("ZRANGEBYSCORE", holder.key(kind), int(time.time() * 1000), "+inf"))
        return list(members)


local = LocalCaps()


def _settings_changed(*, setting, **kwargs):
    if setting == "A2UI":  # another backend (tests): the leases held were the old one's
        _live.clear()


setting_changed.connect(_settings_changed)


def _backend():
    chosen = shared.backend()
    if chosen is shared.local:
        return local
    return RedisCaps(chosen)


def _ttl_ms():
    return int(a2ui_settings.CAP_LEASE_SECONDS * 1000)


# Refreshing the leases this process holds ------------------------------------------------------

#: lease id -> Lease, the counted leases this process holds (weakly: one its owner dropped is
#: no longer refreshed, and its finalizer frees it).
_live = weakref.WeakValueDictionary()
memory.register(lambda: [_live.data])
_refreshers = {}  # event loop -> its refresher task


def _ensure_refresher():
    loop = asyncio.get_running_loop()
    task = _refreshers.get(loop)
    if task is None or task.done():
        for closed in [other for other in _refreshers if other.is_closed()]:
            _refreshers.pop(closed, None)
        _refreshers[loop] = loop.create_task(_refresh_forever(), name="a2ui-cap-leases")


async def _refresh_forever():
    while True:
        await asyncio.sleep(a2ui_settings.CAP_LEASE_SECONDS / 3)
        await refresh_now()


async def refresh_now():
    """Push back the expiry of every lease this process holds (one round trip)."""
    leases = [lease for lease in list(_live.values()) if not lease.released]
    if not leases:
        return
    try:
        await _backend().refresh(leases, _ttl_ms())
    except Exception:
        outages.tally()
        log.warning("a2ui: refreshing %d cap leases failed (retried)", len(leases),
                    exc_info=True)


# Acquiring -------------------------------------------------------------------------------------


async def acquire(kind, holders, tag=None):
    """A :class:`Lease` of one more ``kind`` for every holder, or :class:`CapReached`.

    ``tag`` (any text): kept in the lease's member after its id, so whoever
    lists the holder's live leases (:func:`members`) reads what each one is."""
    holders = [h for h in holders if h is not None]
    lease = Lease(kind, holders, counted=True, tag=tag)
    if not holders:
        lease.counted = False
        return lease
    backend = _backend()
    try:
        full = await backend.acquire(lease, [h.limit for h in holders])
    except Exception:
        outages.tally()
        log.warning("a2ui: a %s cap could not be checked (Redis unreachable?): admitted "
                    "uncounted", kind, exc_info=True)
        lease.counted = False
        return lease
    if full:
        raise CapReached(kind, holders[full - 1])
    lease.counted_now()
    if backend is not local:  # local leases never expire: nothing to refresh
        _live[lease.id] = lease
        _ensure_refresher()
    return lease


async def count(kind, holder):
    """How many live leases ``holder`` has of ``kind`` (for tests and operators)."""
    return await _backend().count(kind, holder)


async def members(kind, holder):
    """The live leases ``holder`` has of ``kind``: their ids, each ``"<id> <tag>"`` if tagged."""
    return await _backend().members(kind, holder)


def holding(lease, chunks):
    """An async iterator over ``chunks`` that releases ``lease`` when it ends or is closed
    (a streaming response's body: Django closes it when the client goes), or, never started
    (the client went before the body was read), when it is garbage collected."""
    body = _holding(lease, chunks)
    weakref.finalize(body, _release_soon, lease, asyncio.get_running_loop())
    return body


def _dropped(kind, keys, lease_id, loop):
    """A lease collected unreleased: its owner lost it (a bug, or an exception on the way
    out). Its place is freed (process-local now; in Redis soon, or by expiry)."""
    log.warning("a2ui: a cap lease (%s) was dropped without being released: freed", kind)
    backend = _backend()
    if backend is local:
        local.discard(keys, lease_id)
    elif not loop.is_closed():
        loop.call_soon_threadsafe(lambda: loop.create_task(_release_quietly(backend, keys,
                                                                            lease_id)))


async def _release_quietly(backend, keys, lease_id):
    try:
        await backend.release(keys, lease_id)
    except Exception:  # it expires by itself
        pass


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


# Holders of each kind --------------------------------------------------------------------------


def address_of(scope):
    """The client address of an ASGI scope (behind a proxy, the one ``a2ui_serve --proxy``
    took from X-Forwarded-For), or None."""
    client = scope.get("client") if scope else None
    if client and client[0]:
        return str(client[0])[:64]
    return None


def address_of_request(request):
    """The client address of a Django request (``REMOTE_ADDR``), or None."""
    address = request.META.get("REMOTE_ADDR")
    return str(address)[:64] if address else None


def by_address(address):
    return Holder("address", address, a2ui_settings.CAP_PER_ADDRESS) if address else None


def person(user_id, agent_id, limit):
    return Holder("person", f"{user_id}:{agent_id or ''}", limit)


def agent_key(agent_id, limit):
    return Holder("agent", str(agent_id), limit)


async def acquire_mcp(principal, address):
    """An MCP session (or a session-less request on the 2026-07-28 revision, while it runs)."""
    if principal.kind == "agent":
        holder = agent_key(principal.agent.pk, a2ui_settings.CAP_MCP_SESSIONS_PER_AGENT_KEY)
    else:
        holder = person(principal.token.user_id, principal.token.agent_id,
                        a2ui_settings.CAP_MCP_SESSIONS_PER_PERSON)
    return await acquire("mcp", [holder, by_address(address)])


async def acquire_socket(token, address):
    """A session socket of a person's stream token (any of the socket protocols)."""
    return await acquire("socket", [
        person(token.user_id, token.agent_id, a2ui_settings.CAP_SOCKETS_PER_PERSON),
        by_address(address)])


async def acquire_agent_socket(agent, address):
    return await acquire("agent_socket", [
        agent_key(agent.pk, a2ui_settings.CAP_AGENT_SOCKETS_PER_AGENT_KEY), by_address(address)])


async def acquire_stream(token, address):
    """A v0.9 SSE stream of a person's stream token."""
    return await acquire("stream", [
        person(token.user_id, token.agent_id, a2ui_settings.CAP_STREAMS_PER_PERSON),
        by_address(address)])


async def acquire_run(user_id, agent_id, address):
    """An AG-UI 1.0 run of a person (bearer token or cookie) with an agent, while it streams."""
    return await acquire("run", [
        person(user_id, agent_id, a2ui_settings.CAP_RUNS_PER_PERSON), by_address(address)])
