"""Seed 003, the AG-UI WebSocket event protocol, for people: /ws/agui (docs/protocol-agui.md)."""

from a2ui.agui import TOKEN_TYPE
from a2ui.agui.mapping import NOT_TRANSLATED
from a2ui.core.adapters import Adapter
from a2ui.core.events import Kind


def _websocket_urls():
    from django.urls import path

    from a2ui.agui.consumer import AguiConsumer

    return [path("ws/agui", AguiConsumer.as_asgi())]


def _events(params, key, where):
    from a2ui.agui import push

    return push.events(params, key, where)


def _reword(exc, key, where):
    from a2ui.agui import push

    return push.reword(exc, key, where)


def _rest_params(body):
    """The REST body ``{"event": {...}}``: the params themselves."""
    return body if isinstance(body, dict) and isinstance(body.get("event"), dict) else None


def _agent_methods():
    from a2ui.core.agentmethods import AgentMethod, session_params

    return (AgentMethod("agui.event", session_params, events=_events, reword=_reword,
                        tool="agui_event",
                        sdk="aagui_event", rest="agui", rest_params=_rest_params,
                        rest_refusal={"event": ["Send {\"event\": <an AG-UI event object>}."]}),)


def _caches():
    from a2ui.agui import mapping

    return (("agui.mapping: encoded AG-UI events per (session, epoch, seq)",
             mapping.clear_cache),)


ADAPTER = Adapter(
    name="agui",
    caches=_caches,
    agent_methods=_agent_methods,
    token_type=TOKEN_TYPE,
    websocket_urls=_websocket_urls,
    kinds=frozenset(Kind) - NOT_TRANSLATED,
    summary="AG-UI WebSocket events (seed 003) for people: docs/protocol-agui.md",
)
