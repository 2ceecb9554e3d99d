"""Agent presence across processes: whether an agent has a socket or listener open anywhere,
and the change told to its people's sockets (docs/protocol-jsonrpc.md, ``a2ui.agent_status``).

Members: the agent's WebSockets (``/ws/v4/a2ui/agent``, both ``events`` modes), its Python
listeners (``a2ui.agents.events`` / ``surface_events``) and its MCP ``subscriptions/listen``
streams: each is the agent being there to take what the person does. Pushing over MCP tools
or the REST API without a listen stream is not: nothing would take the person's answer then.

The state machine is ``a2ui.core.presence``. Without Redis (one process) it is this process's
:class:`~a2ui.core.presence.Presence`. With Redis (``A2UI['REDIS_URL']``) the same rules run as
Lua scripts on two sorted sets, shared by every process:

* ``a2ui:ap:<agent id>``: the agent's members (channel names), scored by when each lapses.
* ``a2ui:apx``: every member as ``"<agent id> <channel>"`` with the same score, the index the
  sweep reads the lapsed members from (its cost is the lapsed members, not the agents).

Every process runs one task (:func:`ensure_started`, every ``HEARTBEAT_SECONDS``): it refreshes
its own members (one round trip) and sweeps the lapsed ones of every process, so a member of a
process killed without closing lapses after ``LIVE_TTL`` seconds and the next sweep anywhere
turns its agent offline. A script reports each transition to exactly one caller, which
publishes it to the agent's presence group (``groups.presence_group``), joined by its people's
sockets: one group send per change, however many sessions the agent has.
"""

import logging
import math
import time

from a2ui.core import presence as model
from a2ui.core.presence import OFFLINE, ONLINE
from a2ui.infra import groups, jobs, outages, shared

log = logging.getLogger(__name__)

__all__ = ["ONLINE", "OFFLINE", "ajoin", "aleave", "astatus", "astatuses", "ensure_started",
           "asweep"]

HEARTBEAT_SECONDS = 5  # also the agent sockets' liveness for a2ui.sessions.agentroute
LIVE_TTL = 15
SWEEP_LIMIT = 200  # lapsed members removed per sweep (the rest at the next)
REFRESH_BATCH = 500  # members refreshed per script call (one round trip for all)
EVENT_TYPE = "a2ui.agent_presence"  # what the presence group carries (consumers' handler)
INDEX_KEY = "a2ui:apx"

# KEYS: the index; ARGV: TTL, the agents' key prefix, then agent id and member pairs. Each
# member is live until now + TTL (its agent's lapsed members dropped first); returns the agents
# that had no live member before (online now).
JOIN_SCRIPT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local ttl = tonumber(ARGV[1])
local online, seen = {}, {}
for i = 3, #ARGV - 1, 2 do
  local agent, member = ARGV[i], ARGV[i + 1]
  local key = ARGV[2] .. agent
  if not seen[agent] then  -- once per agent and call
    seen[agent] = true
    for _, m in ipairs(redis.call('ZRANGEBYSCORE', key, '-inf', now)) do
      redis.call('ZREM', key, m)
      redis.call('ZREM', KEYS[1], agent .. ' ' .. m)
    end
    if redis.call('ZCARD', key) == 0 then table.insert(online, agent) end
    redis.call('EXPIRE', key, 2 * ttl + 60)
  end
  redis.call('ZADD', key, now + ttl, member)
  redis.call('ZADD', KEYS[1], now + ttl, agent .. ' ' .. member)
end
return online
"""
# KEYS: the agent's set, the index; ARGV: agent id, member. 1: the member was there and the
# agent has no live member left (offline now).
LEAVE_SCRIPT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
redis.call('ZREM', KEYS[2], ARGV[1] .. ' ' .. ARGV[2])
if redis.call('ZREM', KEYS[1], ARGV[2]) == 0 then return 0 end
for _, m in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now)) do
  redis.call('ZREM', KEYS[1], m)
  redis.call('ZREM', KEYS[2], ARGV[1] .. ' ' .. m)
end
if redis.call('ZCARD', KEYS[1]) == 0 then return 1 end
return 0
"""
# KEYS: the index; ARGV: the agents' key prefix, the limit. The agents whose last member lapsed.
SWEEP_SCRIPT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local gone = {}
for _, m in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, ARGV[2])) do
  redis.call('ZREM', KEYS[1], m)
  local sep = string.find(m, ' ', 1, true)
  if sep then
    local agent = string.sub(m, 1, sep - 1)
    local key = ARGV[1] .. agent
    local score = redis.call('ZSCORE', key, string.sub(m, sep + 1))
    if score and tonumber(score) <= now then
      redis.call('ZREM', key, string.sub(m, sep + 1))
      if redis.call('ZCARD', key) == 0 then table.insert(gone, agent) end
    end
  end
end
return gone
"""
# KEYS: the agent's set. The number of live members.
COUNT_SCRIPT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
return redis.call('ZCOUNT', KEYS[1], '(' .. now, '+inf')
"""

