"""Which socket of an agent gets a session's events: one, so a second agent process does not
show the person the same prompt twice.

Session events (``session.opened`` / ``resumed`` / ``closed``, ``user.cancel``, a form's
``user.respond``, ``consent.changed``, v0.9 actions, AG-UI chat messages and actions) travel to
the agent's group: every socket
of the agent receives them. A socket in the default mode ``"one"`` passes an event on only if it
*holds* the event's session: the first such socket that sees an event of the session takes it
(sticky), and keeps it while it lives; when it closes (or its process dies and its liveness
lapses, ``LIVE_TTL`` seconds), the next socket that sees an event of the session takes it over.
A socket opened with ``?events=all`` is an observer: it gets every event and holds nothing.

Pushes, answers to the socket's own requests (``reply_channel``) and ``a2ui.pending`` are not
routed here: any socket of the agent may push to any session.

With Redis (``A2UI['REDIS_URL']``) the holders are keys, shared by every process:

* ``a2ui:ar:<session hex>``: the channel name of the socket holding the session.
* ``a2ui:al:<channel name>``: "this socket is open", refreshed every ``HEARTBEAT_SECONDS`` by
  its process, deleted when it closes.

Without Redis (one process, the in-memory channel layer) both are dicts of this process.
"""

import asyncio
import logging
import time
import weakref
from urllib.parse import parse_qs

from ..core.errors import DomainError, Fault
from . import shared

log = logging.getLogger(__name__)

ONE, ALL = "one", "all"
MODES = (ONE, ALL)
HEARTBEAT_SECONDS = 5
LIVE_TTL = 15
HOLD_TTL = 24 * 3600  # refreshed by every event the holder takes
CLOSED_TTL = 60  # a closed session stays held so a slower socket does not take its last event
ROUTED = frozenset({"session.opened", "session.resumed", "session.closed", "user.cancel",
                    "user.respond", "consent.changed", "a2ui.v09",
                    "user.message", "user.action",  # AG-UI clients (seed 003)
                    "agui.run_started", "agui.run_ended"})  # AG-UI 1.0 runs (services.runs)

# KEYS[1] the session's holder key; ARGV: this channel, the liveness key prefix, TTL.
# Returns the holder after the call: this channel when it held or just took the session, else
# the other open socket that holds it.
TAKE_SCRIPT = """
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] and redis.call('EXISTS', ARGV[2] .. holder) == 1 then
  return holder
end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[3])
return ARGV[1]
"""


def holder_key(session_hex):
    return f"a2ui:ar:{session_hex}"


def live_key(channel):
    return f"a2ui:al:{channel}"


def mode_from_query(query_string):
    """The socket's mode from its URL's ``events`` parameter (default ``"one"``)."""
    if isinstance(query_string, bytes):
        query_string = query_string.decode("latin-1")
    values = parse_qs(query_string or "", keep_blank_values=True).get("events", [ONE])
    if len(values) != 1 or values[0] not in MODES:
        raise DomainError(Fault.INVALID_INPUT, "events must be 'one' or 'all'",
                            data={"path": "events", "allowed": list(MODES)})
    return values[0]


class _Local:
    """Holders and open sockets of this process (no Redis)."""

    def __init__(self):
        self.holders = {}  # session hex -> (channel, expires at)

    def take(self, session_hex, channel, ttl, open_channels):
        now = time.monotonic()
        holder = self.holders.get(session_hex)
        if (holder is not None and holder[0] != channel and holder[1] > now
                and holder[0] in open_channels):
            return False
        self.holders[session_hex] = (channel, now + ttl)
        if len(self.holders) > 10000:
            for key in [k for k, (c, t) in self.holders.items()
                        if t <= now or c not in open_channels]:
                del self.holders[key]
        return True


_local = _Local()
_open = {}  # channel -> True: the "one" sockets open in this process
_heartbeats = weakref.WeakKeyDictionary()  # event loop -> task
_asking = {}  # (event loop, session hex) -> future of the holder: one round trip per process


def _redis():
    backend = shared.backend()
    return backend if hasattr(backend, "execute") else None


async def ajoin(channel, mode):
    """A socket opened: in mode "one" it may hold sessions from now on."""
    if mode != ONE:
        return
    _open[channel] = True
    redis = _redis()
    if redis is not None:
        await redis.execute(("SET", live_key(channel), "1", "EX", LIVE_TTL))
        loop = asyncio.get_running_loop()
        task = _heartbeats.get(loop)
        if task is None or task.done():
            _heartbeats[loop] = loop.create_task(_heartbeat())


async def aleave(channel):
    """A socket closed: the sessions it held go to the next socket that sees their events."""
    if _open.pop(channel, None) is None:
        return
    redis = _redis()
    if redis is not None:
        try:
            await redis.execute(("DEL", live_key(channel)))
        except Exception:  # Redis away: the key lapses after LIVE_TTL anyway
            log.warning("a2ui: could not drop the liveness of %s", channel, exc_info=True)


async def _heartbeat():
    while True:
        await asyncio.sleep(HEARTBEAT_SECONDS)
        channels = list(_open)
        redis = _redis()
        if not channels or redis is None:
            continue
        try:
            await redis.execute(*[("SET", live_key(c), "1", "EX", LIVE_TTL) for c in channels])
        except Exception:
            log.warning("a2ui: agent socket heartbeat failed", exc_info=True)


async def atake(channel, mode, event):
    """Whether the socket ``channel`` passes this agent event on (see the module's docstring)."""
    if mode == ALL or event.get("method") not in ROUTED:
        return True
    session_id = (event.get("params") or {}).get("session_id")
    if not session_id:
        return True
    session_hex = str(session_id).replace("-", "")
    ttl = CLOSED_TTL if event["method"] == "session.closed" else HOLD_TTL
    redis = _redis()
    if redis is None:
        return _local.take(session_hex, channel, ttl, _open)
    # Every socket of the agent in this process gets the event at once: the first asks Redis
    # (and takes the session if nobody holds it), the others wait for its answer.
    key = (asyncio.get_running_loop(), session_hex)
    asking = _asking.get(key)
    if asking is not None:
        holder = await asyncio.shield(asking)
        return holder is None or holder == channel
    asking = _asking[key] = asyncio.get_running_loop().create_future()
    holder = None
    try:
        holder, = await redis.execute(
            ("EVAL", TAKE_SCRIPT, 1, holder_key(session_hex), channel, live_key(""), ttl)
        )
    except Exception:  # Redis away: a duplicate beats a lost event
        log.warning("a2ui: could not route an agent event; passing it on", exc_info=True)
    finally:
        del _asking[key]
        asking.set_result(holder)
    return holder is None or holder == channel
