"""State several Daphne processes share without touching the database on each message.

One backend, chosen once from the settings (and again when a test changes them):

* ``A2UI['REDIS_URL']`` set: ``a2ui.infra.redisstate.RedisBackend`` (with
  ``A2UI['REDIS_SHARDS']``, ``a2ui.infra.redisstate.sharded.ShardedBackend``: each session's
  state on its shard). Sequence numbers,
  open-socket counts, rate-limit windows and the live-session cache are Redis keys, reached
  without a thread hop through one pipelined connection per event loop (``redisline``).
* not set: ``LocalBackend``, process-local dicts, correct only for one process (the embedded
  default with the in-memory channel layer).

Redis may restart, fail over or lose keys at any moment. What it holds is either rebuildable or
detectably lost: each session's sequence counter carries an *epoch*, a token chosen when the
counter is created, so a counter that starts again from zero comes with a new epoch; a consumer
that sees a new epoch resyncs from the database. The session's open-socket count lives beside
it and is trusted for direct delivery only while its epoch is the one the session's first
socket created (``sockets`` is None otherwise: publish). Sockets re-count themselves under a new
epoch, so the count that decides when a session is detached is rebuilt.
"""

from django.core.signals import setting_changed

from a2ui.conf import a2ui_settings
from a2ui.infra import redisstate
from a2ui.infra.localstate import (  # noqa: F401 - part of this module's API
    LIVE_TTL,
    SEQ_TTL,
    LocalBackend,
    clients_key,
    new_epoch,
)

local = LocalBackend()
_chosen = []  # [backend] once chosen


def backend():
    """The backend for the current settings (Redis when ``A2UI['REDIS_URL']`` is set)."""
    if _chosen:
        return _chosen[0]
    url = a2ui_settings.REDIS_URL
    if url and a2ui_settings.REDIS_SHARDS:
        from a2ui.infra.redisstate.sharded import ShardedBackend

        chosen = ShardedBackend(url, a2ui_settings.REDIS_SHARDS)
    elif url:
        chosen = redisstate.RedisBackend(url)
    else:
        chosen = local
    _chosen.append(chosen)
    return chosen


def _settings_changed(*, setting, **kwargs):
    if setting == "A2UI":
        _chosen.clear()


setting_changed.connect(_settings_changed)

#: A command (or a wait for a pooled connection) that takes longer fails.
REDIS_TIMEOUT_SECONDS = redisstate.REDIS_TIMEOUT_SECONDS


def hot_line(url):
    """The running loop's pipelined connection of the push path (``redisline.Line``) when
    ``url`` is ``A2UI['REDIS_URL']`` and it takes one, else None: the channel layer publishes
    through it (``a2ui.layer``), so a push's PUBLISH shares the write of its sequence number."""
    chosen = backend()
    if isinstance(chosen, redisstate.RedisBackend):
        return chosen.line() if chosen.url == url else None
    line_for = getattr(chosen, "line_for", None)  # several servers (A2UI['REDIS_SHARDS'])
    return line_for(url) if line_for is not None else None


def redis_client():
    """The redis-py client of the running event loop, or None when Redis is not configured."""
    return backend().redis_client()


# Sequence numbers ------------------------------------------------------------------------------



async def next_seq(session_id):
    """The next sequence number of a session's push stream (1, 2, ...)."""
    return (await backend().next_seq_and_sockets(session_id, False))[0]


async def next_seq_and_sockets(session_id, sockets=True, clients=False):
    """``(seq, epoch, open-socket count or None)`` of the next push, in one Redis round trip.

    The count is read only when asked (``sockets``: direct delivery needs it), and is None when
    it cannot be trusted (lost with the counter since the session's first socket opened).
    ``clients``: a fourth item, the session's attached clients as registered now (the live
    members of :func:`clients_key`, read in the same round trip; ``a2ui.sessions.clients``).
    """
    return await backend().next_seq_and_sockets(session_id, sockets, clients)


