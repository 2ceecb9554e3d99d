"""The Redis backend of ``a2ui.infra.shared``: keys, commands, and per-loop connections.

Keys (``a2ui:`` prefix):

* ``ss:<session hex>``: a hash, the session's push stream. ``n`` the newest sequence number,
  ``e`` the epoch (set by whoever creates the hash, so a lost hash comes back with a new one),
  ``s`` the open-socket count under that epoch, ``f`` = 1 when the session's first socket
  created the hash: only then is ``s`` the count of every open socket (direct delivery).
* ``live:<session hex>``: ``"agent:user"`` of a live session (owner check), 5 minutes.
* ``rl:<scope>:<window>``: a rate-limit window.
* ``strikes:<scope>``, ``lock:<scope>``: failed logins counted in a window, and a lockout
  (``shared.strike``).

Every command goes through one pipelined connection per event loop (``redisline``; redis-py
for URLs it does not take, e.g. ``unix://``). redis-py also serves ``redis_client()`` (consents)
from a blocking pool: a burst waits for a free connection instead of failing. Both retry a
command once on a new connection when the connection it was written to turns out dead.

A loop's connections close when the loop shuts down (``asyncio.run`` and ``async_to_sync``
call ``shutdown_asyncgens`` before closing: an async generator started per loop closes them).
"""

import asyncio
import time
import weakref
import zlib

from a2ui.conf import a2ui_settings
from a2ui.infra import redisline, redisurl
from a2ui.infra.localstate import LIVE_TTL, SEQ_TTL, clients_key, new_epoch

#: A command (or a wait for a pooled connection) that takes longer fails.
REDIS_TIMEOUT_SECONDS = 15

# KEYS[1] the stream hash; ARGV: candidate epoch, "1" if the session is new, TTL.
# Returns {epoch, socket count, newest sequence number}.
OPEN_SCRIPT = """
if redis.call('HSETNX', KEYS[1], 'e', ARGV[1]) == 1 and ARGV[2] == '1' then
  redis.call('HSET', KEYS[1], 'f', '1')
end
local s = redis.call('HINCRBY', KEYS[1], 's', 1)
redis.call('EXPIRE', KEYS[1], ARGV[3])
return {redis.call('HGET', KEYS[1], 'e'), s, tonumber(redis.call('HGET', KEYS[1], 'n') or '0')}
"""

# KEYS[1] the stream hash; ARGV: the epoch the socket was counted under ('' for the current
# one), TTL. Returns the new count, or nil when that count is gone with its epoch.
CLOSE_SCRIPT = """
local e = redis.call('HGET', KEYS[1], 'e')
if not e or (ARGV[1] ~= '' and e ~= ARGV[1]) then return false end
local s = redis.call('HINCRBY', KEYS[1], 's', -1)
redis.call('EXPIRE', KEYS[1], ARGV[2])
return s
"""


#: The replication id of the server whose data set the keys belong to (``check_history``).
HISTORY_KEY = "a2ui:history"

# KEYS: stream hashes; ARGV[1]: the new epoch. Each existing one takes it, its socket count
# starts again under it and is no longer trusted for direct delivery (no 'f').
REEPOCH_SCRIPT = """
for _, key in ipairs(KEYS) do
  if redis.call('EXISTS', key) == 1 then
    redis.call('HSET', key, 'e', ARGV[1], 's', 0)
    redis.call('HDEL', key, 'f')
  end
end
return #KEYS
"""


