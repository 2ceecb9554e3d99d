"""The MCP tools of /mcp: their names, descriptions and JSON Schemas. Sans-I/O.

Agent tools (agent key) are the agent-method table's entries with a ``tool`` name
(``agent_tools``); those below map one to one onto the seed-000 agent methods (``render`` is
``ui.render``, ...) plus ``list_sessions`` and ``push_surfaces`` (A2UI v0.9 messages); their
arguments are the seed's params, so the services validate them exactly as on the agent
WebSocket. Person tools (``stream_mcp`` token) are seed 004's ``action`` / ``error``, the
seed-000 answers ``respond`` / ``approve`` / ``cancel``, and ``show_session``, linked to the MCP
App ``ui://a2ui/session`` (``_meta.ui.resourceUri``); the app's own tools ``session_view`` and
``answer_request`` (``_meta.ui.visibility: ["app"]``: hidden from the host's model) are listed
to MCP Apps hosts only (``person_tools``).
"""

from mcp.shared.exceptions import MCPError

from a2ui.core import agentmethods
from a2ui.core.content.components import COMPONENT_TYPES
from a2ui.core.content.methods import (
    CONFIRM_SEVERITIES,
    INPUT_TYPES,
    NOTIFY_LEVELS,
    PROGRESS_TYPES,
    UPDATE_OPERATIONS,
)
from a2ui.infra import prom
from a2ui.mcp.uris import SESSION_APP
from a2ui.rpc.errors import ErrorCode

SESSION_ID = {"type": "string", "format": "uuid",
              "description": "The person's session (from list_sessions)."}
TIMEOUT = {"type": "integer", "minimum": 1, "maximum": 3600,
           "description": "Seconds to wait for the person."}


def _schema(properties, required=(), *, closed=False):
    return {"type": "object", "properties": properties, "required": list(required),
            "additionalProperties": not closed}


#: The agent's read tools: their only arguments; anything else is refused (-32602).
READ_TOOLS = {"list_sessions": (), "list_runs": ("session_id",),
              "pending_requests": ("session_id",)}


def read_arguments(name, arguments):
    """A read tool's ``arguments`` (None or {}: none), or the -32602 of the first argument it
    does not take, or of a ``session_id`` that is not a string."""
    arguments = {} if arguments is None else arguments
    if not isinstance(arguments, dict):
        raise invalid("arguments", "must be an object")
    takes = READ_TOOLS[name]
    for key in sorted(arguments):
        if key not in takes:
            raise invalid(f"arguments.{key}", f"is not an argument of {name} (it takes "
                          f"{', '.join(takes) or 'none'})")
    if not isinstance(arguments.get("session_id", ""), str):
        raise invalid("arguments.session_id", "must be a string")
    return arguments


IDEMPOTENCY_KEY = {"type": "string", "minLength": 1, "maxLength": 128,
                   "description": "Makes a retry safe: a retry with the same key for the same "
                                  "session is answered with the original outcome (replayed), "
                                  "nothing shown twice."}


def _session_tool(properties, required=()):
    return _schema({"session_id": SESSION_ID, **properties}, ("session_id", *required))


def _push_tool(properties, required=()):
    """A push: also takes an ``idempotency_key``."""
    return _session_tool({**properties, "idempotency_key": IDEMPOTENCY_KEY}, required)


