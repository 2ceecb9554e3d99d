"""State several Daphne processes share without touching the database on each message.

With ``A2UI['REDIS_URL']`` set, sequence numbers, rate-limit windows, open-socket counts and the
live-session cache are Redis keys, reached without a thread hop: the per-message commands through
``a2ui.services.redisline`` (one pipelined connection per event loop, a fraction of redis-py's
CPU), the rest through ``redis.asyncio``. Without it, the same API is backed by process-local
dicts, which is correct only for one process: the embedded default with the in-memory channel
layer.
"""

import asyncio
import time
import types
import weakref

from ..conf import a2ui_settings
from . import redisline

_clients = weakref.WeakKeyDictionary()  # event loop -> redis client (pools are loop-bound)
_lines = weakref.WeakKeyDictionary()  # event loop -> redisline.Line, or None: URL not supported
REDIS_TIMEOUT_SECONDS = 15


def redis_client():
    """The Redis client for the running event loop, or None when Redis is not configured."""
    url = a2ui_settings.REDIS_URL
    if not url:
        return None
    import redis.asyncio as aioredis

    loop = asyncio.get_running_loop()
    client = _clients.get(loop)
    if client is None:
        client = aioredis.Redis.from_url(url, decode_responses=True)
        _clients[loop] = client
        _close_with_loop(loop)
    return client


_closing = weakref.WeakSet()  # loops whose close() also closes their connections


def _close_with_loop(loop):
    """Close the loop's Redis connections when the loop is closed.

    ``async_to_sync`` outside a server (a sync view under WSGI, a worker, a command) runs each
    call in a new loop; without this every call would leave its connections open until garbage
    collection. channels-redis wraps ``loop.close`` the same way.
    """
    if loop in _closing:
        return
    _closing.add(loop)
    original = loop.close

    def close(self, *args, **kwargs):
        line, client = _lines.pop(loop, None), _clients.pop(loop, None)
        if not loop.is_running():
            try:
                if line is not None:
                    line.close()
                if client is not None:
                    loop.run_until_complete(client.aclose())
                loop.run_until_complete(asyncio.sleep(0))  # let the transports finish closing
            except Exception:  # closing anyway: a broken connection must not stop it
                pass
        self.close = original
        return original(*args, **kwargs)

    try:
        loop.close = types.MethodType(close, loop)
    except AttributeError:  # a loop class without instance attributes: GC closes them instead
        pass


async def _pipeline(*commands):
    """Run ``commands`` (tuples) in one round trip; their replies, decoded, as a list."""
    loop = asyncio.get_running_loop()
    line = _lines.get(loop, False)
    if line is False:
        try:
            line = redisline.Line(a2ui_settings.REDIS_URL, REDIS_TIMEOUT_SECONDS)
        except ValueError:  # e.g. unix:// sockets: redis-py handles those
            line = None
        _lines[loop] = line
        _close_with_loop(loop)
    if line is not None:
        return await line.execute(*commands)
    async with redis_client().pipeline(transaction=False) as pipe:
        for command in commands:
            pipe.execute_command(*command)
        return await pipe.execute()


class _Local:
    """Process-local stand-ins for the Redis keys."""

    def __init__(self):
        self.seq = {}
        self.windows = {}
        self.sessions = {}
        self.sockets = {}

    def clear(self):
        self.sockets.clear()
        self.seq.clear()
        self.windows.clear()
        self.sessions.clear()


local = _Local()


def _key(*parts):
    return "a2ui:" + ":".join(str(p) for p in parts)


# Sequence numbers ------------------------------------------------------------------------------

SEQ_TTL = 7 * 24 * 3600


async def next_seq(session_id):
    """The next sequence number of a session's push stream (1, 2, ...)."""
    return (await next_seq_and_sockets(session_id, sockets=False))[0]


def _seq_commands(session_id, sockets):
    """INCR and EXPIRE of the session's sequence number, then its socket count if asked."""
    key = _key("seq", session_id)
    commands = [("INCR", key), ("EXPIRE", key, SEQ_TTL)]
    if sockets:
        commands.append(("GET", _key("socks", session_id)))
    return commands


