"""Several Redis servers: each session's state on its shard, the rest on ``A2UI['REDIS_URL']``.

``ShardedBackend`` has ``RedisBackend``'s interface (``a2ui.infra.shared``). A session's keys
(its sequence counter and socket count, live-session cache, registry of clients, AG-UI runs'
leases and logs: ``a2ui.core.shardmap.SESSION_KEYS``) live on the shard rendezvous hashing
gives it (``ShardMap``), and the channel layer publishes the session's group there too
(``a2ui.layer``), so a push takes its number and publishes on one server, in one write. What
is not a session's (rate limits, sign-in strikes, caps per credential and address, agents'
presence and routes, consents' cache) stays on the main server, ``A2UI['REDIS_URL']``, which
may also be one of the shards.

Every shard keeps its own sequence clock (``sequence_clock`` reads them all: its buckets are
``<shard>.<bucket>``, its epoch every shard's; one shard's new epoch is a new epoch of the whole),
and checks its own replication history (``check_history``) on each new connection. A shard
that restarts empty loses only its sessions' counters: they come back with new epochs and
those sessions' sockets resync from the database, as with one server.
"""

import asyncio

from a2ui.core.shardmap import ShardMap, shard_name
from a2ui.infra.localstate import new_epoch
from a2ui.infra.redisstate import RedisBackend, agree, clock_bucket


async def _answered(gathered):
    """The replies of a gather with ``return_exceptions``, None for each server that failed;
    the first failure raised when every server failed (Redis away altogether)."""
    replies = await gathered
    failures = [reply for reply in replies if isinstance(reply, Exception)]
    if failures and len(failures) == len(replies):
        raise failures[0]
    return [None if isinstance(reply, Exception) else reply for reply in replies]


def shard_list(shards):
    """``[(name, url)]`` from ``A2UI['REDIS_SHARDS']``: a list of URLs (each named by
    ``shard_name``) or a dict of name to URL."""
    if isinstance(shards, dict):
        return [(str(name), url) for name, url in shards.items()]
    return [(shard_name(url), url) for url in shards]


class ShardedBackend:
    def __init__(self, url, shards):
        self.url = url
        self.main = RedisBackend(url)
        named = shard_list(shards)
        self.map = ShardMap([name for name, _ in named])
        self.shards = [self.main if shard_url == url else RedisBackend(shard_url)
                       for _, shard_url in named]
        self._main_index = next((i for i, b in enumerate(self.shards) if b is self.main), None)

    def shard(self, session_hex):
        """The session's server (a ``RedisBackend``)."""
        return self.shards[self.map.index(session_hex)]

    def line_for(self, url):
        """The running loop's pipelined connection to ``url`` when it is one of this backend's
        servers (the channel layer publishes through it), else None."""
        for backend in (self.main, *self.shards):
            if backend.url == url:
                return backend.line()
        return None

    def line(self):
        return self.main.line()

    def redis_client(self):
        return self.main.redis_client()

    # Any commands: routed by the keys they name ----------------------------------------------

    def _route(self, commands):
        shard, wide = self.map.target(commands)
        if shard is None:
            return self.main
        if wide and shard != self._main_index:
            raise ValueError("one batch of Redis commands for a session's shard and the main "
                             "server")
        return self.shards[shard]

    async def execute(self, *commands):
        """Run ``commands`` on the server their keys live on, in one round trip."""
        return await self._route(commands).execute(*commands)

    async def agree(self):
        """Readiness: every server answers, and every live process uses these shards."""
        await asyncio.gather(*(shard.execute(("PING",)) for shard in self.shards
                               if shard is not self.main))
        await agree(self.main, self.map.names)

    def split(self, keys):
        """``[(backend, [positions in keys])]``: ``keys`` grouped by the server each lives on."""
        groups = {}
        for i, key in enumerate(keys):
            backend = self._route([("EXISTS", key)])
            groups.setdefault(id(backend), (backend, []))[1].append(i)
        return list(groups.values())

    # Sequence numbers and socket counts: the session's shard ---------------------------------

    async def next_seq_and_sockets(self, session_hex, sockets, clients=False):
        return await self.shard(session_hex).next_seq_and_sockets(session_hex, sockets, clients)

    async def cached_session_and_next_seq(self, session_hex, sockets, clients=False):
        return await self.shard(session_hex).cached_session_and_next_seq(
            session_hex, sockets, clients)

    async def current_seq(self, session_hex):
        return await self.shard(session_hex).current_seq(session_hex)

    async def sequence_states(self, session_hexes):
        by_shard = {}
        for i, session_hex in enumerate(session_hexes):
            by_shard.setdefault(self.map.index(session_hex), []).append(i)
        out = [None] * len(session_hexes)  # None: its server did not answer
        shards = list(by_shard.items())
        replies = await _answered(asyncio.gather(*(
            self.shards[shard].sequence_states([session_hexes[i] for i in positions])
            for shard, positions in shards), return_exceptions=True))
        for (_, positions), states in zip(shards, replies, strict=True):
            if states is not None:
                for i, state in zip(positions, states, strict=True):
                    out[i] = state
        return out

    async def sequence_clock(self):
        clocks = await _answered(asyncio.gather(
            *(shard.sequence_clock() for shard in self.shards), return_exceptions=True))
        buckets, epochs = {}, []
        for i, clock in enumerate(clocks):
            if clock is None:  # a shard away: an epoch never seen, so every session is read
                epochs.append(new_epoch())
                continue
            epochs.append(clock[0])
            for bucket, n in clock[1].items():
                buckets[f"{i}.{bucket}"] = n
        return "|".join(epochs), buckets

    def clock_bucket(self, session_hex):
        return f"{self.map.index(session_hex)}.{clock_bucket(session_hex)}"

    async def socket_opened(self, session_hex, fresh):
        return await self.shard(session_hex).socket_opened(session_hex, fresh)

    async def socket_closed(self, session_hex, epoch):
        return await self.shard(session_hex).socket_closed(session_hex, epoch)

    async def socket_count(self, session_hex):
        return await self.shard(session_hex).socket_count(session_hex)

    # The live-session cache: the session's shard; rate limits and strikes: the main server ---

    async def cache_session(self, session_hex, value):
        await self.shard(session_hex).cache_session(session_hex, value)

    async def cached_value(self, session_hex):
        return await self.shard(session_hex).cached_value(session_hex)

    async def forget_session(self, session_hex):
        await self.shard(session_hex).forget_session(session_hex)

    async def hit_rate_limit(self, scope_key, limit, window_seconds):
        return await self.main.hit_rate_limit(scope_key, limit, window_seconds)

    async def strike(self, scope_key, limit, window_seconds, lockout_seconds):
        return await self.main.strike(scope_key, limit, window_seconds, lockout_seconds)

    async def locked_for(self, scope_keys):
        return await self.main.locked_for(scope_keys)

    async def forgive(self, scope_key):
        await self.main.forgive(scope_key)
