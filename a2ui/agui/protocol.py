"""Seed 003, the AG-UI WebSocket event protocol: envelope, event types, errors. Sans-I/O.

Every frame is an envelope ``{"version": "0.1.0", "id": <UUID v4>, "timestamp": <RFC 3339>,
"event": {"type": "SCREAMING_SNAKE_CASE", ...}}``. Optional fields are left out, never sent as
null (a null received for an optional field counts as absent, as serde's ``Option`` reads it).
``parse`` checks a client frame and raises :class:`AguiError` with the seed's code and
``details.field``; ``envelope`` builds a server frame and checks it the same way (a server
bug is an exception here, not a malformed frame on the wire).
"""

import json
import re
import uuid
from datetime import UTC, datetime

from a2ui.agui import PROTOCOL_VERSION
from a2ui.core.content import fields, jsonvalue

# Error codes (seed 003 "Standard Error Codes") -----------------------------------------------

PARSE_ERROR = "PARSE_ERROR"
INVALID_EVENT = "INVALID_EVENT"
INVALID_VERSION = "INVALID_VERSION"
INVALID_EVENT_DATA = "INVALID_EVENT_DATA"
MISSING_FIELD = "MISSING_FIELD"
CONNECTION_ERROR = "CONNECTION_ERROR"
ERROR_CODES = (PARSE_ERROR, INVALID_EVENT, INVALID_VERSION, INVALID_EVENT_DATA, MISSING_FIELD,
               CONNECTION_ERROR)


class AguiError(Exception):
    """A refused frame: ``code`` (one of ERROR_CODES), ``message``, ``details`` (JSON)."""

    def __init__(self, code, message, details=None):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.details = details or {}


# Event types ---------------------------------------------------------------------------------

IN, OUT = "client", "server"  # who may send an event type

TOOL_STATUSES = ("PENDING", "RUNNING", "COMPLETED", "FAILED", "CANCELLED")
PLAN_STATUSES = ("ACTIVE", "COMPLETED", "FAILED", "CANCELLED")
AGENT_STATUSES = ("ONLINE", "BUSY", "IDLE", "OFFLINE")
CONNECTION_STATUSES = ("CONNECTING", "CONNECTED", "DISCONNECTED", "RECONNECTING", "FAILED")
CHANGE_TYPES = ("full_replace", "partial", "diff")

# A field spec: (name, check, required). A check is a type tuple, a tuple of allowed strings
# (an enum), or a callable returning a reason (str) when the value is wrong.
STR, OBJ, LIST, BOOL = (str,), (dict,), (list,), (bool,)
ANY = None


MAX_IDENT = fields.MAX_NAME
#: An action type or component id: a name, not text (a2ui.core.content.fields.name_reason: no
#: control characters, NUL included, which no database stores; at most MAX_IDENT characters).
_ident = fields.name_reason


def _percent(value):
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "must be a number"
    if not 0 <= value <= 100:
        return "must be between 0 and 100"
    return None


def _tree_node(value, depth=0):
    if not isinstance(value, dict):
        return "must be an object"
    if depth > 32:
        return "is nested too deeply"
    for name in ("id", "name", "node_type"):
        if not isinstance(value.get(name), str):
            return f"needs a string {name}"
    children = value.get("children")
    if children is not None:
        if not isinstance(children, list):
            return "children must be a list"
        for child in children:
            reason = _tree_node(child, depth + 1)
            if reason:
                return f"has a child that {reason}"
    return None


def _roster(value):
    if not isinstance(value, list):
        return "must be a list"
    for agent in value:
        if not isinstance(agent, dict):
            return "must hold objects"
        if not isinstance(agent.get("id"), str) or not isinstance(agent.get("name"), str):
            return "entries need string id and name"
        if agent.get("status") not in AGENT_STATUSES:
            return f"entries need a status, one of {', '.join(AGENT_STATUSES)}"
        if agent.get("metadata") is not None and not isinstance(agent["metadata"], dict):
            return "entries' metadata must be an object"
    return None


