"""What drf-spectacular cannot see of the API on its own (imported by ``a2ui.urls`` when
``drf_spectacular`` is installed): the agent-key Bearer scheme, the stream-token refusal (no
scheme: stream tokens open sockets and streams only), and the HTTP endpoints that are not DRF
views: the AG-UI 1.0 run (``POST /api/v4/agui/run``, an SSE response), the v0.9 surface stream
(SSE), ``/mcp`` (MCP Streamable HTTP) and the health probes. ``add_plain_views`` is a
postprocessing hook: the app's ``/api/schema/`` applies it, and a project's
``SPECTACULAR_SETTINGS["POSTPROCESSING_HOOKS"]`` lists it for ``manage.py spectacular``.
WebSocket endpoints are not HTTP operations: the schema's description names them.
"""

from drf_spectacular.extensions import OpenApiAuthenticationExtension

AGENT_KEY = "agentKey"
STREAM_TOKEN = "streamToken"
COOKIE = "cookieAuth"

SCHEMES = {
    AGENT_KEY: {
        "type": "http", "scheme": "bearer", "bearerFormat": "a2ui agent key (a2ui_ak_...)",
        "description": "An agent's key: `manage.py a2ui_agent create NAME` prints it once.",
    },
    STREAM_TOKEN: {
        "type": "http", "scheme": "bearer", "bearerFormat": "a2ui stream token",
        "description": "A person's stream token (POST /api/v4/stream-token): opens the "
                       "person's sockets and streams only (stream_a2ui, stream_mcp, "
                       "stream_agui); refused by every other endpoint.",
    },
    COOKIE: {"type": "apiKey", "in": "cookie", "name": "sessionid",
             "description": "The person's Django session (with the CSRF header on POST)."},
}


def _only(view, kind):
    """Whether the view admits only ``kind`` ("agent" or "person") by its permissions."""
    from a2ui.api.permissions import IsAgent, IsPerson

    wanted = {"agent": IsAgent, "person": IsPerson}[kind]
    return any(isinstance(p, wanted) for p in view.get_permissions())


class AgentKeyScheme(OpenApiAuthenticationExtension):
    target_class = "a2ui.authentication.AgentKeyAuthentication"
    name = AGENT_KEY

    def get_security_requirement(self, auto_schema):
        return None if _only(auto_schema.view, "person") else {self.name: []}

    def get_security_definition(self, auto_schema):
        return SCHEMES[AGENT_KEY]


class PersonSessionScheme(OpenApiAuthenticationExtension):
    """A person's session cookie: not for the agents' endpoints."""

    target_class = "rest_framework.authentication.SessionAuthentication"
    name = COOKIE
    priority = 1  # before drf-spectacular's own

    def get_security_requirement(self, auto_schema):
        return None if _only(auto_schema.view, "agent") else {self.name: []}

    def get_security_definition(self, auto_schema):
        return SCHEMES[COOKIE]


class PersonTokenScheme(OpenApiAuthenticationExtension):
    """A person's DRF token (``Authorization: Token ...``): not for the agents' endpoints."""

    target_class = "rest_framework.authentication.TokenAuthentication"
    name = "tokenAuth"
    priority = 1

    def get_security_requirement(self, auto_schema):
        return None if _only(auto_schema.view, "agent") else {self.name: []}

    def get_security_definition(self, auto_schema):
        return {"type": "apiKey", "in": "header", "name": "Authorization",
                "description": "A person's DRF token: `Authorization: Token <key>`."}


class StreamTokenRefusal(OpenApiAuthenticationExtension):
    """Refuses stream tokens; grants nothing, so it adds no scheme and no requirement."""

    target_class = "a2ui.authentication.RejectStreamTokenAuthentication"
    name = []

    def get_security_requirement(self, auto_schema):
        return None

    def get_security_definition(self, auto_schema):
        return []


def _error(description):
    return {"description": description, "content": {"application/json": {"schema": {
        "type": "object", "properties": {"error": {"type": "object"}}}}}}


def _sse(description):
    return {"description": description,
            "content": {"text/event-stream": {"schema": {"type": "string"}}}}


_SESSION_ID = {"name": "session_id", "in": "path", "required": True,
               "schema": {"type": "string", "format": "uuid"}}
_PROBE = {"type": "object", "properties": {
    "status": {"type": "string"}, "checks": {"type": "object"}}}
_MCP_BODY = {"content": {"application/json": {"schema": {
    "type": "object", "description": "A JSON-RPC 2.0 message of MCP (docs/protocol-mcp.md)"}}}}

