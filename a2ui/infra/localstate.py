"""What both backends of the shared state use, and the process-local one.

``LocalBackend`` holds, in dicts of this process, what ``a2ui.infra.redisstate.RedisBackend``
keeps in Redis (the embedded default: one process, the in-memory channel layer); the TTLs of
the Redis keys, the epochs a counter is created under and the key of a session's registry of
clients are the same for both. ``a2ui.infra.shared`` chooses the backend.
"""

import itertools
import os
import time

SEQ_TTL = 7 * 24 * 3600
LIVE_TTL = 300


_epoch_prefix = os.urandom(6).hex()
_epoch_counter = itertools.count(1)


def new_epoch():
    """A token no other counter creation has used (process-random prefix, then a counter)."""
    return f"{_epoch_prefix}{next(_epoch_counter):x}"


def clients_key(session_hex):
    """The session's registry of attached clients: the holder ``("session", hex)`` of the
    ``"client"`` leases (``a2ui.infra.leases``; ``a2ui.sessions.clients`` registers them)."""
    return f"a2ui:cap:client:session:{session_hex}"


class LocalBackend:
    """Process-local stand-ins for the Redis keys; nothing is ever lost, one epoch."""

    epoch = "local"

    def __init__(self):
        self.seq = {}
        self.windows = {}
        self.sessions = {}
        self.sockets = {}
        self.caps = {}  # a2ui.infra.leases: {scope key: {member: lapses at or None}}
        self.strikes = {}  # lockouts: {scope key: [failures, window ends at]}
        self.locks = {}  # lockouts: {scope key: ends at}

    def clear(self):
        self.caps.clear()
        self.sockets.clear()
        self.seq.clear()
        self.windows.clear()
        self.sessions.clear()
        self.strikes.clear()
        self.locks.clear()

    async def next_seq_and_sockets(self, session_id, sockets, clients=False):
        value = self.seq.get(session_id, 0) + 1
        self.seq[session_id] = value
        out = value, self.epoch, (self.sockets.get(session_id, 0) if sockets else None)
        if clients:
            return *out, list(self.caps.get(clients_key(session_id), ()))
        return out

    async def cached_session_and_next_seq(self, session_id, sockets, clients=False):
        return (await self.cached_value(session_id),
                *await self.next_seq_and_sockets(session_id, sockets, clients))

    async def current_seq(self, session_id):
        return self.seq.get(session_id, 0), self.epoch

    async def sequence_states(self, session_ids):
        return [(self.seq.get(s, 0), self.epoch) for s in session_ids]

    async def hit_rate_limit(self, scope_key, limit, window_seconds):
        window = int(time.time() // window_seconds)
        bucket = (scope_key, window)
        count = self.windows.get(bucket, 0) + 1
        self.windows[bucket] = count
        if len(self.windows) > 10000:
            for old in [b for b in self.windows if b[1] < window]:
                del self.windows[old]
        return count > limit

    async def strike(self, scope_key, limit, window_seconds, lockout_seconds):
        now = time.monotonic()
        if len(self.strikes) + len(self.locks) > 10000:
            self.strikes = {k: v for k, v in self.strikes.items() if v[1] > now}
            self.locks = {k: v for k, v in self.locks.items() if v > now}
        entry = self.strikes.get(scope_key)
        if entry is None or entry[1] <= now:
            entry = self.strikes[scope_key] = [0, now + window_seconds]
        entry[0] += 1
        if entry[0] < limit:
            return False
        del self.strikes[scope_key]
        self.locks[scope_key] = now + lockout_seconds
        return True

    async def locked_for(self, scope_keys):
        now = time.monotonic()
        return max([0.0, *(self.locks.get(k, now) - now for k in scope_keys)])

    async def forgive(self, scope_key):
        self.strikes.pop(scope_key, None)

    async def socket_opened(self, session_hex, fresh):
        self.sockets[session_hex] = self.sockets.get(session_hex, 0) + 1
        return self.epoch

    async def socket_closed(self, session_hex, epoch):
        value = self.sockets.get(session_hex, 0) - 1
        if value <= 0:
            self.sockets.pop(session_hex, None)
        else:
            self.sockets[session_hex] = value
        return value

    async def socket_count(self, session_hex):
        return self.sockets.get(session_hex, 0)

    async def cache_session(self, session_id, value):
        self.sessions[session_id] = (value, time.monotonic() + LIVE_TTL)

    async def cached_value(self, session_id):
        entry = self.sessions.get(session_id)
        if entry is None or entry[1] < time.monotonic():
            return None
        return entry[0]

    async def forget_session(self, session_id):
        self.sessions.pop(session_id, None)

    def redis_client(self):
        return None
