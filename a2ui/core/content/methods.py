"""The eleven seed-000 methods (§4) and their params validation.

:func:`validate_params` is the single gate between a parsed :class:`~.jsonrpc.Message`
and the service layer: it returns a *new* dict with defaults filled in and every
display string sanitized, or raises -32602 naming the bad field (-32601 for an unknown
method). Unknown extra params are kept, sanitized, for forward compatibility.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Collection
from typing import Any

from a2ui.core.content import drawn
from a2ui.core.content import fields as f
from a2ui.core.content.components import check_component_type, validate_component, validate_metadata
from a2ui.core.content.sanitize import check_url, clean_tree, sanitize_tree
from a2ui.core.errors import DomainError, Fault, invalid_input
from a2ui.core.events import Kind

#: Sent by agents (through the server) to the UI.
AGENT_TO_UI = frozenset(
    {
        "ui.render",
        "ui.update",
        "ui.request_input",
        "ui.confirm",
        "ui.progress",
        "ui.navigate",
        "ui.notify",
    }
)
#: Sent by the UI client to the server/agent.
UI_TO_AGENT = frozenset({"a2ui.init", "user.respond", "user.approve", "user.cancel"})
#: Agent methods that complete once delivered: nothing from the user is awaited.
FIRE_AND_FORGET = frozenset({"ui.render", "ui.update", "ui.progress", "ui.navigate", "ui.notify"})
#: Agent methods that open a pending request answered by user.respond / user.approve.
AWAITING = frozenset({"ui.request_input", "ui.confirm"})
#: Which user method answers which awaiting agent method.
ANSWERED_BY = {"ui.request_input": "user.respond", "ui.confirm": "user.approve"}
ALL_METHODS = AGENT_TO_UI | UI_TO_AGENT

UPDATE_OPERATIONS = ("replace", "merge", "append")
INPUT_TYPES = ("text", "select", "number", "date", "file")
CONFIRM_SEVERITIES = ("info", "warning", "critical")
PROGRESS_TYPES = ("determinate", "indeterminate", "streaming")
NOTIFY_LEVELS = ("info", "success", "warning", "error")

DEFAULT_CONFIRM_TIMEOUT = 30
MIN_TIMEOUT_SECONDS = 1
MAX_TIMEOUT_SECONDS = 3600
DEFAULT_NOTIFY_DURATION_MS = 5000
#: 0 = stays until dismissed; the upper bound is ten minutes.
MAX_NOTIFY_DURATION_MS = 600_000

P = "params"


def _base(params: dict[str, Any], exclude: Collection[str] = ()) -> dict[str, Any]:
    """Sanitized copy of everything, so unknown keys survive; known keys are overwritten.
    ``exclude`` skips keys a dedicated validator sanitizes anyway (no double nh3 pass)."""
    return sanitize_tree({k: v for k, v in params.items() if k not in exclude}, path=P)


def _render(params: dict[str, Any]) -> dict[str, Any]:
    out = _base(params, exclude=("data", "metadata"))
    out["component_id"] = f.identifier(params, "component_id", P)
    component_type = f.get(params, "component_type", P, required=True)
    out["component_type"] = check_component_type(component_type, f.join(P, "component_type"))
    out["data"] = validate_component(
        component_type, f.get(params, "data", P, required=True), f.join(P, "data")
    )
    out["metadata"] = validate_metadata(params.get("metadata"), f.join(P, "metadata"))
    return out


def _update(params: dict[str, Any]) -> dict[str, Any]:
    """The patch is checked against the component's type later, by
    :func:`a2ui.core.content.updates.apply_update`, once the service has loaded it."""
    out = _base(params)
    out["component_id"] = f.identifier(params, "component_id", P)
    out["operation"] = f.enum(params, "operation", UPDATE_OPERATIONS, P, required=True)
    f.obj(f.get(params, "data", P, required=True), f.join(P, "data"))
    return out


def _timeout(params: dict[str, Any], default: Any = None) -> Any:
    kwargs = {} if default is None else {"default": default}
    return f.integer(
        params,
        "timeout_seconds",
        P,
        minimum=MIN_TIMEOUT_SECONDS,
        maximum=MAX_TIMEOUT_SECONDS,
        **kwargs,
    )


def _request_input(params: dict[str, Any]) -> dict[str, Any]:
    out = _base(params)
    out["request_id"] = f.identifier(params, "request_id", P)
    input_type = f.enum(params, "input_type", INPUT_TYPES, P, required=True)
    out["input_type"] = input_type
    f.string(params, "prompt", P, required=True)
    options = f.strings(params, "options", P, required=input_type == "select")
    if input_type == "select" and not options:
        raise invalid_input(f.join(P, "options"), "a select input needs options")
    validation = f.get(params, "validation", P, required=False)
    if not f.is_missing(validation):
        v_path = f.join(P, "validation")
        f.obj(validation, v_path)
        f.number(validation, "min", v_path)
        f.number(validation, "max", v_path)
        found = drawn.range_problem(validation)
        if found:
            raise invalid_input(f.join(v_path, found[0][0]), found[1])
        f.string(validation, "pattern", v_path, max_length=512)
        f.boolean(validation, "required", v_path)
    f.set_default(out, "timeout_seconds", _timeout(params))
    return out


def _confirm(params: dict[str, Any]) -> dict[str, Any]:
    out = _base(params)
    out["request_id"] = f.identifier(params, "request_id", P)
    f.string(params, "title", P, required=True)
    f.string(params, "description", P)
    out["severity"] = f.enum(params, "severity", CONFIRM_SEVERITIES, P, default="info")
    out["timeout_seconds"] = _timeout(params, DEFAULT_CONFIRM_TIMEOUT)
    return out


def _progress(params: dict[str, Any]) -> dict[str, Any]:
    out = _base(params)
    out["task_id"] = f.identifier(params, "task_id", P)
    out["progress_type"] = f.enum(params, "progress_type", PROGRESS_TYPES, P, required=True)
    f.number(params, "value", P, minimum=0, maximum=drawn.MAX_DRAWN)
    total = f.number(params, "total", P, minimum=0, maximum=drawn.MAX_DRAWN)
    if total == 0:
        raise invalid_input(f.join(P, "total"), "must be > 0")
    f.string(params, "message", P)
    return out


def _navigate(params: dict[str, Any]) -> dict[str, Any]:
    out = _base(params)
    out["url"] = check_url(f.get(params, "url", P, required=True), f.join(P, "url"))
    out["new_tab"] = f.boolean(params, "new_tab", P, default=False)
    return out


def _notify(params: dict[str, Any]) -> dict[str, Any]:
    out = _base(params)
    out["level"] = f.enum(params, "level", NOTIFY_LEVELS, P, required=True)
    f.string(params, "title", P, required=True)
    f.string(params, "message", P)
    out["duration_ms"] = f.integer(
        params,
        "duration_ms",
        P,
        default=DEFAULT_NOTIFY_DURATION_MS,
        minimum=0,
        maximum=MAX_NOTIFY_DURATION_MS,
    )
    return out


def _init(params: dict[str, Any]) -> dict[str, Any]:
    out = _base(params, exclude=("capabilities", "session_id"))
    info_path = f.join(P, "client_info")
    info = f.obj(f.get(params, "client_info", P, required=True), info_path)
    f.string(info, "name", info_path, required=True, max_length=256)
    f.string(info, "version", info_path, required=True, max_length=64)
    viewport = f.get(info, "viewport", info_path, required=False)
    if not f.is_missing(viewport):
        vp_path = f.join(info_path, "viewport")
        f.obj(viewport, vp_path)
        f.integer(viewport, "width", vp_path, minimum=0, maximum=100_000)
        f.integer(viewport, "height", vp_path, minimum=0, maximum=100_000)
    caps_path = f.join(P, "capabilities")
    caps = f.get(params, "capabilities", P, required=False)
    caps = {} if f.is_missing(caps) else f.obj(caps, caps_path)
    f.strings(caps, "supported_components", caps_path)
    f.integer(caps, "max_concurrent_components", caps_path, minimum=1, maximum=10_000)
    f.boolean(caps, "supports_file_upload", caps_path)
    for version in ("v0.9.1", "v0.9"):  # A2UI v0.9.1 keys its entry "v0.9.1", v0.9 "v0.9"
        entry = f.get(caps, version, caps_path, required=False)
        if not f.is_missing(entry):
            f.obj(entry, f.join(caps_path, version))
    out["capabilities"] = sanitize_tree(caps, path=caps_path)
    session_id = f.get(params, "session_id", P, required=False)
    if not f.is_missing(session_id):
        out["session_id"] = _uuid(session_id, f.join(P, "session_id"))
    return out


def _uuid(value: Any, path: str) -> str:
    """Canonical lower-case hyphenated form, so lookups never miss on case or braces."""
    if not isinstance(value, str) or len(value) > 45:
        raise invalid_input(path, "must be a UUID string")
    try:
        return str(uuid.UUID(value))
    except ValueError:
        raise invalid_input(path, "must be a UUID string") from None


def _respond(params: dict[str, Any]) -> dict[str, Any]:
    """``value`` is the user's raw answer: any JSON, not HTML-sanitized (agents must get
    exactly what the person typed); only made encodable and depth-limited. Everyone who
    displays it must escape it."""
    out = _base(params, exclude=("value",))
    out["request_id"] = f.identifier(params, "request_id", P)
    if "value" not in params:
        raise invalid_input(f.join(P, "value"), "is required")
    out["value"] = clean_tree(params["value"], f.join(P, "value"))
    return out


def _approve(params: dict[str, Any]) -> dict[str, Any]:
    out = _base(params)
    out["request_id"] = f.identifier(params, "request_id", P)
    out["approved"] = f.boolean(params, "approved", P, required=True)
    f.string(params, "reason", P, max_length=4096)
    return out


def _cancel(params: dict[str, Any]) -> dict[str, Any]:
    out = _base(params)
    out["task_id"] = f.identifier(params, "task_id", P)
    f.string(params, "reason", P, max_length=4096)
    return out


def _message(params: dict[str, Any]) -> dict[str, Any]:
    """The person's chat message (extension ``user.message``): ``content`` a non-empty string,
    ``metadata`` an optional object. Shape only, and made encodable: the transcript's checks
    (length, markdown sanitizing) are the services' (``a2ui.surfaces.activity``)."""
    out: dict[str, Any] = {}
    out["content"] = clean_tree(f.string(params, "content", P, required=True, non_empty=True),
                                f.join(P, "content"))
    metadata = f.get(params, "metadata", P, required=False)
    if not f.is_missing(metadata):
        out["metadata"] = clean_tree(f.obj(metadata, f.join(P, "metadata")),
                                     f.join(P, "metadata"))
    return out