AGENT_TOOLS = {
    "list_sessions": (
        "List the live sessions of people connected to this agent.",
        _schema({}, closed=True),
    ),
    "render": (
        "Show a UI component to the person (card, table, form, chart, markdown, code, image, "
        "alert, steps). Returns the component_id; rendering the same id again replaces it.",
        _push_tool({
            "component_type": {"type": "string", "enum": list(COMPONENT_TYPES)},
            "data": {"type": "object", "description": "The component's fields (seed 000 §5)."},
            "component_id": {"type": "string", "maxLength": 128},
            "metadata": {"type": "object", "properties": {
                "priority": {"type": "string", "enum": ["normal", "high", "low"]},
                "position": {"type": "string", "enum": ["main", "sidebar", "overlay"]},
                "ttl_seconds": {"type": "integer", "minimum": 1}}},
        }, ("component_type", "data")),
    ),
    "update": (
        "Change a component already shown (replace, merge or append to its data).",
        _push_tool({
            "component_id": {"type": "string", "maxLength": 128},
            "operation": {"type": "string", "enum": list(UPDATE_OPERATIONS), "default": "merge"},
            "data": {"type": "object"},
        }, ("component_id", "data")),
    ),
    "progress": (
        "Show or advance a progress indicator for a task.",
        _push_tool({
            "task_id": {"type": "string", "maxLength": 128},
            "progress_type": {"type": "string", "enum": list(PROGRESS_TYPES),
                              "default": "determinate"},
            "value": {"type": "number"},
            "total": {"type": "number"},
            "message": {"type": "string"},
        }, ("task_id",)),
    ),
    "navigate": (
        "Open a URL (http or https) for the person.",
        _push_tool({"url": {"type": "string", "format": "uri"},
                    "new_tab": {"type": "boolean", "default": False}}, ("url",)),
    ),
    "notify": (
        "Show the person a toast notification.",
        _push_tool({
            "title": {"type": "string"},
            "level": {"type": "string", "enum": list(NOTIFY_LEVELS), "default": "info"},
            "message": {"type": "string"},
            "duration_ms": {"type": "integer", "minimum": 0, "maximum": 600000},
        }, ("title",)),
    ),
    "push_surfaces": (
        "Send A2UI v0.9 server messages (createSurface, updateComponents, updateDataModel, "
        "deleteSurface) to the person's surfaces. The batch is validated whole.",
        _push_tool({"messages": {"type": "array", "minItems": 1,
                                 "items": {"type": "object"}}}, ("messages",)),
    ),
    "agui_event": (
        "Push one AG-UI event (seed 003) to the person's session: TEXT_MESSAGE (chat), "
        "TOOL_CALL_REQUEST/STATUS/RESULT, STATE_DELTA (old_value must match the stored value), "
        "PLAN_CARD, RESOURCE_TREE, AGENT_ROSTER, ARTIFACT_OPEN/UPDATE.",
        _push_tool({"event": {"type": "object", "required": ["type"],
                                 "properties": {"type": {"type": "string"}}}}, ("event",)),
    ),
    "list_runs": (
        "List the AG-UI runs people started with this agent that are still running (what "
        "each run's agui.run_started said: its new messages, state, tools, run_id).",
        _schema({"session_id": SESSION_ID}, closed=True),
    ),
    "finish_run": (
        "End an AG-UI run (RUN_FINISHED for the person's client), with an optional result. "
        "Answers {ended, delivered, seq}: delivered is false when the run's stream was lost "
        "(its server process stopped), so the client did not receive the end.",
        _session_tool({"run_id": {"type": "string", "maxLength": 200}, "result": {}},
                      ("run_id",)),
    ),
    "fail_run": (
        "End an AG-UI run as failed (RUN_ERROR with this message and optional code); "
        "delivered: false in the answer when the run's stream was lost.",
        _session_tool({"run_id": {"type": "string", "maxLength": 200},
                       "message": {"type": "string"}, "code": {"type": "string"}},
                      ("run_id", "message")),
    ),
    "pending_requests": (
        "After a restart: the requests of this agent that wait (status 'pending': the person "
        "has not answered yet) and the outcomes no call received (status 'answered' with "
        "answer, 'timed_out', 'cancelled'), oldest first. Each outcome is handed out once.",
        _schema({"session_id": SESSION_ID}, closed=True),
    ),
    "request_input": (
        "Ask the person for input and wait for the answer (progress notifications while "
        "waiting; a timeout is a tool error). Calling it again with the same request_id and "
        "arguments (after a restart) waits on the same request, or returns its answer.",
        _session_tool({
            "input_type": {"type": "string", "enum": list(INPUT_TYPES)},
            "prompt": {"type": "string"},
            "options": {"type": "array", "items": {"type": "object", "properties": {
                "label": {"type": "string"}, "value": {"type": "string"}}}},
            "validation": {"type": "object"},
            "timeout_seconds": TIMEOUT,
            "request_id": {"type": "string", "maxLength": 128},
        }, ("input_type", "prompt")),
    ),
    "confirm": (
        "Ask the person to approve an action and wait: returns {approved, reason}. A timeout "
        "is a tool error whose result is {approved: false, reason: 'timeout'}. Calling it "
        "again with the same request_id and arguments waits on the same request, or returns "
        "its outcome.",
        _session_tool({
            "title": {"type": "string"},
            "description": {"type": "string"},
            "severity": {"type": "string", "enum": list(CONFIRM_SEVERITIES)},
            "timeout_seconds": TIMEOUT,
            "request_id": {"type": "string", "maxLength": 128},
        }, ("title",)),
    ),
}

