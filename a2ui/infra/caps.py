"""Caps on long-lived things, per credential and per client address, across processes.

Each kind of long-lived thing (an MCP session, a session socket, an agent socket, an SSE
stream, an AG-UI 1.0 run) is counted under *holders*: its credential (a person, per agent, or
an agent key) and the client address it came from, each with a limit (``A2UI['CAP_...']``,
docs/operations.md "Caps"). :func:`acquire` admits one more thing only when every holder is
under its limit, and gives it a lease (``a2ui.infra.leases``: one scope per holder,
``a2ui:cap:<kind>:<per>:<id>``, refreshed by the process that holds it every
``CAP_LEASE_SECONDS / 3``); the thing releases it when it ends. Otherwise it raises
:class:`CapReached` (a ``DomainError`` with ``Fault.RATE_LIMITED``: HTTP 429, or each socket
protocol's rate-limit error and close code) and nothing was counted. When Redis cannot be
reached at admission the thing is admitted uncounted (logged): caps protect the service, they
must not take it down.

Rates are the other limit (:func:`check_rate`): how often a credential, and a client address,
may mint or write something a loop could pile up (stream tokens, consent choices, exports),
counted per minute (``A2UI['RATE_...']``, ``a2ui.infra.shared.hit_rate_limit``); past it
:class:`RateLimited`, with the seconds until the minute ends (``Retry-After``).
"""

import time
from dataclasses import dataclass

from a2ui import edge
from a2ui.conf import a2ui_settings
from a2ui.core.errors import DomainError, Fault
from a2ui.infra import leases, prom, shared

#: What each kind is called in refusals.
NOUNS = {
    "mcp": "MCP sessions",
    "socket": "session sockets",
    "agent_socket": "agent sockets",
    "stream": "SSE streams",
    "run": "AG-UI runs in flight",
    "client": "clients",
}
#: Who a holder is, in refusals.
PERS = {"person": "this person", "agent": "this agent key", "address": "this address"}

@dataclass(frozen=True)
class Holder:
    """One count a lease is in: ``per`` ("person", "agent", "address"), its id, its limit."""

    per: str
    ident: str
    limit: int

    def key(self, kind):
        return f"a2ui:cap:{kind}:{self.per}:{self.ident}"


class CapReached(DomainError):
    def __init__(self, kind, holder):
        noun = NOUNS.get(kind, kind)
        super().__init__(
            Fault.RATE_LIMITED,
            f"Too many open {noun} for {PERS.get(holder.per, holder.per)} "
            f"(limit {holder.limit}): close some first.",
            {"reason": "cap_reached", "kind": kind, "per": holder.per, "limit": holder.limit},
        )
        self.kind, self.holder = kind, holder
        if prom.ON:
            prom.cap_refused(kind)


Lease = leases.Lease


def _ttl():
    return a2ui_settings.CAP_LEASE_SECONDS


async def acquire(kind, holders, tag=None):
    """A lease of one more ``kind`` for every holder, or :class:`CapReached`.

    ``tag`` (any text): kept in the lease's member after its id, so whoever lists the
    holder's live leases (:func:`members`) reads what each one is."""
    holders = [h for h in holders if h is not None]
    try:
        return await leases.acquire([leases.Scope(h.key(kind), h.limit) for h in holders],
                                    _ttl(), tag=tag)
    except leases.Full as full:
        raise CapReached(kind, next(h for h in holders if h.key(kind) == full.scope.key)) \
            from None


async def count(kind, holder):
    """How many live leases ``holder`` has of ``kind`` (for tests and operators)."""
    return await leases.count(holder.key(kind))


async def members(kind, holder):
    """The live leases ``holder`` has of ``kind``: their ids, each ``"<id> <tag>"`` if tagged."""
    return await leases.members(holder.key(kind))


async def refresh_now():
    """Push back the expiry of every cap lease this process holds (one round trip)."""
    await leases.refresh_now(_ttl())


holding = leases.holding


# Holders of each kind --------------------------------------------------------------------------


def address_of(scope):
    """The client address of an ASGI scope (behind a proxy, the one ``a2ui_serve
    --proxy-headers`` took from X-Forwarded-For past the trusted proxies:
    ``a2ui.edge.forwarded_client``), or None."""
    client = scope.get("client") if scope else None
    if client and client[0]:
        return str(client[0])[:64]
    return None


