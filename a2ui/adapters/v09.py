"""A2UI v0.9 for people: the WebSocket /ws/v09/a2ui and the SSE stream of a session's surfaces."""

from ..core.adapters import Adapter
from ..core.events import Kind
from ..v09.view import KINDS as VIEW_KINDS


def _websocket_urls():
    from django.urls import path

    from ..consumers.surfaces import A2UIV09Consumer

    return [path("ws/v09/a2ui", A2UIV09Consumer.as_asgi())]


def _http_urls():
    from django.urls import path

    from ..api import streams

    # A plain async view, not DRF: the one HTTP endpoint that takes (only) a stream token.
    return [path(
        "api/v4/sessions/<uuid:session_id>/surfaces/stream",
        streams.surface_stream,
        name="a2ui-session-surfaces-stream",
    )]


ADAPTER = Adapter(
    name="v09",
    websocket_urls=_websocket_urls,
    http_urls=_http_urls,
    # surface.batch as it is; seed 000's components and requests translated (a2ui.v09.view)
    kinds=frozenset({Kind.SURFACE_BATCH}) | VIEW_KINDS,
    summary="A2UI v0.9 over WebSocket and SSE: docs/protocol-v09.md",
)
