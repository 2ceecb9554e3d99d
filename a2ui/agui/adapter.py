"""Seed 003, the AG-UI WebSocket event protocol, for people: /ws/agui (docs/protocol-agui.md)."""

from ..core.adapters import Adapter
from ..core.events import Kind
from .mapping import NOT_TRANSLATED


def _websocket_urls():
    from django.urls import path

    from .consumer import AguiConsumer

    return [path("ws/agui", AguiConsumer.as_asgi())]


ADAPTER = Adapter(
    name="agui",
    websocket_urls=_websocket_urls,
    kinds=frozenset(Kind) - NOT_TRANSLATED,
    summary="AG-UI WebSocket events (seed 003) for people: docs/protocol-agui.md",
)
