"""Registering remote agents: the ``a2ui_agent`` command, the admin and ``A2UI['AGENTS']`` all
come here. A remote agent is an ``a2ui.models.Agent`` (sessions, caps, consent, audit and
presence as for any agent) with a ``RemoteAgent`` transport; its API key is made as for any
agent and not shown (``a2ui_agent rotate`` issues one if it also pushes by itself).
"""

import logging

from asgiref.sync import async_to_sync
from django.db import IntegrityError, transaction

from a2ui import tokens
from a2ui.models import Agent
from a2ui.models.remote import RemoteAgent
from a2ui.remote import clients, net, policy, port, store

log = logging.getLogger("a2ui.remote")
MAX_HEADERS = 20
#: Headers an operator may not set (the transport's own).
RESERVED = frozenset({"host", "content-length", "transfer-encoding", "connection",
                      "content-type", "accept", "upgrade", "te", "trailer", "keep-alive",
                      "proxy-authorization", "proxy-connection"})


class Refused(ValueError):
    """Not registered: ``str(exc)`` says why (never a header value)."""


def parse_header(text):
    """``"Name: value"`` -> (name, value); Refused otherwise (the value never echoed)."""
    name, sep, value = str(text).partition(":")
    name, value = name.strip(), value.strip()
    if not sep or not name or not value:
        raise Refused("A header is 'Name: value'.")
    if not all(c.isalnum() or c in "-_" for c in name) or len(name) > 100:
        raise Refused(f"Not a header name: {name[:100]!r}.")
    if name.lower() in RESERVED:
        raise Refused(f"The header {name!r} is the transport's own.")
    if any(ord(c) < 32 and c != "\t" or ord(c) == 127 for c in value) or len(value) > 8000:
        raise Refused(f"The value of {name!r} has control characters or is too long.")
    return name, value


def parse_headers(texts):
    headers = {}
    for text in texts or ():
        name, value = parse_header(text)
        if name.lower() in {k.lower() for k in headers}:
            raise Refused(f"The header {name!r} is given twice.")
        headers[name] = value
    if len(headers) > MAX_HEADERS:
        raise Refused(f"At most {MAX_HEADERS} headers.")
    return headers


def check_url(url):
    """The URL is http(s), without user info, on an allowed host (Refused otherwise)."""
    from a2ui.conf import a2ui_settings

    try:
        policy.check_url(url, policy.parse_hosts(a2ui_settings.REMOTE_AGENT_HOSTS))
    except (policy.Refused, ValueError) as exc:
        raise Refused(f"The URL is not allowed: {exc}.") from None


async def _prepare(kind, url, headers):
    from a2ui.conf import a2ui_settings

    client = net.new_client(policy.parse_hosts(a2ui_settings.REMOTE_AGENT_HOSTS),
                            connect_seconds=a2ui_settings.REMOTE_AGENT_CONNECT_TIMEOUT_SECONDS,
                            idle_seconds=a2ui_settings.REMOTE_AGENT_IDLE_TIMEOUT_SECONDS)
    try:
        return await clients.prepare(kind, url, headers, client)
    except clients.UpstreamError as exc:
        raise Refused(exc.message) from None
    except clients.Registration as exc:
        raise Refused(str(exc)) from None
    finally:
        await client.aclose()


def prepare(kind, url, headers):
    """What to store for a ``kind`` agent at ``url`` (an A2A client reads the card)."""
    if kind not in clients.kinds():
        raise Refused(f"Unknown kind {kind!r}: one of {', '.join(clients.kinds())}.")
    try:
        clients.client_for(kind)
    except ImportError as exc:
        raise Refused(f"Agents of kind {kind!r} cannot be served here ({exc.name or exc} is "
                      "missing).") from None
    check_url(url)
    return async_to_sync(_prepare)(kind, url, headers)


