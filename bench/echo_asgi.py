"""The bare Channels baseline of bench/bench_gate.py and bench/bench_push.py: an echo consumer.

``python -m daphne bench.echo_asgi:application`` with ``DJANGO_SETTINGS_MODULE`` set, or
``python manage.py a2ui_serve bench.echo_asgi.application`` (the project's settings, so the
consumer has the same channel layer a Channels app has). The echo
route is ``/ws/echo``; nothing of a2ui is on the WebSocket path.
"""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "a2ui_project.settings")
django_asgi_app = get_asgi_application()

from channels.generic.websocket import AsyncWebsocketConsumer  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.urls import path  # noqa: E402


class EchoConsumer(AsyncWebsocketConsumer):
    """Stock AsyncWebsocketConsumer: every frame goes back as it came."""

    async def receive(self, text_data=None, bytes_data=None):
        await self.send(text_data=text_data, bytes_data=bytes_data)


application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        "websocket": URLRouter([path("ws/echo", EchoConsumer.as_asgi())]),
    }
)
