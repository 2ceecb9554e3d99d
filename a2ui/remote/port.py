"""The one way from ``a2ui.remote`` into the services: every call the runtime makes into the
core (pushes, activity, requests, runs, caps, leases, consent, audit, the database pool) is a
function here, so that a change of the services' layout changes this module only.

What an upstream agent sends reaches the session exactly as an agent's push does: the agent
methods' dispatch table (``agentapi``: the protocols' own validators, then the services'
checks), ``activity`` for chat text, tool calls and the state document (``activity.check``:
the same content rules), ``surfaces`` through the ``a2ui.v09`` method.
"""

import uuid

from a2ui.compliance import audit
from a2ui.conf import a2ui_settings
from a2ui.core.errors import DomainError, Fault
from a2ui.core.events import Kind
from a2ui.infra import caps, dbthreads, groups, leases
from a2ui.push import admit, answers
from a2ui.push import entry as agentapi
from a2ui.push import fanout as stream
from a2ui.requests import pending
from a2ui.sessions import agents, clients, presence
from a2ui.sessions import lifecycle as sessions
from a2ui.surfaces import activity

DomainError, Fault = DomainError, Fault  # re-exported: the runtime speaks the core's errors
settings = a2ui_settings


def set_divert(divert):
    """The seam: events of agent groups and of reply channels named :data:`REPLY_PREFIX` go to
    ``await divert(target, event)`` (True: taken) before the channel layer."""
    groups.divert = divert


REPLY_PREFIX = groups.DIVERTED_CHANNEL_PREFIX
AGENT_GROUP_PREFIX = groups.agent_group("")


def session_id(value):
    return sessions.parse_session_id(value)


async def db(function, *args):
    """``function(*args)`` on the per-message database pool."""
    return await dbthreads.run(function, *args)


# Pushes ---------------------------------------------------------------------------------------


async def push(agent_id, sid, method, params, *, reply_channel=""):
    """One agent method of the dispatch table (validated by its validator, then its
    service), as the Python API does; returns what the method returns."""
    _, clean = agentapi.validate(method, {**params, "session_id": str(sid)})
    return await agentapi.apush(agent_id, sid, method, clean, reply_channel=reply_channel,
                                where="")


async def ensure_session(agent_id, sid):
    """The session is live and the agent's (-32000 otherwise)."""
    return await admit.agent_session(agent_id, sid)


async def show_message(sid, data):
    """A chat message as it streams: checked by the activity's content rules, shown to every
    client, not stored (its final form is, by :func:`store_activity`)."""
    clean = activity.check(Kind.MESSAGE, data)
    await stream.emit(sid, Kind.MESSAGE, clean)
    return clean


async def store_activity(agent_id, sid, kind, data):
    """An activity event (message, tool_call, state.delta...) checked, stored and shown."""
    return (await agentapi.aemit(agent_id, sid, Kind(kind), data))[0]


async def ask(agent_id, sid, kind, params, reply_channel):
    """Open a request (``input`` / ``confirm``) whose outcome goes to ``reply_channel``."""
    method = "ui.request_input" if kind == "input" else "ui.confirm"
    return await push(agent_id, sid, method, params, reply_channel=reply_channel)


async def claim_answer(sid, request_id, channel):
    """Take the outcome of a request (once, whichever process hears it)."""
    return await pending.aclaim(sid, request_id, channel)


async def cancel_request(sid, request_id):
    return await answers.acancel(sid, request_id)


def session_activity(sid):
    """The session's transcript, state... (``activity.load``, sync: for ``db``)."""
    return activity.load(sid)


async def capabilities(sid):
    return await clients.acapabilities(sid)


def server_catalogs():
    from a2ui.surfaces.catalogs import catalog_registry

    return tuple(catalog_registry().ids())


# Consent, caps, leases, presence, audit --------------------------------------------------------


async def require_consent(sid):
    """-32010 (and the person prompted) while a consent the site requires is missing."""
    await admit.consent_gate(sid)