#: USER_ACTION types with a meaning of their own on the AG-UI socket (a2ui.agui.actions): on the
#: JSON-RPC socket each has its own method, so ``user.action`` refuses them.
RESERVED_ACTIONS = {
    "submit": "user.respond", "respond": "user.respond", "approve": "user.approve",
    "reject": "user.approve", "confirm": "user.approve", "cancel": "user.cancel",
    "consent": "user.consent",
}


def _action(params: dict[str, Any]) -> dict[str, Any]:
    """The person's custom action (extension ``user.action``), the AG-UI socket's USER_ACTION:
    ``action_type`` and ``component_id`` (optional) names (:func:`.fields.name`: no control
    characters, at most 256 characters), ``payload`` any JSON value, made encodable and
    depth-limited, not HTML-sanitized (the agent gets what the person's client sent). The
    frame limit, ``A2UI['MAX_PAYLOAD_SIZE']``, bounds it."""
    out: dict[str, Any] = {}
    out["action_type"] = f.name(params, "action_type", P)
    if out["action_type"] in RESERVED_ACTIONS:
        raise invalid_input(f.join(P, "action_type"),
                             f"is reserved: use {RESERVED_ACTIONS[out['action_type']]}")
    component_id = f.name(params, "component_id", P, required=False)
    if not f.is_missing(component_id):
        out["component_id"] = component_id
    payload = f.get(params, "payload", P, required=False)
    if not f.is_missing(payload):
        out["payload"] = clean_tree(payload, f.join(P, "payload"))
    return out


