"""Which Redis server holds a session: rendezvous hashing over named shards, and the session a
Redis key belongs to. Sans-I/O: ``a2ui.infra.redisstate.sharded`` and ``a2ui.layer`` route with it.

A session's shard is the one whose name scores highest for it (rendezvous, or highest random
weight, hashing: splitmix64 of the CRC-32s of the name and of the session's id). So every process given the same
names routes a session the same way whatever their order, and adding a shard moves only the
sessions the new one wins (about 1 in N+1) while removing one moves only its own. A shard is
named by the project (``A2UI['REDIS_SHARDS']`` as a dict) or by its URL without credentials: a
password change does not move sessions, a new host does.

Session-keyed Redis keys (``SESSION_KEYS``) carry the session's id where the patterns below say;
every other ``a2ui:`` key is *global* (rate limits, caps of credentials and addresses, agents'
presence and routes: one server, ``A2UI['REDIS_URL']``), except the *per-server* keys, which
each server keeps for its own keys (the sequence clock, the replication history, the leases'
start).
"""

import re
import zlib
from urllib.parse import urlsplit, urlunsplit

#: Keys of one session: ``a2ui:<kind>:<session hex>...``.
SESSION_KEYS = re.compile(
    r"a2ui:(?:ss|live|rlog|ratt|raway|run|cap:client:session):([0-9a-f]{32})(?::|$)")
#: Keys each server keeps for the keys it holds.
PER_SERVER = frozenset({"a2ui:seqclock", "a2ui:history", "a2ui:lease:since"})

_KEYLESS = frozenset({"PING", "INFO", "SCAN", "TIME", "SUBSCRIBE", "UNSUBSCRIBE", "PUBLISH",
                      "CLIENT", "SELECT", "AUTH", "HELLO", "FLUSHDB", "DBSIZE", "ROLE"})
_ALL_KEYS = frozenset({"DEL", "UNLINK", "EXISTS", "MGET", "TOUCH", "WATCH"})


def shard_name(url):
    """A shard's name from its URL: the URL without user name and password."""
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def keys_of(command):
    """The keys a Redis command (a tuple) names, as our code writes them."""
    name = str(command[0]).upper()
    if name in _KEYLESS:
        return ()
    if name in ("EVAL", "EVALSHA"):
        return command[3:3 + int(command[2])]
    if name in _ALL_KEYS:
        return command[1:]
    return command[1:2]


def session_of(key):
    """The session hex a session-keyed key belongs to, else None."""
    found = SESSION_KEYS.match(key)
    return found.group(1) if found else None


_M64 = (1 << 64) - 1


def _mix(x):
    """splitmix64's finalizer: every bit of the score depends on every bit of ``x``."""
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _M64
    return x ^ (x >> 31)


class ShardMap:
    """Rendezvous hashing of session ids over shard ``names`` (their order does not matter)."""

    def __init__(self, names):
        names = list(names)
        if not names or len(set(names)) != len(names):
            raise ValueError("shards need distinct names")
        self.names = names
        self._seeds = [zlib.crc32(name.encode()) for name in names]
        self._cache = {}

    def __len__(self):
        return len(self.names)

    def index(self, session_hex):
        """The position in ``names`` of the session's shard."""
        found = self._cache.get(session_hex)
        if found is not None:
            return found
        key = zlib.crc32(session_hex.encode()) << 32
        best, found = -1, 0
        for i, seed in enumerate(self._seeds):
            score = _mix(key | seed)
            if score > best:
                best, found = score, i
        if len(self._cache) >= 65536:
            self._cache.clear()
        self._cache[session_hex] = found
        return found

    def target(self, commands):
        """``(shard index or None, has global keys)`` of a batch of commands: None when it
        names no session. A batch naming two sessions of different shards, or a session's key
        beside a global key, cannot run on one server: ValueError."""
        shard, wide = None, False
        for command in commands:
            for key in keys_of(command):
                if not isinstance(key, str) or key in PER_SERVER:
                    continue
                session = session_of(key)
                if session is None:
                    wide = True
                    continue
                index = self.index(session)
                if shard is None:
                    shard = index
                elif index != shard:
                    raise ValueError("one batch of Redis commands for two shards")
        return shard, wide
