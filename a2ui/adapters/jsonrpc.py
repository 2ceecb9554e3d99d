"""Seed 000: the JSON-RPC 2.0 sockets, /ws/v4/a2ui (people) and /ws/v4/a2ui/agent (agents)."""

from ..core.adapters import Adapter
from ..core.events import Kind
from ..protocol import events as wire

#: What a seed-000 person socket is sent: each kind with a notification (``wire.notification``),
#: and v0.9 surface batches to clients that declared ``"v0.9"``.
KINDS = frozenset(wire.METHOD_BY_KIND) | wire.ACTIVITY_KINDS | {Kind.REQUEST_OPENED,
                                                                Kind.SURFACE_BATCH}


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
    kinds=KINDS,
    summary="A2UI JSON-RPC 2.0 (seed 000): docs/protocol-jsonrpc.md",
)
