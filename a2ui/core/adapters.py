"""The adapter registry: one entry per protocol, registered in one place.

An adapter is what a protocol adds to the app: its WebSocket routes, its HTTP routes (Django
URL patterns, or a raw ASGI app mounted under a path prefix before Django, for protocols whose
official SDK is an ASGI app), the session-event kinds it translates, and hooks run once per
process. Everything else (sessions, delivery, pending requests, surfaces, consent, audit) is the
core's, reached through ``a2ui.services``.

The registry is the ``A2UI['ADAPTERS']`` setting: dotted paths of modules, each exposing an
``ADAPTER`` (an :class:`Adapter`). ``a2ui.routing`` (WebSocket), ``a2ui.urls`` (HTTP) and
``a2ui.asgi`` (raw ASGI mounts, start/stop hooks) read it; nothing else names a protocol.
docs/adding-a-protocol.md walks through it.
"""

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Adapter:
    #: Short protocol name, unique ("jsonrpc", "v09", "v09-sse", "mcp", ...).
    name: str
    #: Channels/Django ``path()`` routes to consumers, mounted under the WebSocket router.
    websocket_urls: Callable[[], list] = lambda: []
    #: Django URL patterns, included at the site root by ``a2ui.urls``.
    http_urls: Callable[[], list] = lambda: []
    #: ``(path_prefix, factory)`` pairs: ``factory()`` builds an ASGI app that serves HTTP
    #: requests whose path starts with the prefix, ahead of Django.
    asgi_mounts: Callable[[], list] = lambda: []
    #: Session-event kinds (``a2ui.core.events.Kind``) this adapter's clients are sent.
    kinds: frozenset = frozenset()
    #: The agent-facing methods this protocol adds (``a2ui.core.agentmethods.AgentMethod``):
    #: one dispatch table read by the agent socket, REST, the Python API and the MCP tools.
    agent_methods: Callable[[], tuple] = lambda: ()
    #: The stream-token type a person's client of this protocol presents (any short name:
    #: no migration), or "" when it takes none: ``a2ui.tokens`` issues and accepts the
    #: registered adapters' types only, each signed with a salt of its own.
    token_type: str = ""
    #: ``A2UI`` settings only this protocol reads, with their defaults (documented in
    #: docs/settings.md): ``a2ui.conf.a2ui_settings`` finds a name here when it is not a core
    #: default (``a2ui.conf.DEFAULTS``); an integer default must stay a positive integer
    #: (a2ui.checks).
    settings_defaults: dict = field(default_factory=dict)
    #: Per-process caches this protocol keeps: ``(name, clear)`` pairs, ``clear()`` empties one
    #: (``a2ui.infra.memory`` empties them all once sockets have closed: ``clear_caches``).
    caches: Callable[[], tuple] = lambda: ()
    #: Its part of the housekeeping sweep (``a2ui.push.sweep``): ``await sweep()`` every
    #: ``INTERVAL_SECONDS`` in every serving process, after the core's part.
    sweep: Callable[[], Any] | None = None
    #: Called once per process when the ASGI application is built (after Django setup).
    on_start: Callable[[], Any] | None = None
    #: Called (awaited if a coroutine function) when the server shuts down.
    on_stop: Callable[[], Any] | None = None
    #: Free-form description for docs and checks.
    summary: str = ""
    extra: dict = field(default_factory=dict)


_cache = {}
_source = []  # [the function returning the adapters' dotted paths], set by ``use_source``
_last = []  # [what the source returned last, its adapters]


def use_source(paths):
    """Read the adapters' dotted paths from ``paths()`` (``a2ui.conf`` sets it to
    ``A2UI['ADAPTERS']`` when it is imported: the core imports no settings)."""
    _source[:] = [paths]
    _last.clear()


def registered():
    """The adapters named by ``A2UI['ADAPTERS']``, in order (imported once)."""
    if not _source:
        raise RuntimeError("a2ui.conf is not loaded: no adapters are configured")
    given = _source[0]()
    last = _last
    if last and last[0] is given:  # the same setting object: asked per message
        return last[1]
    paths = tuple(given)
    found = _cache.get(paths)
    if found is None:
        found = []
        for dotted in paths:
            adapter = getattr(importlib.import_module(dotted), "ADAPTER", None)
            if not isinstance(adapter, Adapter):
                raise TypeError(f"{dotted}.ADAPTER is not an a2ui.core.adapters.Adapter")
            if any(a.name == adapter.name for a in found):
                raise ValueError(f"two adapters are named {adapter.name!r}")
            found.append(adapter)
        found = tuple(found)
        _cache.clear()
        _cache[paths] = found
    _last[:] = [given, found]
    return found


def get(name):
    for adapter in registered():
        if adapter.name == name:
            return adapter
    return None


def websocket_urls():
    return [route for a in registered() for route in a.websocket_urls()]


def http_urls():
    return [route for a in registered() for route in a.http_urls()]


def asgi_mounts():
    return [mount for a in registered() for mount in a.asgi_mounts()]


def caches():
    """``(name, clear)`` of every per-process cache the registered adapters keep."""
    return [cache for a in registered() for cache in a.caches()]


def clear_caches():
    """Empty every registered adapter's caches (``a2ui.infra.memory``, tests)."""
    for _, clear in caches():
        clear()