#: Agent tools that are one seed-000 method each.
AGENT_METHODS = {name: f"ui.{name}" for name in
                 ("render", "update", "progress", "navigate", "notify")}
AWAITING = {"request_input": "ui.request_input", "confirm": "ui.confirm"}
#: Agent tools that take an ``idempotency_key`` (a2ui.core.content.idempotency).
KEYED = frozenset({*AGENT_METHODS, "push_surfaces", "agui_event"})

PERSON_TOOLS = {
    "action": (
        "Send an A2UI v0.9 user action (a button press, a submitted form) of a surface to the "
        "agent.",
        _session_tool({
            "name": {"type": "string"},
            "context": {"type": "object"},
            "surfaceId": {"type": "string"},
            "sourceComponentId": {"type": "string"},
        }, ("name", "surfaceId", "sourceComponentId")),
    ),
    "error": (
        "Report an A2UI rendering error of a surface to the agent.",
        _session_tool({
            "code": {"type": "string"},
            "message": {"type": "string"},
            "surfaceId": {"type": "string"},
            "path": {"type": "string", "description": "The JSON Pointer of the invalid value "
                                                      "(required with VALIDATION_FAILED)."},
        }, ("code", "message", "surfaceId")),
    ),
    "respond": (
        "Answer the agent's request_input (request_id), or submit a form component (its id).",
        _session_tool({"request_id": {"type": "string"}, "value": {}}, ("request_id", "value")),
    ),
    "approve": (
        "Answer the agent's confirm request.",
        _session_tool({"request_id": {"type": "string"}, "approved": {"type": "boolean"},
                       "reason": {"type": "string"}}, ("request_id", "approved")),
    ),
    "cancel": (
        "Tell the agent the person cancelled a request or task.",
        _session_tool({"request_id": {"type": "string"}, "reason": {"type": "string"}},
                      ("request_id",)),
    ),
    "show_session": (
        "Show the person's live session with the agent: what the agent shows them and the "
        "questions it waits on (request_input, confirm), as an interactive app in hosts that "
        "render MCP Apps, where the person answers. Without session_id: their most recent "
        "live session.",
        _schema({"session_id": SESSION_ID}),
    ),
}

#: The app's own tools (``_meta.ui.visibility: ["app"]``): called by the ``show_session`` app
#: through its host, never shown to the host's model.
APP_TOOLS = {
    "session_view": (
        "The session's current view for the show_session app (what it shows and the open "
        "requests), read again while the app is open.",
        _session_tool({}),
    ),
    "answer_request": (
        "Answer one open request of the agent from the show_session app: value for a "
        "request_input, approved (and reason) for a confirm. Safe to repeat: the agent gets "
        "the first answer once; a repeat with the same answer is replayed, another is "
        "refused.",
        _session_tool({"request_id": {"type": "string", "maxLength": 128}, "value": {},
                       "approved": {"type": "boolean"},
                       "reason": {"type": "string", "maxLength": 500}}, ("request_id",)),
    ),
}

