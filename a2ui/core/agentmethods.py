"""The agent-facing methods: one dispatch table, declared by the adapters.

Each protocol's adapter declares the methods an agent may call on it (``Adapter.agent_methods``:
a callable returning :class:`AgentMethod` entries, so that declaring imports nothing heavy).
:func:`table` merges them in ``A2UI['ADAPTERS']`` order. Every agent path reads it: the agent
socket dispatches by ``name``, REST posts the entries with a ``rest`` route, the Python API and
the MCP agent tools expose the entries with an ``sdk`` / ``tool`` name, and
``a2ui.push.entry.apush`` is the one push entry point. Adding an agent method is one
entry.

Sans-I/O: plain data and callables, no Django, no Channels.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class AgentMethod:
    #: The method's name on the agent socket (JSON-RPC ``method``), unique across adapters.
    name: str
    #: ``validate(params) -> (session_id, clean params)`` (the wire's validator; raises a
    #: DomainError/ProtocolError before any state changes). None: the call validates.
    validate: Callable[[Any], tuple] | None = None
    #: Not a push: ``await call(agent_id, session_id, params, key=..., reply_channel=...,
    #: rpc_id=..., where=...)``, the entry's own call (a listing, a run's end). None for a
    #: path-specific call (listing, waiting) or a push.
    call: Callable[..., Any] | None = None
    #: A push: ``events(params, key, where) -> ([(Kind, data)], prefix)``, the session events
    #: the validated params are (the protocol's sans-I/O translation), taken through the push
    #: pipeline by ``a2ui.push.entry.apush``; ``prefix``: where the events' fields sit in the
    #: agent's message, for a refusal's ``data.path``. ``key`` is the push's idempotency key
    #: (or None), ``where`` how the caller's path names the params ("params", "arguments",
    #: "").
    events: Callable[[Any, Any, str], tuple] | None = None
    #: A push's refusal in the protocol's words: ``reword(exc, key, where)`` returns the
    #: exception to raise for a DomainError the pipeline raised. None: as it is.
    reword: Callable[[Any, Any, str], Exception] | None = None
    #: What the call returns: "seq" (a sequence number or ``a2ui.push.outcome.Pushed``),
    #: "request" ((seq, request): the answer comes later), "result" (a JSON value as it is),
    #: "list".
    shape: str = "seq"
    #: Takes an idempotency key.
    keyed: bool = True
    #: Waits for the person's answer (not on REST).
    awaits: bool = False
    #: On the agent socket (JSON-RPC) under ``name``.
    socket: bool = True
    #: The MCP agent tool, the Python API function (``a2ui.agents``) and the REST route kind
    #: ("messages", "surfaces", "agui", "pending") that expose it; None: not on that path.
    tool: str | None = None
    sdk: str | None = None
    rest: str | None = None
    #: For a method the MCP package does not describe itself: its tool's description and the
    #: JSON Schema ``properties`` of its params (``session_id`` and, when keyed,
    #: ``idempotency_key`` are added), and the names required.
    summary: str = ""
    properties: dict | None = None
    required: tuple = ()
    #: REST (a session push route ``sessions/<id>/<rest>``): ``rest_params(body)`` the params
    #: of a request body, or None when the body has the wrong shape (answered 400 with
    #: ``rest_refusal``, a DRF ValidationError detail); ``rest_options`` view attributes
    #: (``{"v09_errors": True}``: JSON value refusals in the v0.9 answer shape;
    #: ``{"media_types": (...)}``: JSON media types taken besides application/json).
    rest_params: Callable[[Any], Any] | None = None
    #: Its protocol serves its REST route itself (in its ``http_urls``), not the REST kit.
    rest_routed: bool = False
    rest_refusal: Any = None
    rest_options: dict | None = None
    #: The adapter that declared it (filled by :func:`table`).
    adapter: str = ""

    @property
    def handled(self):
        """True when the entry does something itself: a push (``events``) or a ``call``."""
        return self.events is not None or self.call is not None


def session_params(params):
    """``(session_id, the other params)`` of a method whose params are an object with a
    ``session_id``; a core ``invalid_input`` (``params.session_id``) otherwise."""
    from a2ui.core.errors import DomainError, Fault

    if not isinstance(params, dict) or "session_id" not in params:
        raise DomainError(Fault.INVALID_INPUT, "session_id is required",
                          data={"path": "params.session_id"})
    params = dict(params)
    return params.pop("session_id"), params


def body_params(body):
    """A REST body that is the params object itself (``rest_params``)."""
    return body if isinstance(body, dict) else None


def merge(adapters):
    """``{name: AgentMethod}`` of the adapters' declarations; a name declared twice is an
    error."""
    out = {}
    for adapter in adapters:
        for entry in adapter.agent_methods():
            if entry.name in out:
                raise ValueError(f"two adapters declare the agent method {entry.name!r}")
            out[entry.name] = _with_adapter(entry, adapter.name)
    return out


def _with_adapter(entry, name):
    from dataclasses import replace

    return replace(entry, adapter=name)


_cache = {}
_last = []  # [the registered adapters' tuple, its table]


def table():
    """The merged table of the registered adapters (``a2ui.core.adapters.registered``)."""
    from a2ui.core.adapters import registered

    adapters = registered()
    last = _last
    if last and last[0] is adapters:  # the same registered tuple: asked per message
        return last[1]
    ident = tuple(id(a) for a in adapters)
    found = _cache.get(ident)
    if found is None:
        found = merge(adapters)
        _cache.clear()
        _cache[ident] = found
    _last[:] = [adapters, found]
    return found


def get(name):
    return table().get(name) if isinstance(name, str) else None


def exposed(path):
    """The names a path ("socket", "tool", "sdk", "rest") exposes by the table."""
    return {e.name for e in table().values() if getattr(e, path) not in (None, False)}


def by(path, value):
    """The entry a path exposes under ``value`` (``by("tool", "render")``), or None."""
    for entry in table().values():
        if getattr(entry, path) == value:
            return entry
    return None


def session_pushes():
    """The entries REST posts at ``sessions/<id>/<rest>``: a push or a call, a REST kind of its
    own (seed 000's ``messages`` is its batch view) that its protocol does not route itself."""
    return [e for e in table().values()
            if e.handled and e.rest and e.rest != "messages" and not e.awaits
            and not e.rest_routed]
