"""An AG-UI 1.0 agent's events as the runtime's ops (``a2ui.remote.ops``). Sans-I/O.

Each event is read with the official ``ag-ui-protocol`` models (``ag_ui.core.Event``, a
discriminated union); :class:`Reader` keeps what one run's stream has opened (messages, tool
calls, activities) and turns each event into ops:

=========================  =====================================================================
AG-UI 1.0 event            op
=========================  =====================================================================
TEXT_MESSAGE_START         (the message's role: assistant -> agent, system/developer -> system;
                           a user message is not the agent's to say: dropped)
TEXT_MESSAGE_CONTENT,      TextDelta of ``messageId``
TEXT_MESSAGE_CHUNK
TEXT_MESSAGE_END           TextEnd
REASONING_MESSAGE_*        Reasoning / ReasoningEnd
TOOL_CALL_START/ARGS/END,  a call of a question tool (:data:`ASK_INPUT`, :data:`ASK_CONFIRM`, the
TOOL_CALL_CHUNK            frontend tools this server offers): Ask (``resume``: the call, so the
                           answer goes back as its tool result); of ``render_a2ui`` /
                           ``send_a2ui_json_to_client``: Surface of its A2UI messages; of a tool
                           a person's AG-UI 1.0 client declared: Tool requested (its client runs
                           it); any other: Tool requested (the agent's own tool)
TOOL_CALL_RESULT           Tool result; ``{"a2ui_operations": [...]}`` content (the shape
                           ``@ag-ui/a2ui-middleware`` reads) also Surface
STATE_SNAPSHOT             State
STATE_DELTA                StatePatch
ACTIVITY_SNAPSHOT,         of activity type ``a2ui-surface``: Surface of the operations new to
ACTIVITY_DELTA             the activity (a repeated ``createSurface`` of a surface already
                           shown is the runtime's to drop); other activity types: dropped
RUN_FINISHED               Finished (``result``); an ``interrupt`` outcome: one Ask per
                           interrupt (``resume``: its id, answered by the next run's
                           ``resume``)
RUN_ERROR                  Failed
RUN_STARTED, STEP_*,       nothing (the run's own bookkeeping, or for a developer's tooling)
MESSAGES_SNAPSHOT, RAW,
CUSTOM, SUBAGENT_*,
REASONING_START/END,
REASONING_ENCRYPTED_VALUE
=========================  =====================================================================

An event whose ``type`` is unknown is skipped and counted (``Reader.unknown``: a newer
protocol's event). An event of a known type that does not validate, or a stream past its
limits, is :class:`Malformed`.
"""

import copy
import json
import uuid

import jsonpatch
from ag_ui.core import Event, EventType
from pydantic import TypeAdapter, ValidationError

from a2ui.remote import ops

ASK_INPUT = "a2ui_request_input"
ASK_CONFIRM = "a2ui_confirm"
ASK_TOOLS = (ASK_INPUT, ASK_CONFIRM)
#: Tools whose arguments are A2UI messages (``@ag-ui/a2ui-middleware``).
RENDER_TOOLS = ("render_a2ui", "send_a2ui_json_to_client")
#: The synthetic tool call a person's action is told to the agent as (the middleware's).
LOG_EVENT_TOOL = "log_a2ui_event"
SURFACE_ACTIVITY = "a2ui-surface"
OPERATIONS = "a2ui_operations"
KNOWN = frozenset(t.value for t in EventType)
MAX_ARGS = 256 * 1024  # one tool call's arguments
BASIC_CATALOG_ID = "https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"

_event = TypeAdapter(Event)


class Malformed(Exception):
    pass


