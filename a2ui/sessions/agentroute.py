"""Which socket of an agent gets a session's events: one, so a second agent process does not
show the person the same prompt twice.

Session events (``session.opened`` / ``resumed`` / ``closed``, ``user.cancel``, a form's
``user.respond``, ``consent.changed``, v0.9 actions, AG-UI chat messages and actions) travel to
the agent's group. A socket in the default mode ``"one"`` gets an event only if it *holds* the
event's session: the first socket handed an event of the session takes it (sticky), and keeps
it while it lives; when it closes (or its process dies and its liveness lapses, ``LIVE_TTL``
seconds), the next socket handed an event of the session takes it over. A socket opened with
``?events=all`` is an observer: it gets every event and holds nothing.

An agent's sockets do not join the agent's group themselves: each process has one *relay* per
agent (:func:`asubscribe`), the group's only member there, which decides once per event which
of the process's sockets gets it (a session nobody holds goes to the process's sockets in turn)
and hands it over. With the sockets as members, an event woke every socket of the agent in
every process, to be dropped by all but one: 300 sockets of one agent made each
``session.opened`` 300 wake-ups (docs/performance.md). Python listeners (``a2ui.agents``) are
still members themselves and decide with :func:`atake`; MCP listen streams are members that
only watch (they hold nothing).

Pushes, answers to the socket's own requests (``reply_channel``) and ``a2ui.pending`` are not
routed here: any socket of the agent may push to any session.

Which events are routed: every agent event about one session (its params carry a
``session_id``); the others go to every socket.

With Redis (``A2UI['REDIS_URL']``) the holder of a session is a key shared by every process,
``a2ui:ar:<session hex>`` (the channel name of the socket holding it). Whether that socket is
still open is its agent's presence (``a2ui.sessions.presence``: every agent socket and Python
listener is a member of its agent's presence while it lives, refreshed by its process): one
answer to "is it alive" for both. Without Redis (one process, the in-memory channel layer)
the holders are a dict of this process.
"""

import asyncio
import logging
import time
import weakref
from typing import Final
from urllib.parse import parse_qs

from channels.layers import get_channel_layer

from a2ui.core.errors import DomainError, Fault
from a2ui.infra import outages, shared
from a2ui.sessions import presence

log = logging.getLogger(__name__)

ONE: Final = "one"
ALL: Final = "all"
MODES = (ONE, ALL)
HOLD_TTL = 24 * 3600  # refreshed by every event the holder takes
CLOSED_TTL = 60  # a closed session stays held so a slower socket does not take its last event
CLOSED = "session.closed"
EVENT_TYPE = "a2ui.agent_event"  # what the agent's group carries (groups.agent_event)
AGENT_GROUP_PREFIX = "a2ui.a."  # groups.agent_group

# KEYS: the session's holder key, the agent's presence (a2ui.sessions.presence); ARGV: this
# channel, TTL. Returns the holder after the call: this channel when it held or just took the
# session, else the other open socket that holds it (a live member of the agent's presence).
TAKE_SCRIPT = """
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then
  local t = redis.call('TIME')
  local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
  local lapses = redis.call('ZSCORE', KEYS[2], holder)
  if lapses and tonumber(lapses) > now then return holder end
end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
return ARGV[1]
"""


def holder_key(session_hex):
    return f"a2ui:ar:{session_hex}"


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

    def route(self, session_hex, channel, ttl, open_channels):
        """The session's holder after ``channel`` asked for it (as ``TAKE_SCRIPT``)."""
        now = time.monotonic()
        holder = self.holders.get(session_hex)
        if (holder is not None and holder[0] != channel and holder[1] > now
                and holder[0] in open_channels):
            return holder[0]
        self.holders[session_hex] = (channel, now + ttl)
        if len(self.holders) > 10000:
            for key in [k for k, (c, t) in self.holders.items()
                        if t <= now or c not in open_channels]:
                del self.holders[key]
        return channel


_local = _Local()
_open = {}  # channel -> True: the "one" sockets open in this process
_asking = {}  # (event loop, session hex) -> future of the holder: one round trip per process


def _redis():
    backend = shared.backend()
    return backend if hasattr(backend, "execute") else None


async def ajoin(channel, mode):
    """A socket opened: in mode "one" it may hold sessions from now on (it is alive while it
    is a member of its agent's presence)."""
    if mode == ONE:
        _open[channel] = True


async def aleave(channel):
    """A socket closed: the sessions it held go to the next socket that sees their events."""
    _open.pop(channel, None)


def _routing(event):
    """``(session hex, hold TTL)`` of an event routed to one socket, else ``(None, None)``."""
    params = event.get("params")
    session_id = params.get("session_id") if isinstance(params, dict) else None
    if not session_id:
        return None, None
    ttl = CLOSED_TTL if event.get("method") == CLOSED else HOLD_TTL
    return str(session_id).replace("-", ""), ttl


async def atake(agent_id, channel, mode, event):
    """Whether the socket ``channel`` of agent ``agent_id`` passes this agent event on (see the
    module's docstring)."""
    if mode == ALL:
        return True
    session_hex, ttl = _routing(event)
    if session_hex is None:
        return True
    holder = await _aroute(agent_id, session_hex, channel, ttl)
    return holder is None or holder == channel


