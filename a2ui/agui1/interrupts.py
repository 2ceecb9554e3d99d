"""Interrupts: an agent's ``ui.request_input`` / ``ui.confirm`` as an AG-UI 1.0 ``Interrupt``,
and a ``resume`` entry as the person's answer. Sans-I/O.

The interrupt's ``id`` is the request_id; ``reason`` is ``input_required`` or
``confirmation_required``; ``message`` the prompt (or the confirm's title and description);
``responseSchema`` the JSON Schema of the answer; ``metadata.a2ui`` the request as the agent
sent it (``kind``, ``params``).

A resume entry answers it: ``status: "resolved"`` with ``payload`` the value (input), or
``true``/``false`` or ``{"approved": bool, "reason"?: str}`` (confirm); ``status: "cancelled"``
cancels an input and declines a confirm (``reason: "cancelled"``).
"""

from ag_ui.core import Interrupt

from a2ui.core.errors import invalid_input

INPUT_SCHEMAS = {
    "text": {"type": "string"},
    "number": {"type": "number"},
    "date": {"type": "string", "format": "date"},
    "file": {"type": "string"},
}
CONFIRM_SCHEMA = {
    "type": "object",
    "properties": {"approved": {"type": "boolean"}, "reason": {"type": "string"}},
    "required": ["approved"],
}


def _input_schema(params):
    if params.get("input_type") == "select":
        return {"type": "string", "enum": list(params.get("options") or [])}
    schema = dict(INPUT_SCHEMAS.get(params.get("input_type"), {"type": "string"}))
    validation = params.get("validation") or {}
    if schema["type"] == "number":
        for ours, theirs in (("min", "minimum"), ("max", "maximum")):
            if isinstance(validation.get(ours), int | float):
                schema[theirs] = validation[ours]
    elif isinstance(validation.get("pattern"), str):
        schema["pattern"] = validation["pattern"]
    return schema


def of_request(kind, params):
    """The Interrupt of an open request (``request.opened`` data: kind, params)."""
    if kind == "confirm":
        title, description = params.get("title") or "", params.get("description")
        message = f"{title}\n\n{description}" if description else title
        reason, schema = "confirmation_required", CONFIRM_SCHEMA
    else:
        message, reason, schema = params.get("prompt") or "", "input_required", \
            _input_schema(params)
    return Interrupt(id=str(params["request_id"]), reason=reason, message=message or None,
                     response_schema=schema,
                     metadata={"a2ui": {"kind": kind, "params": params}})


def answer(kind, index, entry):
    """What a resume entry does to a request of ``kind``: ("answer", value) or ("cancel",).

    ``value`` is what ``pending.aanswer`` takes (confirm: ``{"approved", "reason"}``); raises
    an ``invalid_input`` DomainError naming ``resume.<index>.payload`` otherwise.
    """
    path = f"resume.{index}.payload"
    payload = entry.payload
    if entry.status == "cancelled":
        if kind == "confirm":
            return ("answer", {"approved": False, "reason": "cancelled"})
        return ("cancel",)
    if kind == "confirm":
        if isinstance(payload, bool):
            return ("answer", {"approved": payload, "reason": ""})
        if isinstance(payload, dict) and isinstance(payload.get("approved"), bool):
            reason = payload.get("reason", "")
            if not isinstance(reason, str):
                raise invalid_input(f"{path}.reason", "must be a string")
            return ("answer", {"approved": payload["approved"], "reason": reason})
        raise invalid_input(path, 'must be true, false or {"approved": bool}')
    if payload is None:
        raise invalid_input(path, "is required to resolve an input")
    if isinstance(payload, dict) and set(payload) == {"value"}:
        payload = payload["value"]
    return ("answer", payload)
