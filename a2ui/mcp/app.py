"""The ASGI app at ``/mcp``: authentication, Host/Origin checks, and the SDK's session manager.

Every HTTP request (POST, GET, DELETE) carries ``Authorization: Bearer``: an agent key (the
agent's tools) or a ``stream_mcp`` token (that person's UI). Anything else gets 401 with
``WWW-Authenticate`` before the SDK sees the request. The principal travels in the ASGI scope:
``scope["a2ui_mcp"]`` for the handlers, ``scope["user"]`` (the SDK's ``AuthenticatedUser``) so
that the SDK refuses an MCP session id presented with another credential (404, as if unknown).

Daphne sends no ASGI lifespan, so :class:`Runner` enters the SDK's
``StreamableHTTPSessionManager.run()`` itself: in a task of the serving event loop, started by
the first request, once per process; :meth:`Runner.stop` (the adapter's ``on_stop``, run by
``a2ui.serving`` on SIGTERM) ends it, which ends every MCP session's tasks so Daphne exits.
"""

import asyncio
import contextvars
import json
import logging
from dataclasses import dataclass
from urllib.parse import urlsplit

from channels.db import database_sync_to_async

from a2ui.conf import a2ui_settings

log = logging.getLogger("a2ui.mcp")

REALM = 'Bearer realm="a2ui-mcp"'


@dataclass(frozen=True)
class Principal:
    """Who calls: an agent (``agent`` set, ``token`` None) or a person (``token`` set)."""

    kind: str  # "agent" | "person"
    agent: object = None
    token: object = None

    @property
    def client_id(self):
        if self.kind == "agent":
            return f"agent:{self.agent.pk}:{self.agent.key_prefix}"
        return f"person:{self.token.jti.hex}"


def _bearer(scope):
    for name, value in scope.get("headers", []):
        if name == b"authorization":
            scheme, _, raw = value.decode("latin-1").partition(" ")
            if scheme.lower() == "bearer" and raw.strip():
                return raw.strip()
    return None


def authenticate(raw):
    """The Principal for a bearer credential, or a TokenError (sync: one database query)."""
    from a2ui import tokens
    from a2ui.mcp import TOKEN_TYPE

    if not raw:
        raise tokens.TokenError("An agent key or a stream_mcp token is required.")
    if tokens.looks_like_agent_key(raw):
        return Principal("agent", agent=tokens.verify_agent_key(raw))
    kind = tokens.peek_any_stream_token(raw)
    if kind is not None and kind != TOKEN_TYPE:
        raise tokens.TokenError(f"A {kind} token is not valid here: use a stream_mcp token.")
    record = tokens.verify_stream_token(raw, TOKEN_TYPE)
    return Principal("person", agent=record.agent, token=record)


async def _respond(send, status, body, headers=()):
    payload = json.dumps(body).encode()
    await send({
        "type": "http.response.start", "status": status,
        "headers": [(b"content-type", b"application/json"),
                    (b"content-length", str(len(payload)).encode()), *headers],
    })
    await send({"type": "http.response.body", "body": payload})


def _unauthorized(reason):
    from a2ui.infra import prom

    if prom.ON:
        prom.refused("mcp", "auth_failed")
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": -32001, "message": reason}}
    description = reason.replace('"', "'").replace("\\", "/")
    challenge = f'{REALM}, error="invalid_token", error_description="{description}"'
    return body, [(b"www-authenticate", challenge.encode("latin-1", "replace"))]


def _isolated(coro):
    """``coro`` run in a copy of the current context. A database call (``sync_to_async``)
    copies into its caller's context a storage of every ``asgiref.local.Local`` it touched
    (Django's, about 4 KB a request): a request's context lives as long as the request (the
    GET stream, for hours) and the MCP session keeps its requests' contexts (its tasks start
    in the opening request's; the SDK hands each handler its sender's context). In a copy,
    they go when the call returns."""
    return asyncio.get_running_loop().create_task(coro, context=contextvars.copy_context())


async def _authenticate(scope):
    """The request's principal. A connection the database dropped while it was away fails
    once when next used: that failure is retried once, on a fresh connection (a database that
    is still away fails again, and the request is answered 503)."""
    from a2ui.infra import outages

    try:
        return await _isolated(database_sync_to_async(authenticate)(_bearer(scope)))
    except Exception as exc:
        if not outages.connection_lost(exc):
            raise
    return await _isolated(database_sync_to_async(authenticate)(_bearer(scope)))


def unavailable_body(exc):
    """The JSON-RPC error answering a request that an outage of the database or Redis failed."""
    from a2ui.infra import outages

    return {"jsonrpc": "2.0", "id": None, "error": {
        "code": -32603, "message": f"Service unavailable ({outages.cause(exc)}); retry shortly."}}


