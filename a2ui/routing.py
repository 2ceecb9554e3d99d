"""WebSocket URL routes of the app: each registered protocol's (``A2UI['ADAPTERS']``).

A project mounts them behind A2UIAuthMiddleware (``a2ui.asgi.websocket_application``).
"""

from a2ui.core import adapters

websocket_urlpatterns = adapters.websocket_urls()
