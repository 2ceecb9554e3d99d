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

from a2ui.core import tracecontext
from a2ui.core.errors import DomainError
from a2ui.infra import outages, prom, tracing
from a2ui.mcp import tools, uris
from a2ui.mcp.tools import invalid
from a2ui.rpc.errors import ErrorCode, ProtocolError

log = logging.getLogger("a2ui.mcp")

INSTRUCTIONS = (
    "A2UI: with an agent key, show UI to people (render, update, progress, navigate, notify, "
    "push_surfaces) and ask them (request_input, confirm; after a restart, pending_requests "
    "or the same call again). With a person's stream_mcp token, "
    "show_session shows that person's live session (an MCP App where the host renders them), "
    "its UI is readable as resources, and the action/respond/approve tools answer the agent."
)


def principal(ctx):
    request = getattr(ctx, "request", None)
    found = request.scope.get("a2ui_mcp") if request is not None else None
    if found is None:
        raise MCPError(-32001, "Not authenticated")
    return found


def protocol_error(exc):
    """An MCPError carrying a ProtocolError's code, message and data (paths as arguments)."""
    if prom.ON:
        prom.refused("mcp", int(exc.code))
    data = dict(exc.data) if isinstance(exc.data, dict) else exc.data
    if isinstance(data, dict) and "path" in data:
        data["path"] = tools.argument_path(data["path"])
    return MCPError(int(exc.code), exc.message, data)


async def _guard(call):
    try:
        return await call
    except MCPError:
        raise
    except DomainError as exc:  # the services' refusals, in seed 000's codes
        raise protocol_error(ProtocolError.of(exc)) from None
    except Exception as exc:
        if not outages.report(exc, "MCP handler"):
            log.exception("a2ui: MCP handler failed")
        raise MCPError(int(ErrorCode.INTERNAL_ERROR), "Internal error") from None


def fixtures_for(who):
    """``a2ui.mcp.fixtures`` when the test-only A2UI['MCP_CONFORMANCE_FIXTURES'] is on and an
    agent calls; else None."""
    from a2ui.conf import a2ui_settings

    if who.kind == "agent" and a2ui_settings.MCP_CONFORMANCE_FIXTURES:
        from a2ui.mcp import fixtures

        return fixtures
    return None


async def list_tools(ctx, params):
    who = principal(ctx)
    if who.kind == "person":
        from a2ui.mcp import negotiation, person

        # MCP Apps: _meta.ui (visibility, the session app's resourceUri); the app-only tools
        # for hosts that declared the extension.
        apps = negotiation.wants_apps(person.host_capabilities(ctx))
        listed = [types.Tool(name=name, description=description, input_schema=schema,
                             meta=meta)
                  for name, description, schema, meta in tools.person_tools(apps)]
        return types.ListToolsResult(tools=listed)
    listed = [types.Tool(name=name, description=description, input_schema=schema)
              for name, description, schema in tools.tool_list(who.kind)]
    if fixtures := fixtures_for(who):
        listed += fixtures.tools()
    return types.ListToolsResult(tools=listed)


async def call_tool(ctx, params):
    who = principal(ctx)
    arguments = params.arguments or {}
    if who.kind == "agent":
        from a2ui.mcp import agent

        if (fixtures := fixtures_for(who)) and params.name in fixtures.TOOLS:
            return await _guard(fixtures.call(ctx, params.name, arguments))
        if params.name not in tools.agent_tools():
            raise MCPError(int(ErrorCode.INVALID_PARAMS), f"Unknown tool: {params.name}",
                           {"path": "name"})
        # SEP-414: the caller's trace context in the request's _meta.
        meta = ctx.params.get("_meta") if isinstance(ctx.params, dict) else None
        parent, state = tracecontext.from_meta(meta)
        with tracing.span("a2ui.mcp.tool", parent, state, tool=params.name):
            return await _guard(agent.call(ctx, who, params.name, arguments))
    from a2ui.mcp import person

    if tools.person_tool(params.name) is None:
        raise MCPError(int(ErrorCode.INVALID_PARAMS), f"Unknown tool: {params.name}",
                       {"path": "name"})
    return await _guard(person.call(ctx, who, params.name, arguments))


async def list_resources(ctx, params):
    from a2ui.mcp import person

    who = principal(ctx)
    listed = await _guard(person.list_resources(ctx, who))
    if fixtures := fixtures_for(who):
        listed.resources += fixtures.resources()
    return listed


async def list_resource_templates(ctx, params):
    from a2ui.mcp import person

    fixtures = fixtures_for(principal(ctx))
    return types.ListResourceTemplatesResult(
        resource_templates=person.templates() + (fixtures.templates() if fixtures else []))


async def read_resource(ctx, params):
    from a2ui.mcp import person

    who, uri = principal(ctx), str(params.uri)
    if (fixtures := fixtures_for(who)) and fixtures.is_fixture(uri):
        contents = fixtures.read(uri)
        if contents is None:
            raise person.not_found(uri)
        return types.ReadResourceResult(contents=contents)
    return await _guard(person.read_resource(ctx, who, uri))


async def subscribe(ctx, params):
    from a2ui.mcp import person, watch

    who, uri = principal(ctx), str(params.uri)
    if (fixtures := fixtures_for(who)) and fixtures.is_fixture(uri):
        if fixtures.read(uri) is None:  # nothing changes them: nothing to notify
            raise person.not_found(uri)
        return types.EmptyResult()
    await _guard(watch.subscribe(ctx, who, uri))
    return types.EmptyResult()