def transport_security(allowed_hosts):
    """The SDK's ``TransportSecuritySettings`` from Django's ``ALLOWED_HOSTS``.

    Exact names allow that Host on any port and the http(s) Origins of it. The SDK has no
    subdomain wildcard: with ``*`` or a ``.example.com`` entry its check is off and
    :func:`host_allowed` (Django's own matching) decides instead.
    """
    from mcp.server.transport_security import TransportSecuritySettings

    if any(h == "*" or h.startswith(".") for h in allowed_hosts):
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    hosts, origins = [], []
    for host in allowed_hosts:
        hosts += [host, f"{host}:*"]
        origins += [f"{scheme}://{host}{port}" for scheme in ("http", "https")
                    for port in ("", ":*")]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins)


def host_allowed(scope, allowed_hosts):
    """Django's Host and Origin matching (wildcards included); True when both pass."""
    from django.http.request import split_domain_port, validate_host

    headers = dict(scope.get("headers", []))
    host = headers.get(b"host", b"").decode("latin-1")
    domain, _ = split_domain_port(host)
    if not domain or not validate_host(domain, allowed_hosts):
        return False
    origin = headers.get(b"origin")
    if origin:
        netloc = urlsplit(origin.decode("latin-1")).netloc
        domain, _ = split_domain_port(netloc)
        if not domain or not validate_host(domain, allowed_hosts):
            return False
    return True


async def _checked_body(receive, limit):
    """(a receive that replays the body, the JSON-RPC error refusing it or None). A body past
    ``limit`` is not checked: the SDK answers it 413."""
    from a2ui.mcp.envelope import check

    chunks, size, message = [], 0, None
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        size += len(chunks[-1])
        if not message.get("more_body") or (limit is not None and size > limit):
            break
    body = b"".join(chunks)
    complete = message["type"] == "http.request" and not message.get("more_body")
    refused = check(body) if complete else None
    replayed = False

    async def replay():
        nonlocal replayed
        if not replayed:
            replayed = True
            if message["type"] != "http.request":
                return message
            return {"type": "http.request", "body": body,
                    "more_body": bool(message.get("more_body"))}
        return await receive()

    return replay, refused


class Gone:
    """Set when a request's client hangs up: ``asyncio.Event``'s ``set``, ``is_set`` and
    ``wait``, with a future only while one waits (an idle MCP session keeps the scope of its
    client's last notification, and with it this, for hours: an ``asyncio.Event`` and its
    deque are about 700 bytes)."""

    __slots__ = ("done", "waiter")

    def __init__(self):
        self.done, self.waiter = False, None

    def set(self):
        self.done = True
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(True)

    def is_set(self):
        return self.done

    async def wait(self):
        if self.done:
            return True
        if self.waiter is None or self.waiter.done():
            self.waiter = asyncio.get_running_loop().create_future()
        return await asyncio.shield(self.waiter)


def _watching(receive, gone):
    """``receive`` that sets ``gone`` when it reads ``http.disconnect``."""

    async def watched():
        message = await receive()
        if message.get("type") == "http.disconnect":
            gone.set()
        return message

    return watched


class Runner:
    """The SDK session manager's ``run()``, entered once per process in the serving loop."""

    def __init__(self, manager):
        self.manager = manager
        self.task = None
        self.ready = None
        self.stopping = None
        self.loop = None

    async def ensure(self):
        if self.task is None:
            self.loop = asyncio.get_running_loop()
            self.ready, self.stopping = asyncio.Event(), asyncio.Event()
            self.task = self.loop.create_task(self._run(), name="a2ui-mcp-session-manager")
        if not self.ready.is_set():
            waiter = asyncio.ensure_future(self.ready.wait())
            done, _ = await asyncio.wait({waiter, self.task}, return_when=asyncio.FIRST_COMPLETED)
            if waiter not in done:
                waiter.cancel()
                raise RuntimeError("the MCP session manager stopped")

    async def _run(self):
        async with self.manager.run():
            self.ready.set()
            await self.stopping.wait()

    async def stop(self, timeout=3.0):
        if self.task is None or self.task.done():
            return
        self.stopping.set()
        try:
            await asyncio.wait_for(asyncio.shield(self.task), timeout)
        except (TimeoutError, asyncio.CancelledError):
            self.task.cancel()
        except Exception:
            log.warning("a2ui: the MCP session manager failed while stopping", exc_info=True)