async def _aroute(agent_id, session_hex, channel, ttl):
    """The channel holding the session once ``channel`` asked for it; None if Redis is away."""
    redis = _redis()
    if redis is None:
        return _local.route(session_hex, channel, ttl, _open)
    # Several askers of this process at once (listeners, relays of other event loops): the
    # first asks Redis (and takes the session if nobody holds it), the others wait for it.
    key = (asyncio.get_running_loop(), session_hex)
    asking = _asking.get(key)
    if asking is not None:
        return await asyncio.shield(asking)
    asking = _asking[key] = asyncio.get_running_loop().create_future()
    holder = None
    try:
        holder, = await redis.execute(
            ("EVAL", TAKE_SCRIPT, 2, holder_key(session_hex), presence.agent_key(agent_id),
             channel, ttl)
        )
    except Exception:  # Redis away: a duplicate beats a lost event
        outages.warning(log, "agent event routing",
                        "a2ui: could not route an agent event; passing it on")
    finally:
        del _asking[key]
        asking.set_result(holder)
    return holder


# Relays ----------------------------------------------------------------------------------------

_relays = weakref.WeakKeyDictionary()  # event loop -> {group: _Relay}


async def asubscribe(group, channel, mode, deliver):
    """Socket ``channel`` (mode ``"one"`` or ``"all"``) gets the events of the agent's ``group``
    that are its to get: ``await deliver(event)`` for each, in order."""
    await ajoin(channel, mode)
    relays = _relays.setdefault(asyncio.get_running_loop(), {})
    relay = relays.get(group)
    if relay is None:
        relay = relays[group] = _Relay(group)
    relay.members[channel] = (mode, deliver)
    await relay.start()


async def aunsubscribe(group, channel):
    """The socket closed: no more events; the sessions it held go to the next socket."""
    await aleave(channel)
    relay = _relays.get(asyncio.get_running_loop(), {}).get(group)
    if relay is not None and relay.members.pop(channel, None) is not None:
        await relay.stop_if_unused()


class _Relay:
    """One agent's group in this process (and event loop), for the agent's sockets here."""

    REFRESH_SECONDS = 3600  # channel layers forget group members after a day (group_expiry)

    def __init__(self, group):
        self.group = group
        self.agent_id = group.removeprefix(AGENT_GROUP_PREFIX)
        self.members = {}  # channel -> (mode, deliver)
        self.channel = None
        self.tasks = ()
        self.turn = 0  # the next candidate for a session nobody holds (round robin)
        self.lock = asyncio.Lock()

    async def start(self):
        async with self.lock:
            if self.channel is not None or not self.members:
                return
            layer = get_channel_layer()
            channel = await layer.new_channel()
            await layer.group_add(self.group, channel)
            self.channel = channel
            loop = asyncio.get_running_loop()
            self.tasks = (loop.create_task(self._receive(layer, channel)),
                          loop.create_task(self._refresh(layer, channel)))

    async def stop_if_unused(self):
        async with self.lock:
            if self.channel is None or self.members:
                return
            for task in self.tasks:
                task.cancel()
            channel, self.channel, self.tasks = self.channel, None, ()
            try:
                await get_channel_layer().group_discard(self.group, channel)
            except Exception:  # Redis away: the membership lapses with the layer's expiry
                outages.warning(log, "leaving a group", "a2ui: could not leave %s", self.group)

    async def _refresh(self, layer, channel):
        while True:
            await asyncio.sleep(self.REFRESH_SECONDS)
            try:
                await layer.group_add(self.group, channel)
            except Exception:
                outages.warning(log, "refreshing a group", "a2ui: could not refresh %s",
                                self.group)

    async def _receive(self, layer, channel):
        while True:
            try:
                event = await layer.receive(channel)
            except asyncio.CancelledError:
                raise
            except Exception:  # the layer's connection is away: it reconnects
                outages.warning(log, "agent events receive",
                                "a2ui: agent events not received; retrying")
                await asyncio.sleep(1.0)
                continue
            try:
                await self.route(event)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if not outages.report(exc, "agent event routing"):
                    log.exception("a2ui: could not route an agent event")

    async def route(self, event):
        """Hand ``event`` to the sockets here that get it."""
        if event.get("type") != EVENT_TYPE:
            return  # for another kind of member of the group (or a newer version of the app)
        targets = [deliver for mode, deliver in self.members.values() if mode == ALL]
        ones = [(channel, deliver) for channel, (mode, deliver) in self.members.items()
                if mode == ONE]
        session_hex, ttl = _routing(event)
        if ones and session_hex is None:
            targets.extend(deliver for _, deliver in ones)
        elif ones:
            candidate = ones[self.turn % len(ones)][0]
            self.turn += 1
            holder = await _aroute(self.agent_id, session_hex, candidate, ttl)
            if holder is None:  # Redis away: a duplicate beats a lost event
                targets.extend(deliver for _, deliver in ones)
            else:
                member = self.members.get(holder)  # None: a socket of another process
                if member is not None and member[0] == ONE:
                    targets.append(member[1])
        for deliver in targets:
            try:
                await deliver(event)
            except Exception as exc:  # one socket's failure is not the others'
                if not outages.report(exc, "agent event delivery"):
                    log.exception("a2ui: could not deliver an agent event")


def clear():
    """Forget this process's holders, sockets and relays (tests)."""
    _local.holders.clear()
    _open.clear()
    _relays.clear()