class Busy(DomainError):
    def __init__(self, message, data):
        super().__init__(Fault.RATE_LIMITED, message, data)


async def acquire_run(agent_id, user_id, agent_limit, person_limit):
    """A place among the agent's runs in flight and the person's, or :class:`Busy`."""
    holders = [caps.Holder("agent", f"remote:{agent_id}", agent_limit)]
    if user_id is not None:
        holders.append(caps.Holder("person", f"remote:{user_id}:{agent_id}", person_limit))
    try:
        return await caps.acquire("remote_run", holders)
    except caps.CapReached as exc:
        per = exc.holder.per
        raise Busy("The agent is busy with too many requests right now (limit "
                   f"{exc.holder.limit}): try again in a moment." if per == "agent" else
                   f"You already have {exc.holder.limit} requests running with this agent: "
                   "wait for one to finish.", {"reason": "cap_reached", "per": per,
                                                "limit": exc.holder.limit}) from None


def lease_key(sid, run_id):
    """The scope of a remote run's lease (``a2ui.infra.leases``): held by the process running
    it."""
    session_hex = getattr(sid, "hex", None) or str(sid).replace("-", "")
    return f"a2ui:remote:run:{session_hex}:{run_id}"


_held = {}  # lease key -> Lease: the remote runs this process runs


async def hold_lease(sid, run_id):
    k = lease_key(sid, run_id)
    if k not in _held:
        _held[k] = await leases.acquire([leases.Scope(k)], lease_seconds(), member=k)


async def set_lease(sid, run_id):
    k = lease_key(sid, run_id)
    await leases.acquire([leases.Scope(k)], lease_seconds(), member=k, refreshed=False)


async def release_lease(sid, run_id):
    lease = _held.pop(lease_key(sid, run_id), None)
    if lease is not None:
        await lease.release()


async def leases_alive(pairs):
    """For each (session, run_id): True (held), False (lapsed) or None (Redis cannot say)."""
    return await leases.alive([lease_key(s, r) for s, r in pairs], ttl=lease_seconds())


def lease_seconds():
    return settings.REMOTE_AGENT_LEASE_SECONDS


async def join_presence(agent_id, member):
    await presence.ajoin(agent_id, member)


async def leave_presence(member):
    await presence.aleave(member)


async def audit_event(action, agent, sid=None, details=None, actor=None):
    await audit.arecord(action, actor=actor, agent=agent, session_id=sid, details=details)


# AG-UI 1.0 runs of the session (a person's AG-UI 1.0 client) ------------------------------------


async def open_agui_runs(agent_id, sid):
    """The session's AG-UI 1.0 runs in progress (what ``agui.run_started`` said of each): the
    ``agui.runs`` agent method, as any agent lists them."""
    return await agentapi.apush(agent_id, sid, "agui.runs", {})


async def finish_agui_run(agent_id, sid, run_id, result=None):
    try:
        return await push(agent_id, sid, "agui.run_finish", {"run_id": run_id, "result": result})
    except DomainError:  # it ended meanwhile (its client went, an interrupt)
        return None


async def fail_agui_run(agent_id, sid, run_id, message, code=None):
    try:
        return await push(agent_id, sid, "agui.run_error",
                          {"run_id": run_id, "message": message, "code": code})
    except DomainError:
        return None


# The channel layer (the runtime's control channel) -----------------------------------------------


async def new_channel():
    from channels.layers import get_channel_layer

    return await get_channel_layer().new_channel()


async def receive(channel):
    from channels.layers import get_channel_layer

    return await get_channel_layer().receive(channel)


async def send_channel(channel, event):
    await groups.send_channel(channel, event)


# Registration (synchronous: the command and the admin) ------------------------------------------

AGENT_NAME_RE = agents.NAME_RE


def create_agent(name, **fields):
    """A new agent row (its key made and not returned to anyone), audited."""
    return agents.create(name, **fields)


def record_audit(action, **fields):
    return audit.record(action, **fields)


def new_id():
    return uuid.uuid4().hex
