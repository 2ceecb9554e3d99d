"""The app's ASGI building blocks, so a project's asgi.py stays three lines:

    import os
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mysite.settings")
    from a2ui.asgi import get_asgi_application
    application = get_asgi_application()

``get_asgi_application()`` sets Django up, then routes HTTP to Django (with the static files the
web client needs when ``A2UI['SERVE_STATIC']`` is on: Daphne has no static server; the health
probes answered in front of it, ``a2ui.probes``) and WebSocket
to the app's consumers behind their auth middleware. A project that routes more WebSocket paths
builds its own ``ProtocolTypeRouter`` from :func:`http_application` and
:func:`websocket_application`.
"""

from channels.routing import URLRouter

from a2ui.infra import memory, prom


class _CountedSockets:
    """Counts open WebSockets so that closed ones get their memory back (services.memory)."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        memory.socket_opened()
        protocol = None
        if prom.ON:
            protocol = socket_protocol(scope.get("path", ""))
            prom.socket_opened(protocol)
        try:
            return await self.app(scope, receive, send)
        finally:
            memory.socket_closed()
            if protocol is not None:
                prom.socket_closed(protocol)


class _CountedStreams:
    """Counts open server-sent event streams (a response of ``text/event-stream``: the AG-UI
    1.0 runs, the MCP streams, the SSE stream) as sockets: a mass close of streams gets its
    memory back as one of sockets does (services.memory)."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        streaming = False

        async def counted(message):
            nonlocal streaming
            if message["type"] == "http.response.start" and not streaming and any(
                    k.lower() == b"content-type" and v.startswith(b"text/event-stream")
                    for k, v in message.get("headers", ())):
                streaming = True
                memory.socket_opened()
            await send(message)

        try:
            return await self.app(scope, receive, counted)
        finally:
            if streaming:
                memory.socket_closed()


def socket_protocol(path):
    """The metrics' protocol label of a WebSocket path: its first segment after ``ws``
    (``/ws/v4/a2ui/agent``: ``v4.a2ui.agent``), bounded (``prom.label``)."""
    parts = [p for p in path.split("/") if p and p != "ws"]
    return prom.label(".".join(parts[:3]) or "other")


def websocket_application():
    """The app's WebSocket router behind its auth middleware."""
    from a2ui import routing
    from a2ui.middleware import A2UIAuthMiddleware

    return _CountedSockets(A2UIAuthMiddleware(URLRouter(routing.websocket_urlpatterns)))


def http_application():
    """Django's ASGI handler, serving /static/ itself when ``A2UI['SERVE_STATIC']`` is on, behind
    the handoff of long streams (``a2ui.handoff.StreamHandoff``: a run's or a surface stream's
    body is sent once Django has ended its request) and the health probes
    (``a2ui.probes.ProbeRoutes``: answered on the event loop, before any middleware)."""
    from django.core.asgi import get_asgi_application as django_asgi_application

    app = django_asgi_application()
    from a2ui import probes
    from a2ui.conf import a2ui_settings

    if a2ui_settings.SERVE_STATIC:
        # Through the staticfiles finders (the app's modules, the vendored renderer). Turn it
        # off behind a web server that serves STATIC_ROOT itself.
        app = _static_files_handler()(app)
    from a2ui.handoff import StreamHandoff
    from a2ui.infra import prom

    prom.setup()
    return probes.ProbeRoutes(StreamHandoff(app))


def _static_files_handler():
    """Django's ASGIStaticFilesHandler, answering a path that climbs out of the static roots
    (``/static/../../etc/passwd``) 400 as Django's own handler would: Django's lets the
    SuspiciousFileOperation escape, a 500 with a traceback in the server log. Its files carry
    ``Access-Control-Allow-Origin: *`` (whitenoise's default too)."""
    from asgiref.sync import sync_to_async
    from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler
    from django.core.exceptions import SuspiciousOperation
    from django.core.handlers.exception import response_for_exception

    class StaticFiles(ASGIStaticFilesHandler):
        async def get_response_async(self, request):
            try:
                response = await super().get_response_async(request)
            except SuspiciousOperation as exc:
                return await sync_to_async(response_for_exception, thread_sensitive=False)(
                    request, exc)
            # Public files, readable from any origin: the admin's sandboxed replay frame (an
            # opaque origin) loads the client's modules, which browsers fetch with CORS.
            response.setdefault("Access-Control-Allow-Origin", "*")
            return response

    return StaticFiles


class _Mounts:
    """HTTP requests under a registered adapter's path prefix go to its ASGI app (built on
    first use); everything else to Django."""

    def __init__(self, app, mounts):
        self.app = app
        self.mounts = [(prefix.rstrip("/"), factory) for prefix, factory in mounts]
        self.built = {}

    async def __call__(self, scope, receive, send):
        path = scope.get("path", "")
        for prefix, factory in self.mounts:
            if path == prefix or path.startswith(prefix + "/"):
                app = self.built.get(prefix)
                if app is None:
                    app = self.built[prefix] = factory()
                return await app(scope, receive, send)
        return await self.app(scope, receive, send)


def get_asgi_application():
    """HTTP and WebSocket for a project that serves a2ui under Daphne (see module docs)."""
    http = http_application()  # sets Django up before any consumer is imported
    from channels.routing import ProtocolTypeRouter

    from a2ui.core import adapters

    mounts = adapters.asgi_mounts()
    if mounts:
        http = _Mounts(http, mounts)
    for adapter in adapters.registered():
        if adapter.on_start is not None:
            adapter.on_start()
    return ProtocolTypeRouter({"http": _CountedStreams(http),
                               "websocket": websocket_application()})
