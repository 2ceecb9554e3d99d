"""Registry entry of MCP (``A2UI['ADAPTERS']``): the Streamable HTTP endpoint ``/mcp``.

The ASGI app is built on the first request under ``/mcp`` (``a2ui.asgi`` mounts it ahead of
Django); ``on_stop`` ends the SDK's session manager so Daphne exits promptly on SIGTERM.
"""

from a2ui.core.activity import KINDS as ACTIVITY
from a2ui.core.adapters import Adapter
from a2ui.core.events import Kind
from a2ui.mcp import TOKEN_TYPE

_app = None


def build_app():
    """The one MCPApp of this process."""
    global _app
    if _app is None:
        from django.conf import settings

        from a2ui.conf import a2ui_settings
        from a2ui.infra import shared
        from a2ui.mcp.app import MCPApp
        from a2ui.mcp.server import build_server

        # Request bodies past the payload limit get 413 before they are parsed. With Redis,
        # SSE streams are resumable (a2ui.mcp.eventstore). Idle sessions end after
        # MCP_SESSION_IDLE_SECONDS (the SDK's default is 30 minutes).
        _app = MCPApp(build_server(), settings.ALLOWED_HOSTS,
                      max_request_body_size=a2ui_settings.MAX_PAYLOAD_SIZE,
                      session_idle_timeout=a2ui_settings.MCP_SESSION_IDLE_SECONDS,
                      max_sessions=a2ui_settings.MCP_MAX_SESSIONS_PER_PROCESS,
                      client_factory=shared.redis_client if a2ui_settings.REDIS_URL else None)
    return _app


async def stop():
    import sys

    # Only what ran needs stopping: importing the MCP SDK here (never used by this process)
    # held the event loop for a second or more of the shutdown grace.
    listen = sys.modules.get("a2ui.mcp.listen")
    if listen is not None:
        listen.close_all()  # graceful: each stream ends with its SubscriptionsListenResult
    if _app is not None:
        await _app.runner.stop()


#: The A2UI settings only MCP reads (docs/settings.md): an MCP session with no request in flight
#: for MCP_SESSION_IDLE_SECONDS is ended (its id then answers 404), at most
#: MCP_MAX_SESSIONS_PER_PROCESS per process (the SDK's session manager); the show_session app
#: reads its session again every MCP_APP_REFRESH_SECONDS (a2ui.mcp.sessionapp); test-only:
#: MCP_CONFORMANCE_FIXTURES puts the MCP conformance suite's fixture tools, resources and
#: prompts on /mcp (a2ui.mcp.fixtures; refused with DEBUG off by a2ui.checks).
SETTINGS_DEFAULTS = {
    "MCP_SESSION_IDLE_SECONDS": 300,
    "MCP_MAX_SESSIONS_PER_PROCESS": 5000,
    "MCP_APP_REFRESH_SECONDS": 2,
    "MCP_CONFORMANCE_FIXTURES": False,
}

ADAPTER = Adapter(
    settings_defaults=SETTINGS_DEFAULTS,
    name="mcp",
    token_type=TOKEN_TYPE,
    asgi_mounts=lambda: [("/mcp", build_app)],
    on_stop=stop,
    # The kinds that change a resource a host reads (a2ui.mcp.changes.affected).
    kinds=frozenset({Kind.COMPONENT_RENDERED, Kind.COMPONENT_UPDATED, Kind.COMPONENT_REMOVED,
                     Kind.SURFACE_BATCH, Kind.REQUEST_OPENED, Kind.REQUEST_CLOSED}) | ACTIVITY,
    summary="MCP Streamable HTTP at /mcp (seeds 004, 002): docs/protocol-mcp.md",
)
