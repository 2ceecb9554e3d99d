"""Seed 000: the JSON-RPC 2.0 sockets, /ws/v4/a2ui (people) and /ws/v4/a2ui/agent (agents)."""

from a2ui.core.adapters import Adapter
from a2ui.core.events import Kind
from a2ui.jsonrpc import TOKEN_TYPE


def _websocket_urls():
    from django.urls import path

    from a2ui.jsonrpc.agent import A2UIAgentConsumer
    from a2ui.jsonrpc.consumer import A2UIUserConsumer

    return [
        path("ws/v4/a2ui", A2UIUserConsumer.as_asgi()),
        path("ws/v4/a2ui/agent", A2UIAgentConsumer.as_asgi()),
    ]


def _http_urls():
    from django.urls import path

    from a2ui.jsonrpc.views import SessionMessagesView

    # Seed 000's notifications over REST (the REST kit's base view and authentication).
    return [path("api/v4/sessions/<uuid:session_id>/messages", SessionMessagesView.as_view(),
                 name="a2ui-session-messages")]


def _seed_events(method):
    """A seed-000 push as the session event it is (``to_event``, sans-I/O)."""

    def events(params, key, where):
        from a2ui.core.content import methods as wire

        return [wire.to_event(method, params)], ""

    return events


def _seed_validate(method):
    def validate(params):
        from a2ui.core.content import methods as wire

        return wire.agent_message(method, params)

    return validate


def _agent_methods():
    from a2ui.core.agentmethods import AgentMethod

    pushes = [AgentMethod(f"ui.{name}", _seed_validate(f"ui.{name}"),
                          events=_seed_events(f"ui.{name}"), tool=name, sdk=f"a{name}",
                          rest="messages")
              for name in ("render", "update", "progress", "navigate", "notify")]
    asks = [AgentMethod(f"ui.{name}", _seed_validate(f"ui.{name}"),
                        events=_seed_events(f"ui.{name}"), shape="request", keyed=False,
                        awaits=True, tool=name, sdk=f"a{name}")
            for name in ("request_input", "confirm")]
    return (*pushes, *asks,
            AgentMethod("a2ui.sessions", shape="list", keyed=False, tool="list_sessions"),
            AgentMethod("a2ui.pending", shape="list", keyed=False, tool="pending_requests",
                        sdk="apending", rest="pending"))


def _caches():
    from a2ui.jsonrpc import events

    return (("protocol.events: encoded pushes per (session, epoch, seq)", events.clear_cache),)


ADAPTER = Adapter(
    name="jsonrpc",
    caches=_caches,
    websocket_urls=_websocket_urls,
    http_urls=_http_urls,
    agent_methods=_agent_methods,
    token_type=TOKEN_TYPE,
    kinds=frozenset(Kind) - {Kind.RUN_ENDED},  # a2ui.jsonrpc.events.notification
    summary="A2UI JSON-RPC 2.0 (seed 000): docs/protocol-jsonrpc.md",
)
