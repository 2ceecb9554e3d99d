"""The app's ASGI building blocks, so a project's asgi.py stays three lines."""

from channels.routing import URLRouter

from .middleware import A2UIAuthMiddleware
from .services import memory


class _CountedSockets:
    """Counts open WebSockets so that closed ones get their memory back (services.memory)."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        memory.socket_opened()
        try:
            return await self.app(scope, receive, send)
        finally:
            memory.socket_closed()


def websocket_application():
    """The app's WebSocket router behind its auth middleware."""
    from . import routing

    return _CountedSockets(A2UIAuthMiddleware(URLRouter(routing.websocket_urlpatterns)))