_local = model.Presence()  # without Redis
_mine = {}  # member (channel name) -> agent id: this process's members
_clock = time.monotonic  # the local state machine's clock (tests move it)


def agent_key(agent_id):
    return f"a2ui:ap:{agent_id}"


def _redis():
    backend = shared.backend()
    return backend if hasattr(backend, "execute") else None


def _join_command(pairs):
    """One script for these ``(agent id, member)`` pairs: the agents it turned online."""
    args = [a for pair in pairs for a in pair]
    return ("EVAL", JOIN_SCRIPT, 1, INDEX_KEY, math.ceil(LIVE_TTL), agent_key(""), *args)


def _leave_command(agent_id, member):
    return ("EVAL", LEAVE_SCRIPT, 2, agent_key(agent_id), INDEX_KEY, agent_id, member)


async def _publish(agent_id, status):
    try:
        await groups.send_group(groups.presence_group(agent_id),
                                {"type": EVENT_TYPE, "agent_id": agent_id, "status": status})
    except Exception:
        outages.warning(log, "agent presence", "a2ui: could not tell the presence of agent %s",
                        agent_id)


async def ajoin(agent_id, member):
    """``member`` (a channel name) of the agent connected: online, told if it is the first."""
    agent_id = str(agent_id)
    _mine[member] = agent_id
    ensure_started()
    await _change(agent_id, lambda: _local.join(agent_id, member, _clock(), LIVE_TTL),
                  _join_command([(agent_id, member)]), ONLINE,
                  "a2ui: could not record agent %s present")  # Redis away: the beat joins again


async def aleave(member):
    """``member`` closed: offline, told, if it was the agent's last."""
    agent_id = _mine.pop(member, None)
    if agent_id is None:
        return
    await _leave(agent_id, member)


async def _leave(agent_id, member):
    await _change(agent_id, lambda: _local.leave(agent_id, member, _clock()),
                  _leave_command(agent_id, member), OFFLINE,
                  "a2ui: could not record agent %s gone")  # Redis away: it lapses, the sweep tells


async def _change(agent_id, local, command, status, failure):
    """One member's join or leave: in this process's table without Redis (``local()`` returns
    the change), else by ``command`` (true when the agent's status turned to ``status``);
    the change is published. Redis away: logged, nothing published."""
    redis = _redis()
    if redis is None:
        change = local()
    else:
        try:
            turned, = await redis.execute(command)
        except Exception:
            outages.warning(log, "agent presence", failure, agent_id)
            return
        change = status if turned else None
    if change is not None:
        await _publish(agent_id, change)


async def astatus(agent_id):
    """``ONLINE`` or ``OFFLINE`` now (``OFFLINE`` when Redis cannot say)."""
    agent_id = str(agent_id)
    ensure_started()
    redis = _redis()
    if redis is None:
        return _local.status(agent_id, _clock())
    try:
        count, = await redis.execute(("EVAL", COUNT_SCRIPT, 1, agent_key(agent_id)))
    except Exception:
        outages.warning(log, "agent presence", "a2ui: could not read the presence of agent %s",
                        agent_id)
        return OFFLINE
    return ONLINE if count else OFFLINE


async def astatuses(agent_ids):
    """``{agent id (str): ONLINE | OFFLINE}`` of several agents at once (the admin's list)."""
    import asyncio

    ids = [str(agent_id) for agent_id in agent_ids]
    return dict(zip(ids, await asyncio.gather(*(astatus(agent_id) for agent_id in ids)),
                    strict=True))


async def asweep():
    """Refresh this process's members, then remove the lapsed ones of every process and tell
    their agents' people. One round trip each with Redis."""
    redis = _redis()
    members = list(_mine.items())
    if redis is None:
        now = _clock()
        changes = [(agent_id, _local.refresh(agent_id, member, now, LIVE_TTL))
                   for member, agent_id in members]
        changes += [(agent_id, OFFLINE) for agent_id in _local.sweep(now)]
    else:
        pairs = [(agent_id, member) for member, agent_id in members]
        commands = [_join_command(pairs[i:i + REFRESH_BATCH])
                    for i in range(0, len(pairs), REFRESH_BATCH)]
        commands.append(("EVAL", SWEEP_SCRIPT, 1, INDEX_KEY, agent_key(""), SWEEP_LIMIT))
        *onlines, gone = await redis.execute(*commands)
        changes = [(agent_id, ONLINE) for online in onlines for agent_id in online]
        changes += [(agent_id, OFFLINE) for agent_id in gone]
    for agent_id, change in changes:
        if change is not None:
            await _publish(agent_id, change)
    # A member that left while it was being refreshed was joined again: leave it again.
    for member, agent_id in members:
        if member not in _mine:
            await _leave(agent_id, member)


#: This process's (event loop's) heartbeat and sweep, every ``HEARTBEAT_SECONDS``.
_every = jobs.Every("agent presence sweep", lambda: HEARTBEAT_SECONDS, lambda: asweep())
ensure_started = _every.ensure_started


def clear():
    """Forget this process's members and the local state (tests)."""
    _mine.clear()
    _local.clear()