EVENTS = {
    "TEXT_MESSAGE": ({IN, OUT}, [("sender", STR, True), ("content", STR, True),
                                 ("metadata", OBJ, False)]),
    "TOOL_CALL_REQUEST": ({OUT}, [("id", STR, True), ("tool_name", STR, True),
                                  ("parameters", OBJ, True), ("agent_id", STR, False)]),
    "TOOL_CALL_STATUS": ({OUT}, [("id", STR, True), ("status", TOOL_STATUSES, True),
                                 ("progress", _percent, False), ("message", STR, False)]),
    "TOOL_CALL_RESULT": ({OUT}, [("id", STR, True), ("result", ANY, False),
                                 ("error", STR, False)]),
    "STATE_DELTA": ({OUT}, [("path", STR, True), ("old_value", ANY, False),
                            ("new_value", ANY, False)]),
    "RENDER_REQUEST": ({OUT}, [("component_id", STR, True), ("schema", OBJ, True),
                               ("props", OBJ, False)]),
    "PLAN_CARD": ({OUT}, [("id", STR, True), ("title", STR, True), ("content", STR, True),
                          ("status", PLAN_STATUSES, True)]),
    "RESOURCE_TREE": ({OUT}, [("root", _tree_node, True)]),
    "AGENT_ROSTER": ({OUT}, [("agents", _roster, True)]),
    "ARTIFACT_OPEN": ({OUT}, [("id", STR, True), ("title", STR, True), ("content", STR, True),
                              ("content_type", STR, True), ("read_only", BOOL, False),
                              ("language", STR, False)]),
    "ARTIFACT_UPDATE": ({OUT}, [("id", STR, True), ("content", STR, True),
                                ("change_type", CHANGE_TYPES, True)]),
    "USER_ACTION": ({IN}, [("action_type", _ident, True), ("component_id", _ident, False),
                           ("payload", ANY, False)]),
    "CONNECTION_STATUS": ({OUT}, [("status", CONNECTION_STATUSES, True),
                                  ("message", STR, False), ("session_id", STR, False)]),
    "ERROR": ({OUT}, [("code", ERROR_CODES, True), ("message", STR, True),
                      ("details", OBJ, False)]),
}


def _reason(check, value):
    if check is ANY:
        return None
    if callable(check):
        return check(value)
    if all(isinstance(c, str) for c in check):  # an enum
        return None if value in check else f"must be one of {', '.join(check)}"
    if isinstance(value, bool) and bool not in check:
        return f"must be a {check[0].__name__}"
    return None if isinstance(value, check) else f"must be {_NAMES.get(check, 'valid')}"


_NAMES = {STR: "a string", OBJ: "an object", LIST: "a list", BOOL: "true or false"}


def validate_event(event, direction, prefix="event"):
    """Check ``event`` may travel in ``direction`` (IN or OUT); return it without nulls."""
    if not isinstance(event, dict):
        raise AguiError(INVALID_EVENT_DATA, "The event must be an object.", {"field": prefix})
    kind = event.get("type")
    if kind is None:
        raise AguiError(MISSING_FIELD, "Invalid event format: missing 'type' field",
                        {"field": f"{prefix}.type"})
    spec = EVENTS.get(kind) if isinstance(kind, str) else None
    if spec is None:
        raise AguiError(INVALID_EVENT, "Unknown event type.",
                        {"field": f"{prefix}.type", "type": str(kind)[:64]})
    directions, fields = spec
    if direction not in directions:
        raise AguiError(INVALID_EVENT, f"{kind} is not sent by the {direction}.",
                        {"field": f"{prefix}.type", "type": kind})
    clean = {"type": kind}
    for name, check, required in fields:
        value = event.get(name)
        if value is None:
            if required:
                raise AguiError(MISSING_FIELD, f"Missing required field '{name}'.",
                                {"field": f"{prefix}.{name}"})
            continue
        reason = _reason(check, value)
        if reason:
            raise AguiError(INVALID_EVENT_DATA, f"'{name}' {reason}.",
                            {"field": f"{prefix}.{name}", "reason": reason})
        clean[name] = value
    # Unknown fields are kept on the way in (a newer minor version may add some), never added
    # by this server on the way out.
    for name, value in event.items():
        if name not in clean and value is not None and direction == IN:
            clean.setdefault(name, value)
    return clean


# Envelope ------------------------------------------------------------------------------------

_RFC3339 = re.compile(
    r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})")
_SEMVER = re.compile(r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:[-+][0-9A-Za-z.+-]*)?")
MAJOR = PROTOCOL_VERSION.split(".")[0]


