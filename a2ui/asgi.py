"""The app's ASGI building blocks, so a project's asgi.py stays three lines."""

from channels.routing import URLRouter

from .middleware import A2UIAuthMiddleware


def websocket_application():
    """The app's WebSocket router behind its auth middleware."""
    from . import routing

    return A2UIAuthMiddleware(URLRouter(routing.websocket_urlpatterns))