async def check_history(send):
    """On each new hot-path connection: has the server's data set a different history than the
    one the keys were written under? Then every sequence counter takes a new epoch.

    A replica promoted by a failover (or a server restarted from a snapshot) has the keys, but
    maybe not the primary's last writes: a counter may be *behind* numbers already issued, under
    the same epoch, and the next pushes would reuse them (a socket would take them for numbers
    it has seen). The server's replication id (``INFO replication``: ``master_replid``) changes
    exactly then; ``a2ui:history`` remembers the one the keys were written under. When they
    differ, every ``a2ui:ss:*`` counter takes a new epoch before this connection sends
    anything, so each socket resyncs from the database (``seqwatch``, ``SessionSocket``). Done
    by each process that connects (idempotent but for the epoch's value); then the id is
    recorded. Costs two commands per new connection, none per message.
    """
    info = (await send(("INFO", "replication")))[0]
    replid = next((line.split(":", 1)[1].strip() for line in info.splitlines()
                   if line.startswith("master_replid:")), None) if isinstance(info, str) else None
    if replid is None or (await send(("GET", HISTORY_KEY)))[0] == replid:
        return False
    cursor, epoch = "0", new_epoch()
    while True:
        cursor, keys = (await send(("SCAN", cursor, "MATCH", "a2ui:ss:*", "COUNT", 1000)))[0]
        if keys:
            await send(("EVAL", REEPOCH_SCRIPT, len(keys), *keys, epoch))
        if cursor == "0":
            break
    await send(("SET", HISTORY_KEY, replid))
    return True


def stream_key(session_hex):
    return f"a2ui:ss:{session_hex}"


#: The sequence clock (``shared.sequence_clock``): a hash of ``CLOCK_BUCKETS`` counters, one
#: bumped by every sequence number taken in the bucket's sessions, and ``e``, its epoch.
CLOCK_KEY = "a2ui:seqclock"
CLOCK_BUCKETS = 1024


_BUCKET_NAMES = tuple(str(i) for i in range(CLOCK_BUCKETS))


def clock_bucket(session_hex):
    """The session's field of the sequence clock (a CRC of its id, mod the buckets)."""
    return _BUCKET_NAMES[zlib.crc32(session_hex.encode()) % CLOCK_BUCKETS]


#: The shard names the live processes place sessions by (on the main server): set by the first
#: process that checks, kept alive by every process's readiness checks (``agree``).
SHARDS_KEY = "a2ui:shards"
SHARDS_TTL = 60


class ShardsDiffer(RuntimeError):
    """Processes running beside this one place sessions over other Redis servers."""


async def agree(main, names):
    """Check that the shards the live processes use (``SHARDS_KEY`` on ``main``) are
    ``names``, recording them when none are: ``ShardsDiffer`` otherwise. Two lists at once
    would place a session's state and group on two servers, one for each kind of process
    (docs/operations.md, "Several Redis servers": change the list with every process stopped)."""
    listed = " ".join(sorted(names))
    _, recorded = await main.execute(("SET", SHARDS_KEY, listed, "NX", "EX", SHARDS_TTL),
                                     ("GET", SHARDS_KEY))
    if recorded != listed:
        raise ShardsDiffer(f"the processes running now place sessions over other Redis servers "
                           f"({recorded!r}, this process: {listed!r})")
    await main.execute(("EXPIRE", SHARDS_KEY, SHARDS_TTL))



class _LoopConnections:
    """The hot-path line and the redis-py client of one event loop."""

    def __init__(self, url):
        self.url = url
        try:
            self.line = redisline.Line(url, REDIS_TIMEOUT_SECONDS, on_connect=check_history)
        except ValueError:  # e.g. unix:// sockets: redis-py handles those
            self.line = None
        self._client = None
        self.closer = None

    def client(self):
        if self._client is None:
            import redis.asyncio as aioredis
            from redis.asyncio.retry import Retry
            from redis.backoff import ExponentialBackoff

            pool = redisurl.async_pool(  # Sentinel URLs too: a new connection asks for the primary
                self.url,
                decode_responses=True,
                blocking_max_connections=a2ui_settings.REDIS_MAX_CONNECTIONS,
                timeout=REDIS_TIMEOUT_SECONDS,  # a burst queues this long for a connection
                socket_timeout=REDIS_TIMEOUT_SECONDS,
                socket_connect_timeout=REDIS_TIMEOUT_SECONDS,
                retry=Retry(ExponentialBackoff(cap=0.5, base=0.05), 1),
            )
            self._client = aioredis.Redis.from_pool(pool)  # closing it closes the pool
        return self._client

    async def execute(self, commands):
        if self.line is not None:
            return await self.line.execute(*commands)
        async with self.client().pipeline(transaction=False) as pipe:
            for command in commands:
                pipe.execute_command(*command)
            return await pipe.execute()

    async def aclose(self):
        if self.line is not None:
            self.line.close()
        if self._client is not None:
            await self._client.aclose()
        await asyncio.sleep(0)  # let the transports finish closing