def json_errors(send):
    """``send`` that turns an HTTP error answered in plain text (the SDK's 413 "Request body
    too large", 400 "Invalid Content-Type header", ...) into a JSON-RPC error body with
    ``Content-Type: application/json``; everything else passes through."""
    from a2ui.mcp.opening import json_error

    held = {}

    async def wrapped(message):
        if message["type"] == "http.response.start":
            headers = message.get("headers", [])
            content_type = next((v.split(b";")[0].strip().lower() for k, v in headers
                                 if k.lower() == b"content-type"), b"")
            if message["status"] >= 400 and content_type != b"application/json":
                held.update(start=message, body=b"", type=content_type)
                return
        elif message["type"] == "http.response.body" and held:
            held["body"] += message.get("body", b"")
            if message.get("more_body"):
                return
            start = held.pop("start")
            body = json.dumps(json_error(start["status"], held["type"], held["body"]),
                              separators=(",", ":")).encode()
            held.clear()
            headers = [(k, v) for k, v in start.get("headers", [])
                       if k.lower() not in (b"content-type", b"content-length")]
            await send({"type": "http.response.start", "status": start["status"],
                        "headers": [(b"content-type", b"application/json"),
                                    (b"content-length", str(len(body)).encode()), *headers]})
            await send({"type": "http.response.body", "body": body})
            return
        await send(message)

    return wrapped


def opens_session(scope):
    """A POST without ``Mcp-Session-Id``: it opens an MCP session (or, on the 2026-07-28
    revision, is a self-contained request)."""
    return scope.get("method") == "POST" and not any(
        name == b"mcp-session-id" for name, _ in scope.get("headers", []))


def _cap_refusal(exc):
    return {"jsonrpc": "2.0", "id": None,
            "error": {"code": -32001, "message": exc.message, "data": exc.data}}


class MCPApp:
    """ASGI: authenticate, check Host/Origin, then hand the request to the SDK."""

    def __init__(self, server, allowed_hosts, **manager_options):
        from a2ui.mcp.manager import SessionManager

        self.allowed_hosts = list(allowed_hosts)
        self.max_body = manager_options.get("max_request_body_size")
        self.security = transport_security(self.allowed_hosts)
        # With Redis, each MCP session's SSE streams are resumable (a2ui.mcp.eventstore).
        self.manager = SessionManager(
            app=server, security_settings=self.security, **manager_options)
        self.runner = Runner(self.manager)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return
        await self.serve(scope, receive, json_errors(send))

    async def serve(self, scope, receive, send):
        if not self.security.enable_dns_rebinding_protection and not host_allowed(
                scope, self.allowed_hosts):
            await _respond(send, 421 if b"origin" not in dict(scope["headers"]) else 403,
                           {"error": "Host or Origin not allowed"})
            return
        from a2ui import tokens
        from a2ui.infra import outages

        try:
            principal = await _authenticate(scope)
        except tokens.TokenError as exc:
            body, headers = _unauthorized(exc.reason)
            await _respond(send, 401, body, headers)
            return
        except Exception as exc:  # the database is unreachable: 503, not Daphne's HTML 500
            if not outages.report(exc, f"{scope.get('method')} /mcp authentication"):
                raise
            await _respond(send, 503, unavailable_body(exc), [(b"retry-after", b"2")])
            return
        from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
        from mcp.server.auth.provider import AccessToken

        scope = dict(scope)
        scope["user"] = AuthenticatedUser(AccessToken(
            token="-", client_id=principal.client_id, scopes=[principal.kind]))
        if scope.get("method") == "POST":
            # The handlers' caller. A GET or DELETE runs no handler: a GET stream, open for
            # hours, need not keep the principal's rows.
            scope["a2ui_mcp"] = principal
            receive, refused = await _checked_body(receive, self.max_body)
            if refused is not None:  # a2ui.mcp.envelope: before the SDK reads it
                await _respond(send, 400, refused)
                return
            # Set when the client hangs up (a2ui.mcp.agent: request_input stops waiting). On the
            # handshake era the SDK keeps a call running after its stream closed.
            gone = scope["a2ui_mcp_gone"] = Gone()
            receive = _watching(receive, gone)
        lease = None
        if opens_session(scope):  # the caps (a2ui.infra.caps), before any state is kept
            from a2ui.infra import caps
            from a2ui.mcp.manager import LEASE

            try:
                lease = await caps.acquire_mcp(principal, caps.address_of(scope))
            except caps.CapReached as exc:
                from a2ui.infra import prom

                if prom.ON:
                    prom.refused("mcp", -32001)
                await _respond(send, 429, _cap_refusal(exc),
                               [(b"retry-after", b"%d" % a2ui_settings.CAP_LEASE_SECONDS)])
                return
            scope[LEASE] = lease
        principal = None  # the scope has it where a handler needs it (a GET stream: nowhere)
        try:
            await self.runner.ensure()
            await self.manager.handle_request(scope, receive, send)
        finally:
            if lease is not None and not lease.adopted:  # no session took it over
                await lease.release_shielded()
