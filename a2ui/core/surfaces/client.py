"""Client-to-server messages: ``action`` and ``error``.

The draft's ``userAction`` (which had no ``version``) is accepted as an alias
and normalized to ``{"version": "v0.9", "action": {...}}`` so the rest of the
server sees one shape; a v0.9.1 client's ``"version": "v0.9.1"`` becomes
``"v0.9"`` too (the messages are the same in both versions). Unlike server
messages, the action object itself may carry extra keys (the official schema
allows them); the envelope may not.
"""

from __future__ import annotations

from typing import Any

from a2ui.core.surfaces.envelope import check_version
from a2ui.core.surfaces.errors import PROTOCOL_VERSION, Invalid, ValidationFailed
from a2ui.core.surfaces.formats import is_date_time

_ACTION_FIELDS = ("name", "surfaceId", "sourceComponentId", "timestamp", "context")
_VALIDATION_ERROR_KEYS = ("code", "surfaceId", "path", "message")


def validate_client_message(message: Any) -> dict[str, Any]:
    """Return the normalized message, or raise :class:`ValidationFailed`."""
    try:
        return _normalize(message)
    except Invalid as e:
        raise ValidationFailed(e.message, e.pointer(), _surface_id(message)) from None


def _surface_id(message: Any) -> str | None:
    if type(message) is dict:
        for key in ("action", "userAction", "error"):
            body = message.get(key)
            if type(body) is dict and type(body.get("surfaceId")) is str:
                return body["surfaceId"]
    return None


def _normalize(message: Any) -> dict[str, Any]:
    if type(message) is not dict:
        raise Invalid("A message must be a JSON object.")
    kinds = [k for k in message if k in ("action", "userAction", "error")]
    for key in message:
        if key not in ("version", "action", "userAction", "error"):
            raise Invalid(f"Unknown property '{key}'.", [key])
    if len(kinds) != 1:
        raise Invalid("A message must contain exactly one of action or error.",
                      [kinds[1]] if kinds else [])
    kind = kinds[0]
    if kind != "userAction" or "version" in message:
        check_version(message)
    try:
        if kind == "error":
            _check_error(message[kind])
        else:
            _check_action(message[kind])
    except Invalid as e:
        e.parts.append(kind)
        raise
    out_kind = "error" if kind == "error" else "action"
    return {"version": PROTOCOL_VERSION, out_kind: message[kind]}


def _check_action(action: Any) -> None:
    if type(action) is not dict:
        raise Invalid("Expected an object.")
    for key in _ACTION_FIELDS:
        if key not in action:
            raise Invalid(f"Missing required property '{key}'.")
    for key in ("name", "surfaceId", "sourceComponentId", "timestamp"):
        if type(action[key]) is not str:
            raise Invalid("Expected a string.", [key])
    if not is_date_time(action["timestamp"]):
        raise Invalid("Must be an ISO 8601 date-time.", ["timestamp"])
    if type(action["context"]) is not dict:
        raise Invalid("Expected an object.", ["context"])


def _check_error(error: Any) -> None:
    if type(error) is not dict:
        raise Invalid("Expected an object.")
    if "code" not in error:
        raise Invalid("Missing required property 'code'.")
    if error["code"] == "VALIDATION_FAILED":
        required = _VALIDATION_ERROR_KEYS
        for key in error:
            if key not in required:
                raise Invalid(f"Unknown property '{key}'.", [key])
    else:
        required = ("code", "surfaceId", "message")
    for key in required:
        if key not in error:
            raise Invalid(f"Missing required property '{key}'.")
        if key != "code" and type(error[key]) is not str:
            raise Invalid("Expected a string.", [key])