def ask_tools():
    """The frontend tools this server offers every agent: the person's questions."""
    return [
        {"name": ASK_INPUT,
         "description": "Ask the person a question and wait for the answer (a text, a number, "
                        "a date, or one of options).",
         "parameters": {"type": "object", "properties": {
             "prompt": {"type": "string", "description": "The question."},
             "input_type": {"type": "string", "enum": ["text", "number", "date", "select"],
                            "default": "text"},
             "options": {"type": "array", "items": {"type": "string"},
                         "description": "The choices of a select."}},
             "required": ["prompt"]}},
        {"name": ASK_CONFIRM,
         "description": "Ask the person to approve or reject something; the answer is "
                        "{approved: bool, reason: str}.",
         "parameters": {"type": "object", "properties": {
             "title": {"type": "string"},
             "description": {"type": "string"},
             "severity": {"type": "string", "enum": ["info", "warning", "critical"]}},
             "required": ["title"]}},
    ]


def parse(data):
    """The ``ag_ui.core`` event of one SSE ``data`` text, None for an unknown type;
    Malformed when it is not JSON or does not validate."""
    try:
        raw = json.loads(data)
    except (ValueError, RecursionError):
        raise Malformed("an event that is not JSON") from None
    if not isinstance(raw, dict):
        raise Malformed("an event that is not a JSON object")
    if raw.get("type") not in KNOWN:
        return None
    try:
        return _event.validate_python(raw)
    except ValidationError as exc:
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ())[1:]) or "event"
        raise Malformed(f"a {raw.get('type')} event that does not validate ({where}: "
                        f"{str(first.get('msg', 'invalid'))[:100]})") from None


def operations_of(content):
    """The A2UI messages of a ``{"a2ui_operations": [...]}`` container (a dict, or JSON text
    of one, possibly encoded twice), else None."""
    value = content
    for _ in range(2):
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except (ValueError, RecursionError):
                return None
    if isinstance(value, dict) and isinstance(value.get(OPERATIONS), list):
        return [m for m in value[OPERATIONS] if isinstance(m, dict)]
    return None


def _render_args(args):
    """The A2UI messages of a render tool's arguments: ``a2ui_json`` (a list, one message or
    JSON text of either) or ``render_a2ui``'s structured ``surfaceId``/``components``."""
    if not isinstance(args, dict):
        return []
    value = args.get("a2ui_json")
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):
            return []
    if isinstance(value, dict):
        value = [value]
    if isinstance(value, list):
        return [m for m in value if isinstance(m, dict)]
    surface, components = args.get("surfaceId"), args.get("components")
    if isinstance(surface, str) and isinstance(components, list):
        catalog = args.get("catalogId") or BASIC_CATALOG_ID
        out = [{"version": "v0.9", "createSurface": {"surfaceId": surface, "catalogId": catalog}},
               {"version": "v0.9", "updateComponents": {"surfaceId": surface,
                                                        "components": components}}]
        if isinstance(args.get("items"), list):
            out.append({"version": "v0.9", "updateDataModel": {
                "surfaceId": surface, "path": "/", "value": {"items": args["items"]}}})
        return out
    return []


def _plain(ops_):
    """JSON Patch operations as plain dicts (the models give ``AddOperation``...)."""
    return [o.model_dump(mode="json", by_alias=True, exclude_unset=True)
            if hasattr(o, "model_dump") else o for o in ops_ or ()]


