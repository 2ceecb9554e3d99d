"""The toy protocol's registration: what it adds, read by the core."""

from a2ui.core.adapters import Adapter
from tests.toyproto import TOKEN_TYPE, wire


def _http_urls():
    from django.urls import path

    from tests.toyproto import stream

    return [path("toy/sessions/<uuid:session_id>/events", stream.events, name="toy-events")]


def _agent_methods():
    from a2ui.core.agentmethods import AgentMethod, session_params

    return (AgentMethod(name="toy.wave", validate=session_params, events=wire.wave,
                        sdk="toy_wave", tool="toy_wave", rest="messages",
                        summary="Wave at the person (a notification).",
                        properties={"to": {"type": "string", "maxLength": 40}},
                        required=("to",)),)


ADAPTER = Adapter(
    name="toy",
    http_urls=_http_urls,
    agent_methods=_agent_methods,
    token_type=TOKEN_TYPE,
    kinds=wire.KINDS,
    settings_defaults={"TOY_GREETING": "hello"},
    summary="A toy protocol: tests/toyproto (docs/adding-a-protocol.md)",
)