def address_of_request(request):
    """The client address of a Django request (``REMOTE_ADDR``), or None."""
    address = request.META.get("REMOTE_ADDR")
    return str(address)[:64] if address else None


def by_address(address):
    return Holder("address", address, a2ui_settings.CAP_PER_ADDRESS) if address else None


def person(user_id, agent_id, limit):
    return Holder("person", f"{user_id}:{agent_id or ''}", limit)


def agent_key(agent_id, limit):
    return Holder("agent", str(agent_id), limit)


async def acquire_mcp(principal, address):
    """An MCP session (or a session-less request on the 2026-07-28 revision, while it runs)."""
    if principal.kind == "agent":
        holder = agent_key(principal.agent.pk, a2ui_settings.CAP_MCP_SESSIONS_PER_AGENT_KEY)
    else:
        holder = person(principal.token.user_id, principal.token.agent_id,
                        a2ui_settings.CAP_MCP_SESSIONS_PER_PERSON)
    return await acquire("mcp", [holder, by_address(address)])


async def acquire_socket(token, address):
    """A session socket of a person's stream token (any of the socket protocols)."""
    return await acquire("socket", [
        person(token.user_id, token.agent_id, a2ui_settings.CAP_SOCKETS_PER_PERSON),
        by_address(address)])


async def acquire_agent_socket(agent, address):
    return await acquire("agent_socket", [
        agent_key(agent.pk, a2ui_settings.CAP_AGENT_SOCKETS_PER_AGENT_KEY), by_address(address)])


async def acquire_stream(token, address):
    """A v0.9 SSE stream of a person's stream token."""
    return await acquire("stream", [
        person(token.user_id, token.agent_id, a2ui_settings.CAP_STREAMS_PER_PERSON),
        by_address(address)])


async def acquire_run(user_id, agent_id, address):
    """An AG-UI 1.0 run of a person (bearer token or cookie) with an agent, while it streams."""
    return await acquire("run", [
        person(user_id, agent_id, a2ui_settings.CAP_RUNS_PER_PERSON), by_address(address)])


# Rates -------------------------------------------------------------------------------------------

#: Each rate-limited kind: what it is called in refusals, and its setting (per credential).
RATES = {
    "stream_token": ("stream tokens", "RATE_STREAM_TOKENS_PER_MINUTE"),
    "consent": ("consent choices", "RATE_CONSENTS_PER_MINUTE"),
    "export": ("exports of a person's data", "RATE_EXPORTS_PER_MINUTE"),
}
RATE_WINDOW = 60
PER_RATE = {"credential": "this account", "address": "this address"}


class RateLimited(DomainError):
    def __init__(self, kind, per, limit, retry_after):
        super().__init__(
            Fault.RATE_LIMITED,
            f"Too many {RATES[kind][0]} for {PER_RATE[per]} (limit {limit} a minute): "
            f"retry in {retry_after} s.",
            {"reason": "rate_limited", "kind": kind, "per": per, "limit_per_minute": limit,
             "retry_after": retry_after})
        self.retry_after = retry_after
        if prom.ON:
            prom.cap_refused(kind)


async def check_rate(kind, credential, address):
    """Count one ``kind`` (:data:`RATES`) for ``credential`` (e.g. ``"user:7"``) and the client
    ``address`` (IPv6 by /64; none for what is not an IP); :class:`RateLimited` past the
    credential's ``RATE_<KIND>_PER_MINUTE`` or ``RATE_PER_ADDRESS_PER_MINUTE``. Checked before
    anything is written."""
    limits = [("credential", credential, getattr(a2ui_settings, RATES[kind][1]))]
    key = edge.address_key(address)
    if key is not None:
        limits.append(("address", key, a2ui_settings.RATE_PER_ADDRESS_PER_MINUTE))
    for per, ident, limit in limits:
        if await shared.hit_rate_limit(f"{kind}:{per}:{ident}", limit, RATE_WINDOW):
            raise RateLimited(kind, per, limit, RATE_WINDOW - int(time.time()) % RATE_WINDOW)