async def cached_session_and_next_seq(session_id, sockets=False, clients=False):
    """``(cached_session(session_id), *next_seq_and_sockets(session_id, sockets, clients))``,
    one trip."""
    value, *rest = await backend().cached_session_and_next_seq(session_id, sockets, clients)
    return (_owner(value) if value is not None else None), *rest


async def current_seq(session_id):
    """``(newest sequence number, epoch)``; creates the epoch if the counter has none yet."""
    return await backend().current_seq(session_id)


async def sequence_states(session_ids):
    """``[(newest sequence number, epoch or None)]`` for each session, in one round trip
    (one per server with ``A2UI['REDIS_SHARDS']``: None for a session whose server failed,
    while another answered)."""
    return await backend().sequence_states(session_ids)


async def sequence_clock():
    """``(epoch, {bucket: count})``: the sequence clock, whose bucket of a session counts the
    sequence numbers taken in the bucket's sessions (``clock_bucket``). A bucket unchanged
    since the last reading under the same epoch: no number was taken in its sessions since.
    A new epoch: the clock was lost (with whatever else Redis lost), nothing can be told.
    Redis only (``seqwatch``)."""
    return await backend().sequence_clock()


def clock_bucket(session_hex):
    """The session's bucket of the sequence clock."""
    return backend().clock_bucket(session_hex)


# Rate limits -----------------------------------------------------------------------------------


async def hit_rate_limit(scope_key, limit, window_seconds=60):
    """Count one request in the current fixed window; True when it is over ``limit``."""
    return await backend().hit_rate_limit(scope_key, limit, window_seconds)


async def strike(scope_key, limit, window_seconds, lockout_seconds):
    """Count one failure of ``scope_key`` (a login's account or address) in a window of
    ``window_seconds`` from its first; the one that reaches ``limit`` locks the key for
    ``lockout_seconds`` (True: this call locked it) and the count starts again."""
    return await backend().strike(scope_key, limit, window_seconds, lockout_seconds)


async def locked_for(scope_keys):
    """Seconds until the last lock of ``scope_keys`` ends (0.0: none is locked)."""
    return await backend().locked_for(list(scope_keys))


async def forgive(scope_key):
    """Forget the failures counted for ``scope_key`` (a successful login)."""
    await backend().forgive(scope_key)


# Open sockets per session -----------------------------------------------------------------------


async def socket_opened(session_hex, fresh=False):
    """Count one more open socket of the session; return the epoch it was counted under.

    ``fresh``: the session was just created, so no socket of it can be open elsewhere and the
    count may be trusted for direct delivery. A socket re-counts itself (``fresh`` False) when
    it sees a new epoch: the count it was in was lost.
    """
    return await backend().socket_opened(session_hex, fresh)


async def socket_closed(session_hex, epoch=None):
    """Uncount a socket counted under ``epoch``; the new count, or None when that count is gone.

    ``epoch`` None: whatever epoch is current (for callers that did not keep it; wrong by one
    after a loss the socket did not count itself again in).

    A process that dies without its disconnects leaves the count high, and a count lost with
    Redis is unknown; the session's client registry then says whether a client shows it
    (``a2ui.sessions.ghosts`` detaches it when none does).
    """
    return await backend().socket_closed(session_hex, epoch)


async def socket_count(session_hex):
    """The session's open sockets as counted now (never created by asking), or None if unknown
    (no count kept: never opened, or lost with Redis)."""
    return await backend().socket_count(session_hex)


# Live-session cache ----------------------------------------------------------------------------


async def cache_session(session_id, agent_id, user_id):
    """Remember that a session is live, for the per-message owner check."""
    await backend().cache_session(session_id, f"{agent_id or ''}:{user_id or ''}")


async def cached_session(session_id):
    """(agent_id, user_id) strings for a live session, or None when unknown (ask the DB)."""
    value = await backend().cached_value(session_id)
    return _owner(value) if value is not None else None


def _owner(value):
    """``(agent_id, user_id)`` from a live-session cache value ``"agent:user"``."""
    agent_id, _, user_id = value.partition(":")
    return agent_id, user_id


async def forget_session(session_id):
    await backend().forget_session(session_id)
