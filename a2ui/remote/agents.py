"""Which agents are remote, per process: the cached ``RemoteAgent`` rows, the in-process
agents imported once, each agent's configuration and limits for a run, the outbound HTTP client
of each event loop, and this process's presence in each remote agent (a remote agent is online
while a server process can run it)."""

import asyncio
import os
import time

from a2ui.remote import net, port, secrets, store
from a2ui.remote.clients import AgentConfig, Limits

CACHE_SECONDS = 10.0
#: this process, in the leases and presence it holds until its control channel is open
HOLDER = f"{os.uname().nodename[:40]}:{os.getpid()}"

_cache = {"at": -1e9, "agents": {}}
_targets = {}  # in-process import string -> loaded object


def forget():
    """Drop the cache of remote agents (a registration changed; tests)."""
    _cache["at"] = -1e9
    _present.clear()


async def remote_agent(agent_id):
    """The agent's cached row (a dict) if it is an active remote agent, else None."""
    now = time.monotonic()
    if now - _cache["at"] > CACHE_SECONDS:
        _cache["agents"] = await port.db(store.remote_agents)
        _cache["at"] = now
    return _cache["agents"].get(agent_id)


def preload(spec):
    """Import an in-process agent (at a server's start: a framework's import takes seconds,
    never on the event loop)."""
    from a2ui.remote.agui import inprocess

    if spec not in _targets:
        _targets[spec] = inprocess.load(spec)
    return _targets[spec]


async def config(row):
    target = None
    if row["in_process"]:
        spec = row["in_process"]
        target = _targets.get(spec)
        if target is None:  # not preloaded: imported off the event loop
            target = await asyncio.to_thread(preload, spec)
    return AgentConfig(agent_id=row["agent_id"], name=row["name"], label=row["label"],
                       kind=row["kind"], url=row["url"],
                       headers=secrets.unseal(row["sealed_headers"]), config=row["config"],
                       target=target)


def limits():
    s = port.settings
    return Limits(connect_seconds=s.REMOTE_AGENT_CONNECT_TIMEOUT_SECONDS,
                  idle_seconds=s.REMOTE_AGENT_IDLE_TIMEOUT_SECONDS,
                  event_bytes=s.REMOTE_AGENT_MAX_EVENT_BYTES,
                  run_bytes=s.REMOTE_AGENT_MAX_RUN_BYTES,
                  run_events=s.REMOTE_AGENT_MAX_RUN_EVENTS)


_http = {}  # event loop -> (hosts setting, PolicyClient)


def http_client():
    """This event loop's outbound client (``net.PolicyClient``), for the current hosts."""
    from a2ui.remote import policy

    loop = asyncio.get_running_loop()
    hosts = tuple(port.settings.REMOTE_AGENT_HOSTS or ())
    found = _http.get(loop)
    if found is None or found[0] != hosts:
        lim = limits()
        client = net.new_client(policy.parse_hosts(hosts), connect_seconds=lim.connect_seconds,
                                idle_seconds=lim.idle_seconds)
        _http[loop] = (hosts, client)
        return client
    return found[1]


_present = {}  # agent id -> this process's presence member for it


async def join_presence():
    """A remote agent is online while a server process can run it: each process that serves
    remote agents is a presence member of each (``presence``: refreshed by its heartbeat,
    lapsed when the process dies); one no longer remote leaves."""
    await remote_agent(0)  # the cache, fresh enough
    agents = _cache["agents"]
    for agent_id in [a for a in _present if a not in agents]:
        await port.leave_presence(_present.pop(agent_id))
    for agent_id in [a for a in agents if a not in _present]:
        member = _present[agent_id] = f"{port.REPLY_PREFIX}presence.{agent_id}.{HOLDER}"
        await port.join_presence(agent_id, member)