async def subscriptions_listen(ctx, params):
    from a2ui.mcp import listen

    who = principal(ctx)
    return await _guard(listen.serve(ctx, who, params, fixtures_for(who)))


async def unsubscribe(ctx, params):
    from a2ui.mcp import watch

    await _guard(watch.unsubscribe(ctx, principal(ctx), str(params.uri)))
    return types.EmptyResult()


class InitializeCapture:
    """Middleware: keeps the raw ``initialize`` capabilities (``a2ui`` and ``extensions``)
    on the connection: the SDK's model drops the unknown top-level ``a2ui``. And advertises the
    server's ``extensions`` (the MCP Apps extension) in the answer on every protocol version:
    the SDK shapes the result by the negotiated version's schema, and the 2025 schemas have no
    ``capabilities.extensions``, so it dropped them on 2025-11-25, 2025-06-18 and before."""

    def __init__(self, extensions):
        self.extensions = extensions

    async def __call__(self, ctx, call_next):
        if ctx.method == "initialize" and isinstance(ctx.params, dict):
            capabilities = ctx.params.get("capabilities")
            connection = getattr(ctx.session, "_connection", None)
            if isinstance(capabilities, dict) and connection is not None:
                connection.state["a2ui_capabilities"] = capabilities
        result = await call_next(ctx)
        if ctx.method == "initialize" and isinstance(result, dict) and self.extensions:
            capabilities = result.get("capabilities")
            if isinstance(capabilities, dict) and not capabilities.get("extensions"):
                capabilities["extensions"] = {k: dict(v) for k, v in self.extensions.items()}
        return result


class LastResort:
    """Middleware: an exception that escapes a handler (a bug, not the client's fault) is logged
    once and answered -32603 "Internal error". The SDK would answer it with code 0 and the
    exception's own text, which may say what the server should keep to itself."""

    async def __call__(self, ctx, call_next):
        try:
            return await call_next(ctx)
        except (MCPError, ValidationError):
            raise  # the SDK's ladder maps these to their wire errors (-32602, ...)
        except Exception as exc:
            if not outages.report(exc, f"MCP {getattr(ctx, 'method', 'request')}"):
                log.exception("a2ui: MCP %s failed", getattr(ctx, "method", "request"))
            raise MCPError(int(ErrorCode.INTERNAL_ERROR), "Internal error") from None


class A2UIServer(Server):
    """Advertises ``resources.listChanged`` (sessions and surfaces come and go) and
    ``resources.subscribe`` on every revision (``resources/subscribe`` up to 2025-11-25,
    ``subscriptions/listen`` from 2026-07-28); never ``listChanged`` for tools or prompts,
    whose lists do not change (the SDK would derive them from ``subscriptions/listen`` being
    served on 2026-07-28)."""

    def create_initialization_options(self, notification_options=None, *args, **kwargs):
        return super().create_initialization_options(
            notification_options or NotificationOptions(resources_changed=True), *args, **kwargs)

    def get_capabilities(self, notification_options=None, *args, **kwargs):
        capabilities = super().get_capabilities(
            notification_options or NotificationOptions(resources_changed=True), *args, **kwargs)
        if capabilities.tools is not None:
            capabilities.tools.list_changed = False
        if capabilities.prompts is not None:
            capabilities.prompts.list_changed = False
        return capabilities


async def list_prompts(ctx, params):
    fixtures = fixtures_for(principal(ctx))
    return types.ListPromptsResult(prompts=fixtures.prompts() if fixtures else [])


async def get_prompt(ctx, params):
    fixtures = fixtures_for(principal(ctx))
    try:
        found = fixtures.get_prompt(params.name, params.arguments) if fixtures else None
    except ValueError as exc:
        raise invalid(f"arguments.{exc}", "is required (a string)") from None
    if found is None:
        raise MCPError(int(ErrorCode.INVALID_PARAMS), f"Unknown prompt: {params.name}",
                       {"path": "name"})
    return found


async def complete(ctx, params):
    principal(ctx)
    return types.CompleteResult(completion=types.Completion(values=[], total=0, has_more=False))


async def set_logging_level(ctx, params):
    principal(ctx)
    return types.EmptyResult()


def conformance_handlers():
    """The handlers of the conformance fixtures' methods, only when the test-only setting is
    on (otherwise the server does not offer prompts, completions or logging)."""
    from a2ui.conf import a2ui_settings

    if not a2ui_settings.MCP_CONFORMANCE_FIXTURES:
        return {}
    return {"on_list_prompts": list_prompts, "on_get_prompt": get_prompt,
            "on_completion": complete, "on_set_logging_level": set_logging_level}


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
        on_subscriptions_listen=subscriptions_listen,
        **conformance_handlers(),
    )
    # MCP Apps: the session app (ui://a2ui/session) and the ui://sessions/<id>/apps/<component>
    # resources as HTML apps, or A2UI natively (a2ui.mcp.person).
    server.extensions[uris.APPS_EXTENSION] = {"mimeTypes": [uris.APP_MIME, uris.A2UI_MIME]}
    server.middleware.append(InitializeCapture(server.extensions))
    server.middleware.append(LastResort())
    return server
