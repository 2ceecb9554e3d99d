"""Seed 000: the JSON-RPC 2.0 sockets, /ws/v4/a2ui (people) and /ws/v4/a2ui/agent (agents)."""

from ..core.adapters import Adapter
from ..core.events import Kind


def _websocket_urls():
    from django.urls import path

    from ..consumers.agent import A2UIAgentConsumer
    from ..consumers.user import A2UIUserConsumer

    return [
        path("ws/v4/a2ui", A2UIUserConsumer.as_asgi()),
        path("ws/v4/a2ui/agent", A2UIAgentConsumer.as_asgi()),
    ]


ADAPTER = Adapter(
    name="jsonrpc",
    websocket_urls=_websocket_urls,
    kinds=frozenset(Kind) - {Kind.RUN_ENDED},  # a2ui.protocol.events.notification
    summary="A2UI JSON-RPC 2.0 (seed 000): docs/protocol-jsonrpc.md",
)
