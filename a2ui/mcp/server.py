"""The MCP server of /mcp: the SDK's low-level ``Server`` with one handler per method.

Each handler finds the caller (``scope["a2ui_mcp"]``, set by ``a2ui.mcp.app``) and calls the
agent side (``a2ui.mcp.agent``) or the person side (``a2ui.mcp.person``). Service errors
(``DomainError``, in seed 000's codes: ``ProtocolError.of``) become JSON-RPC errors with the same code and data (``-32602`` with the
argument's path); anything unexpected is logged and answered ``-32603``, never a crash.
"""

import logging

import mcp_types as types
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from ..core.errors import DomainError
from ..protocol.errors import ErrorCode, ProtocolError
from . import tools, uris

log = logging.getLogger("a2ui.mcp")

INSTRUCTIONS = (
    "A2UI: with an agent key, show UI to people (render, update, progress, navigate, notify, "
    "push_surfaces) and ask them (request_input, confirm). With a person's stream_mcp token, "
    "read that person's live UI as resources and answer through the action/respond/approve "
    "tools."
)


def principal(ctx):
    request = getattr(ctx, "request", None)
    found = request.scope.get("a2ui_mcp") if request is not None else None
    if found is None:
        raise MCPError(-32001, "Not authenticated")
    return found


def protocol_error(exc):
    """An MCPError carrying a ProtocolError's code, message and data (paths as arguments)."""
    data = dict(exc.data) if isinstance(exc.data, dict) else exc.data
    if isinstance(data, dict) and "path" in data:
        data["path"] = tools.argument_path(data["path"])
    return MCPError(int(exc.code), exc.message, data)


def invalid(path, reason):
    return MCPError(int(ErrorCode.INVALID_PARAMS), f"Invalid params: {path} {reason}",
                    {"path": path, "reason": reason})


async def _guard(call):
    try:
        return await call
    except MCPError:
        raise
    except DomainError as exc:  # the services' refusals, in seed 000's codes
        raise protocol_error(ProtocolError.of(exc)) from None
    except Exception:
        log.exception("a2ui: MCP handler failed")
        raise MCPError(int(ErrorCode.INTERNAL_ERROR), "Internal error") from None


async def list_tools(ctx, params):
    kind = principal(ctx).kind
    # The person's tools may be called by the UI itself (MCP Apps: visibility "app").
    meta = {"ui": {"visibility": ["model", "app"]}} if kind == "person" else None
    return types.ListToolsResult(tools=[
        types.Tool(name=name, description=description, input_schema=schema, meta=meta)
        for name, description, schema in tools.tool_list(kind)
    ])


async def call_tool(ctx, params):
    who = principal(ctx)
    arguments = params.arguments or {}
    if who.kind == "agent":
        from . import agent

        if params.name not in tools.AGENT_TOOLS:
            raise MCPError(int(ErrorCode.INVALID_PARAMS), f"Unknown tool: {params.name}",
                           {"path": "name"})
        return await _guard(agent.call(ctx, who, params.name, arguments))
    from . import person

    if params.name not in tools.PERSON_TOOLS:
        raise MCPError(int(ErrorCode.INVALID_PARAMS), f"Unknown tool: {params.name}",
                       {"path": "name"})
    return await _guard(person.call(ctx, who, params.name, arguments))


async def list_resources(ctx, params):
    from . import person

    return await _guard(person.list_resources(ctx, principal(ctx)))


async def list_resource_templates(ctx, params):
    from . import person

    principal(ctx)
    return types.ListResourceTemplatesResult(resource_templates=person.templates())


async def read_resource(ctx, params):
    from . import person

    return await _guard(person.read_resource(ctx, principal(ctx), str(params.uri)))


async def subscribe(ctx, params):
    from . import watch

    await _guard(watch.subscribe(ctx, principal(ctx), str(params.uri)))
    return types.EmptyResult()


async def unsubscribe(ctx, params):
    from . import watch

    await _guard(watch.unsubscribe(ctx, principal(ctx), str(params.uri)))
    return types.EmptyResult()


class InitializeCapture:
    """Middleware: keeps the raw ``initialize`` capabilities (``a2ui`` and ``extensions``)
    on the connection: the SDK's model drops the unknown top-level ``a2ui``."""

    async def __call__(self, ctx, call_next):
        if ctx.method == "initialize" and isinstance(ctx.params, dict):
            capabilities = ctx.params.get("capabilities")
            connection = getattr(ctx.session, "_connection", None)
            if isinstance(capabilities, dict) and connection is not None:
                connection.state["a2ui_capabilities"] = capabilities
        return await call_next(ctx)


class LastResort:
    """Middleware: an exception that escapes a handler (a bug, not the client's fault) is logged
    once and answered -32603 "Internal error". The SDK would answer it with code 0 and the
    exception's own text, which may say what the server should keep to itself."""

    async def __call__(self, ctx, call_next):
        try:
            return await call_next(ctx)
        except (MCPError, ValidationError):
            raise  # the SDK's ladder maps these to their wire errors (-32602, ...)
        except Exception:
            log.exception("a2ui: MCP %s failed", getattr(ctx, "method", "request"))
            raise MCPError(int(ErrorCode.INTERNAL_ERROR), "Internal error") from None


class A2UIServer(Server):
    """Advertises ``resources.listChanged`` (sessions and surfaces come and go)."""

    def create_initialization_options(self, notification_options=None, *args, **kwargs):
        return super().create_initialization_options(
            notification_options or NotificationOptions(resources_changed=True), *args, **kwargs)


def build_server():
    from importlib.metadata import version

    server = A2UIServer(
        "a2ui",
        version=version("django-a2ui"),
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_resource_templates,
        on_read_resource=read_resource,
        on_subscribe_resource=subscribe,
        on_unsubscribe_resource=unsubscribe,
    )
    server.middleware.append(InitializeCapture())
    server.middleware.append(LastResort())
    # MCP Apps: the ui://sessions/<id>/apps/<component> resources (a2ui.mcp.person).
    server.extensions[uris.APPS_EXTENSION] = {"mimeTypes": [uris.APP_MIME]}
    return server