def _check_envelope(obj):
    if not isinstance(obj, dict):
        raise AguiError(INVALID_EVENT, "A frame must be a JSON object (the event envelope).")
    for name in ("version", "id", "timestamp", "event"):
        if obj.get(name) is None:
            raise AguiError(MISSING_FIELD, f"Missing required field '{name}'.", {"field": name})
    version = obj["version"]
    match = _SEMVER.fullmatch(version) if isinstance(version, str) else None
    if match is None:
        raise AguiError(INVALID_EVENT_DATA, "'version' must be a semantic version.",
                        {"field": "version"})
    if match.group(1) != MAJOR:
        raise AguiError(INVALID_VERSION, f"Version {version} is not compatible with "
                        f"{PROTOCOL_VERSION}.", {"field": "version",
                                                  "supported": PROTOCOL_VERSION})
    try:
        parsed = uuid.UUID(obj["id"]) if isinstance(obj["id"], str) else None
    except ValueError:
        parsed = None
    if parsed is None or parsed.version != 4 or len(obj["id"]) != 36:
        raise AguiError(INVALID_EVENT_DATA, "'id' must be a UUID v4.", {"field": "id"})
    stamp = obj["timestamp"]
    if not isinstance(stamp, str) or not _RFC3339.fullmatch(stamp) or _when(stamp) is None:
        raise AguiError(INVALID_EVENT_DATA, "'timestamp' must be an RFC 3339 date-time.",
                        {"field": "timestamp"})


def _when(stamp):
    try:
        return datetime.fromisoformat(stamp.upper().replace("Z", "+00:00"))
    except ValueError:
        return None


def parse(obj):
    """A client's frame (already JSON-decoded) as its checked event; AguiError otherwise."""
    _check_envelope(obj)
    return validate_event(obj["event"], IN)


def parse_text(text):
    """A client's text frame; PARSE_ERROR when it is not JSON (under the JSON value policy of
    every edge, ``a2ui.core.content.jsonvalue``: a refused value is INVALID_EVENT_DATA)."""
    try:
        obj = jsonvalue.loads(text)
    except jsonvalue.JSONValueError as exc:
        raise AguiError(INVALID_EVENT_DATA, f"A value is not acceptable: {exc.reason}",
                        {"field": exc.dotted, "reason": exc.reason}) from None
    except (ValueError, RecursionError):
        raise AguiError(PARSE_ERROR, "The frame is not valid JSON.") from None
    return parse(obj)


def now():
    """An RFC 3339 timestamp in UTC with milliseconds, as the seed's example."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def envelope(event):
    """A server frame around ``event`` (checked as a server event, nulls left out)."""
    return {"version": PROTOCOL_VERSION, "id": str(uuid.uuid4()), "timestamp": now(),
            "event": validate_event(event, OUT)}


_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def encode_event(event):
    """The text of ``event`` checked as a server event: the part of a frame that is the same
    for every socket (ValueError for a value JSON cannot hold, such as NaN)."""
    return _ENCODER.encode(validate_event(event, OUT))


def frame(event_text):
    """A server frame around an encoded event: its own UUID v4 and timestamp, the same text as
    ``encode`` of the event (the envelope's keys in the same order)."""
    return (f'{{"version":"{PROTOCOL_VERSION}","id":"{uuid.uuid4()}",'
            f'"timestamp":"{now()}","event":{event_text}}}')


def encode(event):
    """The frame's text (ValueError for a value JSON cannot hold, such as NaN)."""
    return frame(encode_event(event))


# Builders ------------------------------------------------------------------------------------


def _event(kind, **fields):
    return {"type": kind, **{k: v for k, v in fields.items() if v is not None}}


def build(kind, **fields):
    """An event of type ``kind`` with the fields that are not None."""
    return _event(kind, **fields)


def error(code, message, details=None):
    return _event("ERROR", code=code, message=message, details=details or None)


def error_of(exc):
    return error(exc.code, exc.message, exc.details)


def connection_status(status, message=None, session_id=None):
    return _event("CONNECTION_STATUS", status=status, message=message, session_id=session_id)


def text_message(sender, content, metadata=None):
    return _event("TEXT_MESSAGE", sender=sender, content=content, metadata=metadata or None)


def render_request(component_id, schema, props=None):
    return _event("RENDER_REQUEST", component_id=component_id, schema=schema,
                  props=props or None)


def tool_call_status(call_id, status, progress=None, message=None):
    return _event("TOOL_CALL_STATUS", id=call_id, status=status, progress=progress,
                  message=message)


def state_delta(path, old_value=None, new_value=None):
    return _event("STATE_DELTA", path=path, old_value=old_value, new_value=new_value)