PLAIN_PATHS = {
    "/api/v4/agui/run": {"post": {
        "operationId": "agui_run", "tags": ["agui"],
        "summary": "Run the agent (AG-UI 1.0): RunAgentInput in, AG-UI events out as SSE",
        "description": "A person's AG-UI 1.0 client (docs/protocol-agui.md). `Last-Event-ID` "
                       "resumes a run whose stream broke off.",
        "security": [{STREAM_TOKEN: []}, {COOKIE: []}],
        "parameters": [{"name": "Last-Event-ID", "in": "header", "required": False,
                        "schema": {"type": "string"}}],
        "requestBody": {"required": True, "content": {"application/json": {"schema": {
            "type": "object", "description": "AG-UI RunAgentInput",
            "required": ["threadId", "runId", "messages"],
            "properties": {"threadId": {"type": "string"}, "runId": {"type": "string"},
                           "messages": {"type": "array", "items": {"type": "object"}},
                           "state": {}, "tools": {"type": "array"},
                           "context": {"type": "array"}, "forwardedProps": {},
                           "resume": {"type": "array"}}}}}},
        "responses": {"200": _sse("RUN_STARTED ... RUN_FINISHED or RUN_ERROR"),
                      "400": _error("Invalid RunAgentInput"),
                      "401": _error("No credential"), "403": _error("CSRF or consent"),
                      "404": _error("No such run to resume"),
                      "409": _error("The thread already has a run"),
                      "429": _error("Too many runs")}}},
    "/api/v4/sessions/{session_id}/surfaces/stream": {"get": {
        "operationId": "surfaces_stream", "tags": ["v09"],
        "summary": "A2UI v0.9 surfaces of one session as SSE (EventSource)",
        "description": "docs/protocol-v09.md. The token may come as `?token=` (EventSource "
                       "cannot set headers).",
        "security": [{STREAM_TOKEN: []}],
        "parameters": [_SESSION_ID,
                       {"name": "token", "in": "query", "required": False,
                        "schema": {"type": "string"}},
                       {"name": "Last-Event-ID", "in": "header", "required": False,
                        "schema": {"type": "string"}}],
        "responses": {"200": _sse("v0.9 server messages"), "401": _error("No stream token"),
                      "404": _error("Not this token's session")}}},
    "/mcp": {
        "post": {"operationId": "mcp_post", "tags": ["mcp"],
                 "summary": "MCP Streamable HTTP: a JSON-RPC message to the server",
                 "description": "Agent tools with an agent key; the person's UI and answer "
                                "tools with a stream_mcp token (docs/protocol-mcp.md).",
                 "security": [{AGENT_KEY: []}, {STREAM_TOKEN: []}],
                 "requestBody": {"required": True, **_MCP_BODY},
                 "responses": {"200": {"description": "JSON or an SSE stream",
                                       "content": {"application/json": {},
                                                   "text/event-stream": {}}},
                               "202": {"description": "A notification or response accepted"},
                               "400": _error("Not a JSON-RPC message"),
                               "401": _error("No credential"),
                               "404": _error("Unknown Mcp-Session-Id")}},
        "get": {"operationId": "mcp_get", "tags": ["mcp"],
                "summary": "MCP Streamable HTTP: the server's SSE stream of an MCP session",
                "security": [{AGENT_KEY: []}, {STREAM_TOKEN: []}],
                "responses": {"200": _sse("server notifications and requests"),
                              "405": {"description": "No standalone stream here"}}},
        "delete": {"operationId": "mcp_delete", "tags": ["mcp"],
                   "summary": "MCP Streamable HTTP: end an MCP session",
                   "security": [{AGENT_KEY: []}, {STREAM_TOKEN: []}],
                   "responses": {"200": {"description": "Ended"},
                                 "404": _error("Unknown Mcp-Session-Id")}},
    },
    "/a2ui/healthz": {"get": {
        "operationId": "liveness", "tags": ["probes"], "security": [],
        "summary": "Liveness: the process's event loop answers",
        "responses": {"200": {"description": "Alive", "content": {
            "application/json": {"schema": _PROBE}}}}}},
    "/a2ui/readyz": {"get": {
        "operationId": "readiness", "tags": ["probes"], "security": [],
        "summary": "Readiness: database, Redis and channel layer reachable, not draining",
        "responses": {"200": {"description": "Ready", "content": {
            "application/json": {"schema": _PROBE}}},
            "503": {"description": "Not ready (a check failed, or draining)", "content": {
                "application/json": {"schema": _PROBE}}}}}},
}

WEBSOCKETS = (
    "WebSocket endpoints (not HTTP operations): `/ws/v4/a2ui?token=` (a person, A2UI "
    "JSON-RPC), `/ws/v4/a2ui/agent` (an agent, `Authorization: Bearer <agent key>`), "
    "`/ws/v09/a2ui` (A2UI v0.9), `/ws/agui?token=` (AG-UI events); see the project's docs."
)


def add_plain_views(result, generator, request, public):
    """drf-spectacular postprocessing hook: the non-DRF endpoints and their schemes."""
    paths = result.setdefault("paths", {})
    for path, item in PLAIN_PATHS.items():
        paths.setdefault(path, item)
    schemes = result.setdefault("components", {}).setdefault("securitySchemes", {})
    for name, scheme in SCHEMES.items():
        schemes.setdefault(name, scheme)
    info = result.setdefault("info", {})
    if WEBSOCKETS not in (info.get("description") or ""):
        info["description"] = ((info.get("description") or "") + "\n\n" + WEBSOCKETS).strip()
    return result
