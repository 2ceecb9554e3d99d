"""WebSocket URL routes of the app; a project mounts them behind A2UIAuthMiddleware."""

from django.urls import path

from .consumers.agent import A2UIAgentConsumer
from .consumers.surfaces import A2UIV09Consumer
from .consumers.user import A2UIUserConsumer

websocket_urlpatterns = [
    path("ws/v4/a2ui", A2UIUserConsumer.as_asgi()),
    path("ws/v4/a2ui/agent", A2UIAgentConsumer.as_asgi()),
    path("ws/v09/a2ui", A2UIV09Consumer.as_asgi()),
]