async def _close_at_shutdown(connections, registry):
    try:
        yield
    finally:
        registry.pop(asyncio.get_running_loop(), None)
        try:
            await connections.aclose()
        except Exception:  # closing anyway: a broken connection must not stop it
            pass


class RedisBackend:
    def __init__(self, url):
        self.url = url
        self._loops = weakref.WeakKeyDictionary()  # event loop -> _LoopConnections

    def _connections(self):
        loop = asyncio.get_running_loop()
        connections = self._loops.get(loop)
        if connections is None:
            # Loops closed without shutdown_asyncgens() keep their entry (its connections refer
            # to the loop): drop them here, and the garbage collector closes their sockets.
            for closed in [other for other in self._loops if other.is_closed()]:
                self._loops.pop(closed, None)
            connections = self._loops[loop] = _LoopConnections(self.url)
            # Started here, suspended at its yield: the loop's shutdown_asyncgens() closes it.
            # Kept alive by the loop itself, so nothing in ``_loops`` refers back to the loop;
            # one per backend (several with A2UI['REDIS_SHARDS']): a closer that lost its last
            # reference would be finalized, closing its connections under their users.
            closer = _close_at_shutdown(connections, self._loops)
            try:
                closer.__anext__().send(None)
            except StopIteration:
                pass
            closers = getattr(loop, "_a2ui_redis_closers", None)
            if closers is None:
                try:
                    closers = loop._a2ui_redis_closers = []
                except AttributeError:  # a loop class without instance attributes
                    connections.closer = closer
            if closers is not None:
                closers.append(closer)
        return connections

    async def execute(self, *commands):
        """Run ``commands`` (tuples) in one round trip; their replies, decoded, as a list."""
        return await self._connections().execute(commands)

    async def agree(self):
        """Readiness: this server answers, and no live process places sessions over shards
        (``agree`` with no names: however each process spells this server's URL)."""
        await agree(self, [])

    def split(self, keys):
        """``[(backend, [positions in keys])]`` by server: all here (``ShardedBackend``'s has
        one group per server)."""
        return [(self, list(range(len(keys))))]

    def redis_client(self):
        return self._connections().client()

    def line(self):
        """The running loop's ``redisline.Line`` (None for a URL only redis-py takes)."""
        return self._connections().line

    # Sequence numbers and socket counts ------------------------------------------------------

    @staticmethod
    def _seq_commands(session_hex, clients=False):
        key = stream_key(session_hex)
        commands = [("HINCRBY", key, "n", 1), ("HMGET", key, "e", "s", "f"),
                    ("EXPIRE", key, SEQ_TTL), ("HINCRBY", CLOCK_KEY, clock_bucket(session_hex), 1)]
        if clients:  # the live "client" leases (a2ui.infra.caps: score = expiry, in ms)
            commands.append(("ZRANGEBYSCORE", clients_key(session_hex),
                             int(time.time() * 1000), "+inf"))
        return commands

    async def _seq_replies(self, session_hex, values, sockets):
        seq, (epoch, count, first), _, _, *members = values
        if epoch is None:  # the counter was just created (new, or lost): give it an epoch
            key = stream_key(session_hex)
            _, epoch = await self.execute(("HSETNX", key, "e", new_epoch()), ("HGET", key, "e"))
        trusted = sockets and first == "1"
        out = int(seq), epoch, (int(count or 0) if trusted else None)
        return (*out, list(members[0])) if members else out

    async def next_seq_and_sockets(self, session_hex, sockets, clients=False):
        values = await self.execute(*self._seq_commands(session_hex, clients))
        return await self._seq_replies(session_hex, values, sockets)

    async def cached_session_and_next_seq(self, session_hex, sockets, clients=False):
        values = await self.execute(("GET", f"a2ui:live:{session_hex}"),
                                    *self._seq_commands(session_hex, clients))
        return values[0], *await self._seq_replies(session_hex, values[1:], sockets)

    async def current_seq(self, session_hex):
        key = stream_key(session_hex)
        _, (seq, epoch), _ = await self.execute(
            ("HSETNX", key, "e", new_epoch()), ("HMGET", key, "n", "e"), ("EXPIRE", key, SEQ_TTL)
        )
        return int(seq or 0), epoch

    async def sequence_states(self, session_hexes):
        if not session_hexes:
            return []
        values = await self.execute(*[("HMGET", stream_key(s), "n", "e") for s in session_hexes])
        return [(int(seq or 0), epoch) for seq, epoch in values]

    async def sequence_clock(self):
        _, flat = await self.execute(("HSETNX", CLOCK_KEY, "e", new_epoch()),
                                     ("HGETALL", CLOCK_KEY))
        fields = dict(zip(flat[::2], flat[1::2], strict=True))
        epoch = fields.pop("e", None)
        return epoch, {bucket: int(n) for bucket, n in fields.items()}

    def clock_bucket(self, session_hex):
        return clock_bucket(session_hex)

    async def socket_opened(self, session_hex, fresh):
        (epoch, _, _), = await self.execute(
            ("EVAL", OPEN_SCRIPT, 1, stream_key(session_hex), new_epoch(), int(bool(fresh)),
             SEQ_TTL)
        )
        return epoch

    async def socket_closed(self, session_hex, epoch):
        count, = await self.execute(
            ("EVAL", CLOSE_SCRIPT, 1, stream_key(session_hex), epoch or "", SEQ_TTL)
        )
        return None if count is None else int(count)

    async def socket_count(self, session_hex):
        count, = await self.execute(("HGET", stream_key(session_hex), "s"))
        return None if count is None else int(count)

    # Rate limits and the live-session cache --------------------------------------------------

    async def hit_rate_limit(self, scope_key, limit, window_seconds):
        key = f"a2ui:rl:{scope_key}:{int(time.time() // window_seconds)}"
        count, _ = await self.execute(("INCR", key), ("EXPIRE", key, window_seconds * 2))
        return int(count) > limit

    async def strike(self, scope_key, limit, window_seconds, lockout_seconds):
        key = f"a2ui:strikes:{scope_key}"
        count, ttl = await self.execute(("INCR", key), ("TTL", key))
        commands = [("EXPIRE", key, window_seconds)] if int(ttl) < 0 else []
        if int(count) >= limit:  # the one that reaches it locks; the count starts again
            commands += [("SET", f"a2ui:lock:{scope_key}", "1", "EX", lockout_seconds),
                         ("DEL", key)]
        if commands:
            await self.execute(*commands)
        return int(count) == limit

    async def locked_for(self, scope_keys):
        ttls = await self.execute(*(("PTTL", f"a2ui:lock:{k}") for k in scope_keys))
        return max([0.0, *(int(t) / 1000 for t in ttls)])

    async def forgive(self, scope_key):
        await self.execute(("DEL", f"a2ui:strikes:{scope_key}"))

    async def cache_session(self, session_hex, value):
        await self.execute(("SET", f"a2ui:live:{session_hex}", value, "EX", LIVE_TTL))

    async def cached_value(self, session_hex):
        value, = await self.execute(("GET", f"a2ui:live:{session_hex}"))
        return value

    async def forget_session(self, session_hex):
        await self.execute(("DEL", f"a2ui:live:{session_hex}"))
