"""A2UI v0.9 for people: the WebSocket /ws/v09/a2ui and the SSE stream of a session's surfaces."""

from a2ui.core.adapters import Adapter
from a2ui.core.events import Kind
from a2ui.v09.view import KINDS as VIEW_KINDS


def _websocket_urls():
    from django.urls import path

    from a2ui.v09.consumer import A2UIV09Consumer

    return [path("ws/v09/a2ui", A2UIV09Consumer.as_asgi())]


def _http_urls():
    from django.urls import path

    from a2ui.v09 import stream as streams

    # A plain async view, not DRF: the one HTTP endpoint that takes (only) a stream token.
    return [path(
        "api/v4/sessions/<uuid:session_id>/surfaces/stream",
        streams.surface_stream,
        name="a2ui-session-surfaces-stream",
    )]


async def _push_surfaces(agent_id, session_id, params, *, key=None, reply_channel="",
                         rpc_id=None, where="params"):
    from a2ui import surfaces

    return await surfaces.apush(agent_id, session_id, params.get("messages"), key)


def _rest_params(body):
    """The REST body: the batch itself (a non-empty JSON array)."""
    return {"messages": body} if isinstance(body, list) and body else None


def _agent_methods():
    from a2ui.core.agentmethods import AgentMethod, session_params
    from a2ui.core.surfaces import ACCEPTED_MIME_TYPES

    return (AgentMethod("a2ui.v09", session_params, _push_surfaces, shape="result",
                        tool="push_surfaces", sdk="asurfaces", rest="surfaces",
                        rest_params=_rest_params,
                        rest_refusal={"detail": "Send a non-empty JSON array of A2UI v0.9 "
                                                "messages."},
                        # the body is A2UI JSON: application/json, or labelled as such
                        # (application/a2ui+json; the drafts' application/json+a2ui)
                        rest_options={"v09_errors": True,
                                      "media_types": ACCEPTED_MIME_TYPES}),)


ADAPTER = Adapter(
    name="v09",
    token_type="stream_a2ui",  # its socket and SSE stream take seed 000's stream token
    agent_methods=_agent_methods,
    websocket_urls=_websocket_urls,
    http_urls=_http_urls,
    # surface.batch as it is; seed 000's components and requests translated (a2ui.v09.view)
    kinds=frozenset({Kind.SURFACE_BATCH}) | VIEW_KINDS,
    summary="A2UI v0.9 over WebSocket and SSE: docs/protocol-v09.md",
)
