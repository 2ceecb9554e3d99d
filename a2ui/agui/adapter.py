"""Seed 003, the AG-UI WebSocket event protocol, for people: /ws/agui (docs/protocol-agui.md)."""

from ..core.adapters import Adapter
from ..core.events import Kind
from .mapping import NOT_TRANSLATED


def _websocket_urls():
    from django.urls import path

    from .consumer import AguiConsumer

    return [path("ws/agui", AguiConsumer.as_asgi())]


async def _push_event(agent_id, session_id, params, *, key=None, reply_channel="",
                      rpc_id=None):
    from . import push

    return await push.apush(agent_id, session_id, params.get("event"), "params.event", key)


def _agent_methods():
    from ..adapters.v09 import _session_params
    from ..core.agentmethods import AgentMethod

    return (AgentMethod("agui.event", _session_params, _push_event, tool="agui_event",
                        sdk="aagui_event", rest="agui"),)


ADAPTER = Adapter(
    name="agui",
    agent_methods=_agent_methods,
    token_type="stream_agui",
    websocket_urls=_websocket_urls,
    kinds=frozenset(Kind) - NOT_TRANSLATED,
    summary="AG-UI WebSocket events (seed 003) for people: docs/protocol-agui.md",
)
