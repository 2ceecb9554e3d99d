"""The client of a remote agent's protocol: what the runtime (``a2ui.remote.runtime``) asks of
it, what it gets to work with, and which client serves which kind of agent.

A client is an object of the :class:`RemoteClient` shape, one per kind (``"agui"``: AG-UI 1.0,
``a2ui.remote.agui``; ``"a2a"``: A2A with the A2UI extension, ``a2ui.remote.a2a``), chosen by
the agent's ``RemoteAgent.kind``. It speaks its protocol to the agent and yields
:mod:`a2ui.remote.ops`; it never touches the session itself (the runtime does, through the
services), never reads Django settings or the database, and keeps nothing between calls but
what it returns as :class:`~a2ui.remote.ops.RunIds` and :class:`~a2ui.remote.ops.Ask`
``resume`` values (kept by the runtime, handed back in the next :class:`RunContext`).

Each run gets a :class:`RunContext`: the session, the thread, the transcript and state, what
the session's clients can show, the agent's transport config (its headers decrypted: never log
them) and the outbound HTTP client (``ctx.http``: an ``httpx.AsyncClient`` that connects only
where ``A2UI['REMOTE_AGENT_HOSTS']`` allows, ``a2ui.remote.net``). The limits of
``ctx.limits`` bound what a client reads: each event at most ``event_bytes``, the run at most
``run_bytes``, at most ``idle_seconds`` between events (raise :class:`UpstreamError` when one
is passed: the runtime tells the person and audits it).

After each op it yields, a client may read ``ctx.refused``: the ops the runtime refused (by the
same checks as an agent's push), each a :class:`Refusal`, appended before the generator
resumes (an A2A client reports a refused surface back to the agent as the extension says).
"""

import importlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from a2ui.remote import ops

#: The built-in kinds: ``kind -> "module:attribute"`` of the client's class (instantiated once).
BUILTIN = {
    "agui": "a2ui.remote.agui.client:AguiClient",
    "a2a": "a2ui.remote.a2a.client:A2AClient",
}
KIND_LABELS = {"agui": "AG-UI 1.0", "a2a": "A2A (A2UI extension)"}


class UpstreamError(Exception):
    """The agent's side failed: unreachable, refused, timed out, too big, malformed. ``message``
    is shown to the person (no secrets, no upstream body beyond a short excerpt); ``code`` a
    short machine word (``unreachable``, ``timeout``, ``http_status``, ``too_large``,
    ``malformed``, ``refused_host``...)."""

    def __init__(self, message, code="upstream_error"):
        super().__init__(message)
        self.message, self.code = message, code


@dataclass(frozen=True)
class Limits:
    connect_seconds: float = 10.0
    idle_seconds: float = 120.0
    event_bytes: int = 1024 * 1024
    run_bytes: int = 16 * 1024 * 1024
    run_events: int = 100_000


@dataclass(frozen=True)
class Capabilities:
    """What the session's clients can show (``a2ui.services.clients``)."""

    #: protocol name -> number of its clients attached now (``jsonrpc``, ``v09``, ``agui``,
    #: ``agui1``, ``mcp``).
    protocols: dict = field(default_factory=dict)
    #: The A2UI v0.9 catalog ids the session's v0.9 clients declared (their union).
    catalogs: tuple = ()
    #: The catalog ids the server accepts surfaces in (``a2ui.core.surfaces``).
    server_catalogs: tuple = ()


@dataclass(frozen=True)
class AgentConfig:
    """A remote agent's transport config (``a2ui.remote.models.RemoteAgent``)."""

    agent_id: int
    name: str
    label: str
    kind: str
    url: str = ""
    #: Header name -> value, decrypted for this run: never log, show or return them.
    headers: dict = field(default_factory=dict, repr=False)
    #: What registration found (an A2A agent card...), JSON.
    config: dict = field(default_factory=dict)
    #: An in-process agent (``A2UI['AGENTS']``): its import target, loaded (an ASGI app or an
    #: async run function), else None.
    target: Any = field(default=None, repr=False)


@dataclass(frozen=True)
class Refusal:
    op: Any
    code: str
    message: str
    detail: Any = None