def _seq_replies(values, sockets):
    return int(values[0]), (int(values[2] or 0) if sockets else None)


async def next_seq_and_sockets(session_id, sockets=True):
    """``(next_seq(session_id), open-socket count or None)`` in one Redis round trip.

    The count is read only when asked (``sockets``): direct delivery needs it.
    """
    if not a2ui_settings.REDIS_URL:
        value = local.seq.get(session_id, 0) + 1
        local.seq[session_id] = value
        return value, (local.sockets.get(session_id, 0) if sockets else None)
    return _seq_replies(await _pipeline(*_seq_commands(session_id, sockets)), sockets)


async def cached_session_and_next_seq(session_id, sockets=False):
    """``(cached_session(session_id), *next_seq_and_sockets(session_id, sockets))``, one trip."""
    if not a2ui_settings.REDIS_URL:
        return (await cached_session(session_id), *await next_seq_and_sockets(session_id, sockets))
    values = await _pipeline(
        ("GET", _key("live", session_id)), *_seq_commands(session_id, sockets)
    )
    live = values[0]
    return (_owner(live) if live is not None else None), *_seq_replies(values[1:], sockets)


async def current_seq(session_id):
    client = redis_client()
    if client is None:
        return local.seq.get(session_id, 0)
    value = await client.get(_key("seq", session_id))
    return int(value or 0)


# Rate limits -----------------------------------------------------------------------------------


async def hit_rate_limit(scope_key, limit, window_seconds=60):
    """Count one request in the current fixed window; True when it is over ``limit``."""
    window = int(time.time() // window_seconds)
    if not a2ui_settings.REDIS_URL:
        bucket = (scope_key, window)
        count = local.windows.get(bucket, 0) + 1
        local.windows[bucket] = count
        if len(local.windows) > 10000:
            for old in [b for b in local.windows if b[1] < window]:
                del local.windows[old]
        return count > limit
    key = _key("rl", scope_key, window)
    count, _ = await _pipeline(("INCR", key), ("EXPIRE", key, window_seconds * 2))
    return int(count) > limit


# Open sockets per session -----------------------------------------------------------------------


async def count_socket(session_hex, delta):
    """Add ``delta`` to the session's open-socket count and return the new count.

    A process that dies without its disconnects leaves the count high; such a session is then
    closed by the inactivity timeout instead of the resume window.
    """
    if not a2ui_settings.REDIS_URL:
        value = local.sockets.get(session_hex, 0) + delta
        if value <= 0:
            local.sockets.pop(session_hex, None)
        else:
            local.sockets[session_hex] = value
        return value
    key = _key("socks", session_hex)
    value, _ = await _pipeline(("INCRBY", key, delta), ("EXPIRE", key, 2 * 24 * 3600))
    return int(value)


# Live-session cache ----------------------------------------------------------------------------

LIVE_TTL = 300


async def cache_session(session_id, agent_id, user_id):
    """Remember that a session is live, for the per-message owner check."""
    client = redis_client()
    value = f"{agent_id or ''}:{user_id or ''}"
    if client is None:
        local.sessions[session_id] = (value, time.monotonic() + LIVE_TTL)
        return
    await client.set(_key("live", session_id), value, ex=LIVE_TTL)


async def cached_session(session_id):
    """(agent_id, user_id) strings for a live session, or None when unknown (ask the DB)."""
    client = redis_client()
    if client is None:
        entry = local.sessions.get(session_id)
        if entry is None or entry[1] < time.monotonic():
            return None
        value = entry[0]
    else:
        value = await client.get(_key("live", session_id))
        if value is None:
            return None
    return _owner(value)


def _owner(value):
    """``(agent_id, user_id)`` from a live-session cache value ``"agent:user"``."""
    agent_id, _, user_id = value.partition(":")
    return agent_id, user_id


async def forget_session(session_id):
    client = redis_client()
    if client is None:
        local.sessions.pop(session_id, None)
        return
    await client.delete(_key("live", session_id))
