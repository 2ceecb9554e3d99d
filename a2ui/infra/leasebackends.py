"""The two backends of ``a2ui.infra.leases``: Redis (sorted sets, Lua scripts) and this
process's dicts (the embedded default). One interface: ``acquire(keys, limits, member,
ttl_ms)`` (0, or the 1-based index of the full scope), ``release``, ``refresh``, ``alive``,
``count``, ``members``."""

import asyncio
import time

from a2ui.infra import shared

SINCE = "a2ui:lease:since"

# KEYS: the scopes. ARGV: member, TTL (ms), since key, then each scope's limit (-1: none).
# Returns 0 when admitted (added to every scope), else the 1-based index of the full scope.
ACQUIRE_SCRIPT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
for i, key in ipairs(KEYS) do
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
  local limit = tonumber(ARGV[3 + i])
  if limit >= 0 and redis.call('ZCARD', key) >= limit then return i end
end
for i, key in ipairs(KEYS) do
  redis.call('ZADD', key, now + tonumber(ARGV[2]), ARGV[1])
  redis.call('PEXPIRE', key, tonumber(ARGV[2]))
end
redis.call('SET', ARGV[3], now, 'NX')
return 0
"""

# KEYS: scopes; ARGV: TTL (ms), since key, then one member per scope. Puts each member back
# with a new expiry (a scope Redis lost is rebuilt by the members still live).
REFRESH_SCRIPT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
for i, key in ipairs(KEYS) do
  redis.call('ZADD', key, now + tonumber(ARGV[1]), ARGV[2 + i])
  redis.call('PEXPIRE', key, tonumber(ARGV[1]))
end
redis.call('SET', ARGV[2], now, 'NX')
return 0
"""

# KEYS: scopes; ARGV: the since key. Each scope's live members, then the since value.
ALIVE_SCRIPT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local out = {}
for i, key in ipairs(KEYS) do
  out[i] = redis.call('ZCOUNT', key, '(' .. now, '+inf')
end
out[#KEYS + 1] = redis.call('GET', ARGV[1]) or ''
out[#KEYS + 2] = now
return out
"""



class LocalLeases:
    """Process-local scopes: ``{key: {member: lapses at (monotonic) or None}}`` (kept in
    ``shared.local``, cleared with it). A member held by this process never lapses; one taken
    for a while only (``refreshed`` False) lapses after its time to live."""

    @property
    def held(self):
        return shared.local.caps

    def _live(self, key):
        members = self.held.get(key)
        if not members:
            return {}
        now = time.monotonic()
        for member in [m for m, at in members.items() if at is not None and at <= now]:
            del members[member]
        if not members:
            del self.held[key]
        return members

    async def acquire(self, keys, limits, member, ttl_ms, lapses=False):
        for index, (key, limit) in enumerate(zip(keys, limits, strict=True)):
            if limit is not None and len(self._live(key)) >= limit:
                return index + 1
        at = time.monotonic() + ttl_ms / 1000 if lapses else None
        for key in keys:
            self.held.setdefault(key, {})[member] = at
        return 0

    async def release(self, keys, member):
        self.discard(keys, member)

    def discard(self, keys, member):
        for key in keys:
            members = self.held.get(key)
            if members is not None:
                members.pop(member, None)
                if not members:
                    del self.held[key]

    async def refresh(self, leases, ttl_ms):
        pass

    async def alive(self, keys):
        return [bool(self._live(key)) for key in keys]

    async def count(self, key):
        return len(self._live(key))

    async def members(self, key):
        return list(self._live(key))


class RedisLeases:
    def __init__(self, redis):
        self.redis = redis  # a2ui.infra.redisstate.RedisBackend

    async def acquire(self, keys, limits, member, ttl_ms):
        reply, = await self.redis.execute(
            ("EVAL", ACQUIRE_SCRIPT, len(keys), *keys, member, ttl_ms, SINCE,
             *(-1 if limit is None else limit for limit in limits)))
        return int(reply)

    async def release(self, keys, member):
        await self.redis.execute(*[("ZREM", key, member) for key in keys])

    async def refresh(self, leases, ttl_ms):
        keys, members = [], []
        for lease in leases:
            for key in lease.keys():
                keys.append(key)
                members.append(lease.id)
        if keys:  # one script per server the keys live on (A2UI['REDIS_SHARDS'])
            await asyncio.gather(*(
                redis.execute(("EVAL", REFRESH_SCRIPT, len(part), *(keys[i] for i in part),
                               ttl_ms, SINCE, *(members[i] for i in part)))
                for redis, part in self.redis.split(keys)))

    async def alive(self, keys, ttl_ms=None):
        out = [None] * len(keys)
        parts = self.redis.split(keys)
        replies = await asyncio.gather(*(
            redis.execute(("EVAL", ALIVE_SCRIPT, len(part), *(keys[i] for i in part), SINCE))
            for redis, part in parts))
        for (_, part), (reply,) in zip(parts, replies, strict=True):
            *counts, since, now = reply
            settled = ttl_ms is None or _age_ms(since, now) >= ttl_ms
            for i, n in zip(part, counts, strict=True):
                out[i] = True if int(n) else (False if settled else None)
        return out

    async def count(self, key):
        _, count = await self.redis.execute(
            ("ZREMRANGEBYSCORE", key, "-inf", int(time.time() * 1000)), ("ZCARD", key))
        return int(count)

    async def members(self, key):
        members, = await self.redis.execute(
            ("ZRANGEBYSCORE", key, int(time.time() * 1000), "+inf"))
        return [m.decode() if isinstance(m, bytes) else m for m in members]


def _age_ms(since, now):
    try:
        return int(now) - int(since)
    except (TypeError, ValueError):
        return 0