@dataclass
class RunContext:
    session_id: str
    run_id: str
    #: The session's thread (AG-UI ``threadId``): stable for the session.
    thread_id: str
    agent: AgentConfig
    #: What earlier runs of the thread kept (:class:`~a2ui.remote.ops.RunIds` merged).
    ids: dict = field(default_factory=dict)
    #: The session's chat, oldest first: ``{message_id, role (agent|user|system), sender,
    #: content}`` (the person's turn that starts this run is in it, last).
    transcript: list = field(default_factory=list)
    #: The session's state document.
    state: dict = field(default_factory=dict)
    capabilities: Capabilities = field(default_factory=Capabilities)
    #: The frontend tools the session's clients can run, AG-UI ``Tool`` shape ``{name,
    #: description, parameters}``: the person's questions (input, confirm) and the tools an
    #: AG-UI 1.0 client declared.
    tools: list = field(default_factory=list)
    #: Context entries ``{description, value}``.
    context: list = field(default_factory=list)
    #: Passed on as it came (an AG-UI 1.0 client's ``forwardedProps``), else empty.
    forwarded: dict = field(default_factory=dict)
    #: The person's username.
    user: str | None = None
    limits: Limits = field(default_factory=Limits)
    #: The outbound HTTP client (``a2ui.remote.net.PolicyClient``, an ``httpx.AsyncClient``):
    #: connects only to allowed hosts; ``await ctx.http.open_stream(method, url, ...)`` also
    #: checks the URL and follows same-host redirects only.
    http: Any = field(default=None, repr=False)
    refused: list = field(default_factory=list)


@runtime_checkable
class RemoteClient(Protocol):
    #: The ``RemoteAgent.kind`` it serves.
    kind: str

    def run(self, ctx: RunContext, turn: Any) -> AsyncIterator[Any]:
        """The ops of one run started by ``turn`` (an op of :data:`a2ui.remote.ops.TURNS`):
        an async generator. The run ends with :class:`~a2ui.remote.ops.Finished`,
        :class:`~a2ui.remote.ops.Failed` or an :class:`~a2ui.remote.ops.Ask` (the next turn is
        its :class:`~a2ui.remote.ops.Answer`); an :class:`UpstreamError` ends it as failed."""

    async def cancel(self, ctx: RunContext) -> None:
        """Stop the agent's work of ``ctx`` (best effort; the runtime closes the stream)."""

    async def resume(self, ctx: RunContext) -> AsyncIterator[Any] | None:
        """Pick a run up whose process died (``ctx.ids`` as kept): an async iterator of the
        rest of its ops, or None when the protocol cannot (the runtime then ends the run as
        interrupted and offers the person a retry)."""


class Registration(Exception):
    """A remote agent cannot be registered as given: ``str(exc)`` says why."""


async def prepare(kind, url, headers, http):
    """What to store for a new remote agent of ``kind`` at ``url``: ``{"url": the endpoint,
    "config": {...}, "display_name"?: ...}``. A client may define ``prepare(url, headers,
    http)`` (an A2A client reads the agent card); without one the URL is stored as it is."""
    client = client_for(kind)
    hook = getattr(client, "prepare", None)
    if hook is None:
        return {"url": url, "config": {}}
    return await hook(url, headers, http)


_clients = {}
_registered = {}


def register(kind, client):
    """Serve ``kind`` with ``client`` (an instance of the :class:`RemoteClient` shape, or an
    import string ``"module:attribute"`` of its class)."""
    _registered[kind] = client
    _clients.pop(kind, None)


def kinds():
    return tuple(dict.fromkeys([*BUILTIN, *_registered]))


def client_for(kind):
    """The client of ``kind`` (KeyError: no such kind; ImportError: its package is missing)."""
    found = _clients.get(kind)
    if found is not None:
        return found
    spec = _registered.get(kind) or BUILTIN[kind]
    if isinstance(spec, str):
        module, _, attribute = spec.partition(":")
        spec = getattr(importlib.import_module(module), attribute)()
    _clients[kind] = spec
    return spec


def is_turn(value):
    return isinstance(value, ops.TURNS)
