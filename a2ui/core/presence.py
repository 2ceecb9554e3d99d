"""Agent presence: whether an agent has a socket or listener open anywhere. Sans-I/O.

An agent is *online* while at least one of its *members* (an agent WebSocket, a Python
listener, an MCP listen stream: ``a2ui.sessions.presence``) is live: joined, not left, and
refreshed within its time to live. Each member carries the time it lapses; its process
refreshes it every few seconds, so a killed process's members lapse and a sweep removes them.

:class:`Presence` is the state machine, for one process or as the model of the Redis script
that shares it between processes (``a2ui.sessions.presence``). Each operation returns the
*transition* it caused, ``ONLINE``, ``OFFLINE`` or None, so that exactly one caller publishes
each change:

* ``join`` (and ``refresh``, the same): ``ONLINE`` when the agent had no live member before.
* ``leave``: ``OFFLINE`` when the member was there and no live member is left.
* ``sweep``: the agents whose last live member lapsed, each ``OFFLINE`` once.

A member found lapsed by ``join``/``leave`` of the same agent is removed there, quietly: the
transition those return already tells the agent's state.
"""

ONLINE, OFFLINE = "online", "offline"
STATUSES = (ONLINE, OFFLINE)


class Presence:
    """Members of agents with the time each lapses (``now`` and ``ttl`` in seconds)."""

    def __init__(self):
        self.agents = {}  # agent id -> {member: lapses at}

    def _prune(self, agent, now):
        members = self.agents.get(agent)
        if members is None:
            return {}
        for member in [m for m, t in members.items() if t <= now]:
            del members[member]
        return members

    def join(self, agent, member, now, ttl):
        """``member`` of ``agent`` is live until ``now + ttl``: ``ONLINE`` if it is the first."""
        members = self._prune(agent, now)
        first = not members
        self.agents.setdefault(agent, members)[member] = now + ttl
        return ONLINE if first else None

    refresh = join

    def leave(self, agent, member, now):
        """``member`` left: ``OFFLINE`` if it was live and no live member is left."""
        members = self.agents.get(agent)
        if members is None or members.pop(member, None) is None:
            return None
        if self._prune(agent, now):
            return None
        del self.agents[agent]
        return OFFLINE

    def sweep(self, now):
        """Remove lapsed members: the agents left with none, each to be told ``OFFLINE``."""
        gone = []
        for agent in list(self.agents):
            members = self.agents[agent]
            lapsed = [m for m, t in members.items() if t <= now]
            if not lapsed:
                continue
            for member in lapsed:
                del members[member]
            if not members:
                del self.agents[agent]
                gone.append(agent)
        return gone

    def status(self, agent, now):
        members = self.agents.get(agent) or {}
        return ONLINE if any(t > now for t in members.values()) else OFFLINE

    def clear(self):
        self.agents.clear()