def create(name, kind, url, headers=None, *, actor=None, display_name="", owner=None,
           max_sessions=None, max_runs=None):
    """A new remote agent (an Agent and its transport), audited; Refused when it cannot be."""
    if not port.AGENT_NAME_RE.match(name or ""):
        raise Refused("Agent names are 1-64 letters, digits, '-' or '_'.")
    if Agent.objects.filter(name=name).exists():
        raise Refused(f"An agent named {name!r} already exists.")
    if max_runs is not None and max_runs <= 0:
        raise Refused("--max-runs must be a positive integer.")
    headers = headers or {}
    prepared = prepare(kind, url, headers)
    display_name = display_name or prepared.get("display_name") or ""
    try:
        with transaction.atomic():
            agent, _key = port.create_agent(
                name, owner=owner, actor=actor, display_name=display_name[:100],
                max_concurrent_sessions=max_sessions)
            store.register(agent, kind, prepared.get("url") or url, headers,
                           prepared.get("config") or {}, max_runs=max_runs)
    except IntegrityError:
        raise Refused(f"An agent named {name!r} already exists.") from None
    port.record_audit("remote_agent.register", actor=actor, agent=agent, target=agent,
                 details={"kind": kind, "url": (prepared.get("url") or url)[:500],
                          "headers": sorted(headers)})
    _forget()
    return agent


def update(agent, *, url=None, headers=None, actor=None, max_runs=None):
    """Change a remote agent's URL or headers (``headers`` None: kept; {}: removed)."""
    remote = RemoteAgent.objects.filter(agent=agent).first()
    if remote is None:
        raise Refused(f"{agent.name!r} is not a remote agent.")
    url = remote.url if url is None else url
    config = remote.config
    if url != remote.url and not remote.in_process:
        prepared = prepare(remote.kind, url, headers or {})
        url, config = prepared.get("url") or url, prepared.get("config") or {}
    store.register(agent, remote.kind, url, headers, config, remote.in_process, max_runs)
    port.record_audit("remote_agent.change", actor=actor, agent=agent, target=agent,
                 details={"url": url[:500], **({"headers": sorted(headers)}
                                               if headers is not None else {})})
    _forget()


def audited_change(agent, actor, fields, url, headers):
    """An operator changed a transport in the admin: audited (header names only)."""
    port.record_audit("remote_agent.change", actor=actor, agent=agent, target=agent,
                      details={"fields": [f for f in fields if f != "remove_headers"],
                               "url": url[:500],
                               **({"headers": sorted(headers)} if headers is not None else {})})
    _forget()


def describe(agent):
    """A remote agent as listings show it: header names, never values."""
    remote = getattr(agent, "remote", None)
    if remote is None:
        return None
    return {"kind": remote.kind, "url": remote.url, "in_process": remote.in_process,
            "headers": list(remote.header_names), "max_runs": remote.max_concurrent_runs}


def sync_in_process():
    """Create or update the agents of ``A2UI['AGENTS']`` (``name -> import string``, or
    ``{"app": ..., "path": ...}``): each an AG-UI agent run in this process. Returns their
    names."""
    from a2ui.conf import a2ui_settings

    done = []
    for name, spec in (a2ui_settings.AGENTS or {}).items():
        target, path = (spec.get("app"), spec.get("path") or "/") if isinstance(
            spec, dict) else (spec, "/")
        if not isinstance(target, str) or not port.AGENT_NAME_RE.match(str(name)):
            log.warning("a2ui: A2UI['AGENTS'][%r] is not 'name': 'module:attribute'", name)
            continue
        with transaction.atomic():
            agent = Agent.objects.select_for_update().filter(name=name).first()
            if agent is None:
                agent, _ = tokens.create_agent(name)
                port.record_audit("remote_agent.register", agent=agent, target=agent,
                             details={"kind": "agui", "in_process": target})
            remote = RemoteAgent.objects.filter(agent=agent).first()
            if remote is None or remote.in_process != target or remote.config.get(
                    "path", "/") != path:
                store.register(agent, RemoteAgent.KIND_AGUI, "", None, {"path": path},
                               target)
        done.append(name)
    _forget()
    return done


def preload_in_process():
    """Import the in-process agents of ``A2UI['AGENTS']`` now (a server's start)."""
    from a2ui.conf import a2ui_settings
    from a2ui.remote import agents

    for spec in (a2ui_settings.AGENTS or {}).values():
        target = spec.get("app") if isinstance(spec, dict) else spec
        if isinstance(target, str):
            try:
                agents.preload(target)
            except Exception as exc:
                log.warning("a2ui: the in-process agent %s could not be imported: %s", target,
                            exc)


def sync_in_process_safely():
    """:func:`sync_in_process` at a server's start: a database not migrated yet is logged,
    not fatal."""
    try:
        names = sync_in_process()
    except Exception as exc:
        log.warning("a2ui: the in-process agents of A2UI['AGENTS'] were not registered: %s", exc)
        names = []
    preload_in_process()
    return names


def _forget():
    from a2ui.remote import agents

    agents.forget()