#: ``_meta`` of the person's tools: seen by the model and callable by an app; ``show_session``
#: and ``session_view`` render their result with the session app (the nested form, and the
#: flat ``ui/resourceUri`` that ext-apps' ``getToolUiResourceUri`` still reads for older hosts).
VISIBLE = {"ui": {"visibility": ["model", "app"]}}


def _linked(visibility):
    return {"ui": {"resourceUri": SESSION_APP, "visibility": visibility},
            "ui/resourceUri": SESSION_APP}


PERSON_META = {"show_session": _linked(["model", "app"]), "session_view": _linked(["app"]),
               "answer_request": {"ui": {"visibility": ["app"]}}}


def person_tools(apps):
    """[(name, description, input schema, _meta)] of the person's tools; the app-only ones
    when the host declared MCP Apps (``apps``; another host would show them to its model)."""
    listed = {**PERSON_TOOLS, **(APP_TOOLS if apps else {})}
    return [(name, description, schema, PERSON_META.get(name, VISIBLE))
            for name, (description, schema) in listed.items()]


def person_tool(name):
    """(description, schema) of a person's tool (the app-only ones included), or None."""
    return PERSON_TOOLS.get(name) or APP_TOOLS.get(name)


def client_error(arguments):
    """The v0.9 ``error`` client message of the ``error`` tool's arguments (``path`` only when
    given: VALIDATION_FAILED requires it, the other codes take none)."""
    keys = ("code", "message", "surfaceId", *(("path",) if "path" in arguments else ()))
    return {"version": "v0.9", "error": {k: arguments.get(k) for k in keys}}


def agent_tools():
    """The agent tools: one per entry of the agent-method table (``a2ui.core.agentmethods``)
    with a ``tool`` name, described here (``AGENT_TOOLS``) or by the entry itself (its
    ``summary`` and params schema): those described here first, in their order."""
    declared = {e.tool: e for e in agentmethods.table().values() if e.tool}
    out = {name: described for name, described in AGENT_TOOLS.items() if name in declared}
    for name, entry in declared.items():
        if name not in out:
            make = _push_tool if entry.keyed and entry.handled else _session_tool
            out[name] = (entry.summary or f"The agent method {entry.name}.",
                         make(dict(entry.properties or {}), entry.required))
    return out


def tool_list(kind):
    """[(name, description, input schema)] for an "agent" or a "person" (every tool of
    theirs, the app-only ones included)."""
    tools = agent_tools() if kind == "agent" else {**PERSON_TOOLS, **APP_TOOLS}
    return [(name, description, schema) for name, (description, schema) in tools.items()]


def with_defaults(name, arguments):
    """``arguments`` with the schema's defaults filled in (the seed requires some of them)."""
    description_schema = agent_tools().get(name) or person_tool(name)
    out = dict(arguments)
    for key, spec in description_schema[1]["properties"].items():
        if "default" in spec and key not in out:
            out[key] = spec["default"]
    return out


def argument_path(path):
    """A seed params path (``params.data.title``) as the tool argument's (``arguments...``)."""
    if isinstance(path, str) and path.startswith("params"):
        return "arguments" + path[len("params"):]
    return path


def split_session(arguments):
    """(session_id, the other arguments) or ValueError naming the missing argument."""
    if not isinstance(arguments, dict):
        raise ValueError("arguments")
    rest = dict(arguments)
    session_id = rest.pop("session_id", None)
    if not isinstance(session_id, str) or not session_id:
        raise ValueError("arguments.session_id")
    return session_id, rest


def invalid(path, reason):
    """An MCP tool's invalid arguments, as every tool of /mcp refuses them (-32602, counted)."""
    if prom.ON:
        prom.refused("mcp", int(ErrorCode.INVALID_PARAMS))
    return MCPError(int(ErrorCode.INVALID_PARAMS), f"Invalid params: {path} {reason}",
                    {"path": path, "reason": reason})
