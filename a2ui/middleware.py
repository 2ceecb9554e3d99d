"""WebSocket authentication: read the credential a socket presents, decide nothing else.

The middleware resolves at most one credential per connection and puts the outcome in
``scope["a2ui_auth"]``; each consumer accepts only the kind it is for (seed 000 section 8.3):
user sockets take a ``stream_a2ui`` token from ``?token=``, agent sockets an agent key from
``Authorization: Bearer``. A session cookie or DRF token is never looked at, so it opens nothing.

:class:`ServiceUnavailableMiddleware` is Django (HTTP) middleware: a view failed by an outage of
the database or Redis answers a JSON 503 instead of an HTML 500.
"""

from dataclasses import dataclass
from urllib.parse import parse_qs

from django.utils.deprecation import MiddlewareMixin

from a2ui import tokens
from a2ui.infra import dbthreads, outages


@dataclass
class WebSocketAuth:
    token: object = None  # StreamToken
    agent: object = None  # Agent
    error: str | None = None
    refused_token: object = None  # a real StreamToken that was refused (expired, revoked)
    unavailable: bool = False  # the credential could not be checked: the database is away

    @property
    def user(self):
        return self.token.user if self.token is not None else None


def _query_token(scope):
    values = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("token")
    return values[0] if values else None


def _bearer(scope):
    for name, value in scope.get("headers", []):
        if name.lower() == b"authorization":
            scheme, _, raw = value.decode("latin-1").partition(" ")
            if scheme.lower() == "bearer" and raw.strip():
                return raw.strip()
    return None


def resolve(scope):
    """Return the WebSocketAuth for a connection scope (one DB lookup at most)."""
    bearer = _bearer(scope)
    query = _query_token(scope)
    try:
        if bearer and tokens.looks_like_agent_key(bearer):
            return WebSocketAuth(agent=tokens.verify_agent_key(bearer))
        if query:
            return WebSocketAuth(token=tokens.verify_stream_token(query))
    except tokens.TokenError as exc:
        return WebSocketAuth(error=exc.reason, refused_token=exc.record)
    return WebSocketAuth(error="No credential presented.")


class A2UIAuthMiddleware:
    """ASGI middleware that sets ``scope["a2ui_auth"]`` on WebSocket connections."""

    def __init__(self, inner):
        self.inner = inner

    async def __call__(self, scope, receive, send):
        if scope["type"] == "websocket":
            # On the per-message pool, not the one thread-sensitive thread: while many sockets
            # open at once, their handshakes must not queue behind every session's a2ui.init
            # (Daphne drops a handshake not answered within 5 s).
            try:
                auth = await dbthreads.run(resolve, scope)
            except Exception as exc:  # an outage: the socket is told, not Daphne's traceback
                if not outages.report(exc, "WebSocket authentication"):
                    raise
                auth = WebSocketAuth(error=f"Service unavailable ({outages.cause(exc)}); "
                                     "retry shortly.", unavailable=True)
            scope = dict(scope, a2ui_auth=auth)
        return await self.inner(scope, receive, send)


class ServiceUnavailableMiddleware(MiddlewareMixin):
    """Django middleware: a view failed by an unreachable database or Redis is answered 503
    with a JSON message and ``Retry-After`` (one log line, ``services.outages``), not Django's
    HTML 500 with a traceback in the log. First in ``MIDDLEWARE`` (docs/operations.md)."""

    def process_exception(self, request, exception):
        if not outages.report(exception, outages.http_what(request)):
            return None
        from django.http import JsonResponse

        response = JsonResponse(
            {"detail": f"Service unavailable ({outages.cause(exception)}); retry shortly."},
            status=503, headers={"Retry-After": "2"})
        response._has_been_logged = True  # the outage's line says it: not Django's ERROR too
        return response
