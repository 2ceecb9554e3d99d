"""An agent's seed-003 AG-UI event as a core activity event, and back for errors. Sans-I/O.

Agents push the AG-UI-native events through every agent path (``agui.event`` on the agent
socket, ``POST /api/v4/sessions/<id>/agui``, ``agents.aagui_event``, the MCP tool
``agui_event``) as the seed's event objects; :func:`to_core` checks one the way the seed reads
it (``a2ui.agui.protocol.validate_event``, server direction) and gives the core's
``(kind, data)``:

=====================  =========================================================================
AG-UI event            core event (``a2ui.core.events``)
=====================  =========================================================================
TEXT_MESSAGE           ``message`` role ``agent`` (or the event's ``role``: agent|system, this
                       server's addition), ``message_id`` (the event's, or a new one)
TOOL_CALL_REQUEST      ``tool_call`` phase ``requested`` (status PENDING), call_id = ``id``
TOOL_CALL_STATUS       ``tool_call`` phase ``status``
TOOL_CALL_RESULT       ``tool_call`` phase ``result`` (status FAILED with an ``error``, else
                       COMPLETED)
STATE_DELTA            ``state.delta``; no ``new_value``: the value at ``path`` is removed
PLAN_CARD              ``plan`` plan_id = ``id``
RESOURCE_TREE          ``resources``
AGENT_ROSTER           ``roster``
ARTIFACT_OPEN          ``artifact`` phase ``opened``, artifact_id = ``id``
ARTIFACT_UPDATE        ``artifact`` phase ``updated``
=====================  =========================================================================

RENDER_REQUEST is refused here (agents render with ``ui.render``), and so are the person's and
the connection's events. A refusal is ``invalid_input`` whose path names the field as the agent
wrote it (``params.event.id``, not the core's ``artifact_id``): :func:`seed_path`.
"""

import uuid

from a2ui.agui import protocol as p
from a2ui.core.errors import DomainError, Fault, invalid_input
from a2ui.core.events import Kind

AGENT_EVENTS = ("TEXT_MESSAGE", "TOOL_CALL_REQUEST", "TOOL_CALL_STATUS", "TOOL_CALL_RESULT",
                "STATE_DELTA", "PLAN_CARD", "RESOURCE_TREE", "AGENT_ROSTER", "ARTIFACT_OPEN",
                "ARTIFACT_UPDATE")
KIND_OF = {
    "TEXT_MESSAGE": Kind.MESSAGE, "TOOL_CALL_REQUEST": Kind.TOOL_CALL,
    "TOOL_CALL_STATUS": Kind.TOOL_CALL, "TOOL_CALL_RESULT": Kind.TOOL_CALL,
    "STATE_DELTA": Kind.STATE_DELTA, "PLAN_CARD": Kind.PLAN, "RESOURCE_TREE": Kind.RESOURCES,
    "AGENT_ROSTER": Kind.ROSTER, "ARTIFACT_OPEN": Kind.ARTIFACT, "ARTIFACT_UPDATE": Kind.ARTIFACT,
}
#: Core field -> the seed's name for it, where they differ.
SEED_NAME = {"call_id": "id", "plan_id": "id", "artifact_id": "id"}


def to_core(event, prefix="event"):
    """``(kind, data)`` for an agent's AG-UI event; DomainError ``invalid_input`` otherwise."""
    if not isinstance(event, dict):
        raise invalid_input(prefix, "must be an AG-UI event object")
    kind = event.get("type")
    if kind not in AGENT_EVENTS:
        reason = ("agents render components with ui.render" if kind == "RENDER_REQUEST" else
                  f"must be one of {', '.join(AGENT_EVENTS)}")
        raise invalid_input(f"{prefix}.type", reason)
    try:
        clean = p.validate_event(event, p.OUT, prefix)
    except p.AguiError as exc:
        field = exc.details.get("field", prefix)
        raise invalid_input(field, exc.details.get("reason") or exc.message) from None
    return KIND_OF[kind], _DATA[kind](clean, event, prefix)


def _message(e, raw, prefix):
    role = raw.get("role", "agent")
    if role not in ("agent", "system"):
        raise invalid_input(f"{prefix}.role", "must be agent or system")
    data = {"message_id": raw.get("message_id") or uuid.uuid4().hex, "role": role,
            "sender": e["sender"], "content": e["content"]}
    if "metadata" in e:
        data["metadata"] = e["metadata"]
    return data


def _tool_request(e, raw, prefix):
    return {"call_id": e["id"], "phase": "requested", "tool_name": e["tool_name"],
            "parameters": e["parameters"], "status": "PENDING",
            **({"agent_id": e["agent_id"]} if "agent_id" in e else {})}


def _tool_status(e, raw, prefix):
    return {"call_id": e["id"], "phase": "status", "status": e["status"],
            **{k: e[k] for k in ("progress", "message") if k in e}}


def _tool_result(e, raw, prefix):
    return {"call_id": e["id"], "phase": "result",
            "status": "FAILED" if "error" in e else "COMPLETED",
            **{k: e[k] for k in ("result", "error") if k in e}}


def _delta(e, raw, prefix):
    data = {"path": e["path"], "removed": "new_value" not in e}
    for name in ("old_value", "new_value"):
        if name in e:
            data[name] = e[name]
    return data


def _plan(e, raw, prefix):
    return {"plan_id": e["id"], "title": e["title"], "content": e["content"],
            "status": e["status"]}


def _artifact_open(e, raw, prefix):
    return {"artifact_id": e["id"], "phase": "opened",
            **{k: e[k] for k in ("title", "content", "content_type", "read_only", "language")
               if k in e}}


def _artifact_update(e, raw, prefix):
    return {"artifact_id": e["id"], "phase": "updated", "content": e["content"],
            "change_type": e["change_type"]}


_DATA = {
    "TEXT_MESSAGE": _message, "TOOL_CALL_REQUEST": _tool_request,
    "TOOL_CALL_STATUS": _tool_status, "TOOL_CALL_RESULT": _tool_result,
    "STATE_DELTA": _delta, "PLAN_CARD": _plan,
    "RESOURCE_TREE": lambda e, raw, prefix: {"root": e["root"]},
    "AGENT_ROSTER": lambda e, raw, prefix: {"agents": e["agents"]},
    "ARTIFACT_OPEN": _artifact_open, "ARTIFACT_UPDATE": _artifact_update,
}


def seed_path(path, prefix="event"):
    """A core field path (``artifact_id``, ``root.children[0].name``) as the agent wrote it,
    under ``prefix``."""
    head, dot, rest = path.partition(".")
    bracket = head.find("[")
    name, tail = (head, "") if bracket < 0 else (head[:bracket], head[bracket:])
    name = SEED_NAME.get(name, name)
    return f"{prefix}.{name}{tail}{dot}{rest}"


def in_seed_words(exc, prefix="event"):
    """``exc`` (a DomainError from the core's checks, whose path is a core field) with the
    path as the agent wrote it; other errors as they are."""
    data = exc.data if isinstance(exc.data, dict) else None
    if exc.fault is not Fault.INVALID_INPUT or not data or not isinstance(data.get("path"), str):
        return exc
    return DomainError(Fault.INVALID_INPUT, exc.message,
                       {**data, "path": seed_path(data["path"], prefix)})