class Reader:
    """One run's AG-UI stream as ops."""

    def __init__(self, client_tools=()):
        #: Tools a person's AG-UI 1.0 client declared (it runs them).
        self.client_tools = frozenset(client_tools)
        self.roles = {}  # message id -> "agent" | "system" | None (dropped)
        self.last_text = None  # the message a TEXT_MESSAGE_CHUNK without an id continues
        self.last_reasoning = None
        self.calls = {}  # tool call id -> {"name", "args": [str], "size", "parent"}
        self.last_call = None
        self.activities = {}  # activity message id -> content (a2ui-surface)
        self.unknown = 0
        self.asked = False
        self.finished = False

    def read(self, event):
        """The ops of one parsed event (None: an unknown type, counted)."""
        if event is None:
            self.unknown += 1
            return []
        handler = getattr(self, "_" + event.type.value.lower(), None)
        return handler(event) if handler is not None else []

    # Text -------------------------------------------------------------------------------------

    def _role(self, role):
        role = getattr(role, "value", role)
        if role in (None, "assistant"):
            return "agent"
        if role in ("system", "developer"):
            return "system"
        return None

    def _text_message_start(self, e):
        self.roles[e.message_id] = self._role(e.role)
        self.last_text = e.message_id
        return []

    def _text_message_content(self, e):
        role = self.roles.setdefault(e.message_id, "agent")
        return [ops.TextDelta(e.message_id, e.delta, role)] if role and e.delta else []

    def _text_message_end(self, e):
        role = self.roles.get(e.message_id, "agent")
        return [ops.TextEnd(e.message_id)] if role else []

    def _text_message_chunk(self, e):
        message_id = e.message_id or self.last_text or uuid.uuid4().hex
        if message_id not in self.roles:
            self.roles[message_id] = self._role(e.role)
        self.last_text = message_id
        role = self.roles[message_id]
        return [ops.TextDelta(message_id, e.delta, role)] if role and e.delta else []

    def _reasoning_message_start(self, e):
        self.last_reasoning = e.message_id
        return []

    def _reasoning_message_content(self, e):
        return [ops.Reasoning(e.message_id, e.delta)] if e.delta else []

    def _reasoning_message_end(self, e):
        return [ops.ReasoningEnd(e.message_id)]

    def _reasoning_message_chunk(self, e):
        message_id = e.message_id or self.last_reasoning or uuid.uuid4().hex
        self.last_reasoning = message_id
        return [ops.Reasoning(message_id, e.delta)] if e.delta else []

    # Tool calls -------------------------------------------------------------------------------

    def _tool_call_start(self, e):
        self.calls[e.tool_call_id] = {"name": e.tool_call_name, "args": [], "size": 0,
                                      "parent": e.parent_message_id, "ended": False}
        self.last_call = e.tool_call_id
        return []

    def _args(self, call_id, delta):
        call = self.calls.get(call_id)
        if call is None:
            raise Malformed("tool call arguments for a call that was not started")
        call["size"] += len(delta)
        if call["size"] > MAX_ARGS:
            raise Malformed(f"tool call arguments of more than {MAX_ARGS} characters")
        call["args"].append(delta)

    def _tool_call_args(self, e):
        self._args(e.tool_call_id, e.delta)
        return []

    def _tool_call_chunk(self, e):
        call_id = e.tool_call_id or self.last_call
        if call_id is None:
            raise Malformed("a tool call chunk with no call")
        if call_id not in self.calls:
            if not e.tool_call_name:
                raise Malformed("a tool call chunk with no name")
            self.calls[call_id] = {"name": e.tool_call_name, "args": [], "size": 0,
                                   "parent": e.parent_message_id, "ended": False}
        self.last_call = call_id
        if e.delta:
            self._args(call_id, e.delta)
        return []

    def _tool_call_end(self, e):
        return self._end_call(e.tool_call_id)

    def _end_call(self, call_id):
        call = self.calls.get(call_id)
        if call is None or call["ended"]:
            return []
        call["ended"] = True
        text = "".join(call["args"])
        try:
            args = json.loads(text) if text.strip() else {}
        except (ValueError, RecursionError):
            args = None
        name = call["name"]
        if name in ASK_TOOLS:
            return [self._ask_call(call_id, name, args, text, call["parent"])]
        if name in RENDER_TOOLS:
            return [ops.Tool(call_id, "requested", name, args if args is not None else text),
                    *([ops.Surface(tuple(m))] if (m := _render_args(args)) else [])]
        return [ops.Tool(call_id, "requested", name, args if args is not None else text)]

    def _ask_call(self, call_id, name, args, text, parent):
        args = args if isinstance(args, dict) else {}
        resume = {"tool_call": {"id": call_id, "name": name, "arguments": text or "{}"},
                  "parent_message_id": parent}
        self.asked = True
        request_id = uuid.uuid4().hex
        if name == ASK_CONFIRM:
            params = {"title": args.get("title") or args.get("description") or "Confirm?"}
            for key in ("description", "severity"):
                if args.get(key) is not None:
                    params[key] = args[key]
            return ops.Ask(request_id, "confirm", params, resume)
        params = {"input_type": args.get("input_type") or "text",
                  "prompt": args.get("prompt") or "Your answer?"}
        if args.get("options") is not None:
            params["options"] = args["options"]
        return ops.Ask(request_id, "input", params, resume)

    def _tool_call_result(self, e):
        out = [ops.Tool(e.tool_call_id, "result", result=e.content)]
        found = operations_of(e.content)
        if found:
            out.append(ops.Surface(tuple(found)))
        return out

    # State and activity -----------------------------------------------------------------------

    def _state_snapshot(self, e):
        snapshot = e.snapshot if isinstance(e.snapshot, dict) else {"value": e.snapshot}
        return [ops.State(snapshot)]

    def _state_delta(self, e):
        return [ops.StatePatch(tuple(_plain(e.delta)))]

    def _activity_snapshot(self, e):
        if e.activity_type != SURFACE_ACTIVITY or not isinstance(e.content, dict):
            return []
        before = self.activities.get(e.message_id)
        if before is not None and e.replace is False:
            return []  # "create if missing": it exists
        self.activities[e.message_id] = copy.deepcopy(e.content)
        found = operations_of(e.content) or []
        return [ops.Surface(tuple(found))] if found else []

    def _activity_delta(self, e):
        if e.activity_type != SURFACE_ACTIVITY:
            return []
        before = self.activities.get(e.message_id)
        if before is None:
            return []  # a delta of nothing shown: the middleware's "no-op if missing"
        try:
            after = jsonpatch.apply_patch(before, _plain(e.patch))
        except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException, TypeError,
                ValueError, IndexError, KeyError):
            raise Malformed("an ACTIVITY_DELTA that does not apply") from None
        if not isinstance(after, dict):
            raise Malformed("an ACTIVITY_DELTA that leaves no object")
        self.activities[e.message_id] = after
        old, new = operations_of(before) or [], operations_of(after) or []
        added = new[len(old):] if new[:len(old)] == old else new
        return [ops.Surface(tuple(added))] if added else []

    # The run ----------------------------------------------------------------------------------

    def _run_finished(self, e):
        self.finished = True
        out = [op for call_id in list(self.calls) for op in self._end_call(call_id)]
        outcome = getattr(e, "outcome", None)
        interrupts = getattr(outcome, "interrupts", None) if outcome is not None else None
        if interrupts:
            for interrupt in interrupts:
                out.append(self._interrupt(interrupt))
            return out
        return [*out, ops.Finished(getattr(e, "result", None))]

    def _interrupt(self, interrupt):
        self.asked = True
        reason = interrupt.reason or ""
        message = interrupt.message or reason or "The agent needs your answer."
        resume = {"interrupt_id": interrupt.id}
        request_id = uuid.uuid4().hex
        schema = interrupt.response_schema
        approval = (interrupt.tool_call_id is not None and schema is None) or any(
            word in reason.lower() for word in ("approv", "confirm", "permission"))
        if approval:
            return ops.Ask(request_id, "confirm", {"title": message[:500]}, resume)
        params = {"input_type": "text", "prompt": message}
        options = (schema or {}).get("enum") if isinstance(schema, dict) else None
        if isinstance(options, list) and options and all(isinstance(o, str) for o in options):
            params = {"input_type": "select", "prompt": message, "options": options}
        return ops.Ask(request_id, "input", params, resume)

    def _run_error(self, e):
        self.finished = True
        return [ops.Failed(e.message or "The agent's run failed.", e.code)]