VALIDATORS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "ui.render": _render,
    "ui.update": _update,
    "ui.request_input": _request_input,
    "ui.confirm": _confirm,
    "ui.progress": _progress,
    "ui.navigate": _navigate,
    "ui.notify": _notify,
    "a2ui.init": _init,
    "user.respond": _respond,
    "user.approve": _approve,
    "user.cancel": _cancel,
    "user.message": _message,
    "user.action": _action,
}


def validate_params(
    method: str, params: Any, *, allowed: Collection[str] | None = None
) -> dict[str, Any]:
    """Validate ``params`` for ``method``; return a cleaned, sanitized copy.

    ``allowed`` restricts the methods this peer may send (e.g. :data:`UI_TO_AGENT` on a
    user socket): anything else is -32601, exactly like an unknown method, so a client
    cannot tell "exists but not for you" from "does not exist".
    """
    validator = VALIDATORS.get(method)
    if validator is None or (allowed is not None and method not in allowed):
        raise DomainError(Fault.UNKNOWN_OPERATION, data={"method": str(method)[:128]})
    if params is None:
        params = {}
    f.obj(params, P)
    return validator(params)


# What an agent's method becomes: a session event (a2ui.core.events) --------------------

KIND_BY_METHOD = {
    "ui.render": Kind.COMPONENT_RENDERED,
    "ui.update": Kind.COMPONENT_UPDATED,
    "ui.request_input": Kind.REQUEST_OPENED,
    "ui.confirm": Kind.REQUEST_OPENED,
    "ui.progress": Kind.PROGRESS,
    "ui.navigate": Kind.NAVIGATE,
    "ui.notify": Kind.NOTIFY,
}
REQUEST_KIND_BY_METHOD = {"ui.request_input": "input", "ui.confirm": "confirm"}


def agent_message(method, params):
    """An agent-to-UI message: ``(session_id, params)`` with the rest validated, or -32601/-32602."""
    if method not in AGENT_TO_UI:
        raise DomainError(Fault.UNKNOWN_OPERATION, data={"method": str(method)[:100]})
    if not isinstance(params, dict) or "session_id" not in params:
        raise DomainError(Fault.INVALID_INPUT, "session_id is required",
                          data={"path": "params.session_id"})
    params = dict(params)
    session_id = params.pop("session_id")
    return session_id, validate_params(method, params)


def to_event(method, params):
    """``(kind, data)`` for a validated agent-to-UI message (``params`` without session_id)."""
    kind = KIND_BY_METHOD[method]
    if kind is Kind.REQUEST_OPENED:
        return kind, {"kind": REQUEST_KIND_BY_METHOD[method], "params": params}
    return kind, params
