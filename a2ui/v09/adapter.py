"""A2UI v0.9 for people: the WebSocket /ws/v09/a2ui and the SSE stream of a session's surfaces."""

from a2ui.core.adapters import Adapter
from a2ui.core.events import Kind
from a2ui.v09 import TOKEN_TYPE
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


#: Messages per agent batch.
MAX_BATCH = 500


def _events(params, key, where):
    """A batch of A2UI v0.9 server messages as one ``surface.batch`` event (validated as a
    whole against the stored surfaces when it is stored: ``a2ui.surfaces.store``)."""
    from a2ui.core.errors import DomainError, Fault

    messages = params.get("messages")
    if not isinstance(messages, list) or not messages:
        raise DomainError(
            Fault.INVALID_INPUT, "messages must be a non-empty array of A2UI v0.9 messages",
            data={"path": "params.messages"},
        )
    if len(messages) > MAX_BATCH:
        raise DomainError(
            Fault.INVALID_INPUT, f"At most {MAX_BATCH} messages per batch",
            data={"path": "params.messages"},
        )
    return [(Kind.SURFACE_BATCH, {"messages": messages})], ""


def _rest_params(body):
    """The REST body: the batch itself (a non-empty JSON array)."""
    return {"messages": body} if isinstance(body, list) and body else None


def _agent_methods():
    from a2ui.core.agentmethods import AgentMethod, session_params
    from a2ui.core.surfaces import ACCEPTED_MIME_TYPES

    return (AgentMethod("a2ui.v09", session_params, events=_events, shape="result",
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
    token_type=TOKEN_TYPE,  # its socket and SSE stream take seed 000's stream token
    agent_methods=_agent_methods,
    websocket_urls=_websocket_urls,
    http_urls=_http_urls,
    # surface.batch as it is; seed 000's components and requests translated (a2ui.v09.view)
    kinds=frozenset({Kind.SURFACE_BATCH}) | VIEW_KINDS,
    summary="A2UI v0.9 over WebSocket and SSE: docs/protocol-v09.md",
)
