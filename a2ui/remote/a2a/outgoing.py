"""The A2A messages this client sends, built from a person's turn: sans-I/O.

Every message is a ``SendMessageRequest`` in its A2A 1.0 JSON form (the client parses it into the
SDK's object, which writes A2A 0.3 for a 0.3 agent): role user, a fresh ``messageId``, the
session's ``contextId`` once the agent named one, the task's ``taskId`` when the task waits for
the person (``input-required``/``auth-required``), ``extensions`` naming the A2UI extension and
``metadata.a2uiClientCapabilities`` (plus ``a2uiClientDataModel`` with an action on a surface
that sends its data model).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from a2ui.remote.a2a import extension as ext


def request(parts: list[dict[str, Any]], *, capabilities: dict[str, Any],
            context_id: str = "", task_id: str = "",
            data_model: dict[str, Any] | None = None,
            message_id: str | None = None) -> dict[str, Any]:
    """A ``SendMessageRequest`` (A2A 1.0 JSON) for ``parts``."""
    metadata: dict[str, Any] = {ext.CAPABILITIES_KEY: capabilities}
    if data_model:
        metadata[ext.DATA_MODEL_KEY] = data_model
    message: dict[str, Any] = {
        "messageId": message_id or uuid.uuid4().hex,
        "role": "ROLE_USER",
        "parts": parts,
        "metadata": metadata,
        "extensions": [ext.EXTENSION_URI],
    }
    if context_id:
        message["contextId"] = context_id
    if task_id:
        message["taskId"] = task_id
    return {"message": message, "configuration": {"acceptedOutputModes": ["text/plain", ext.MIME]}}


def text_part(text: str) -> dict[str, Any]:
    return {"text": text}


def answer_parts(value: Any) -> list[dict[str, Any]]:
    """What a person's answer to ``input-required`` says: text as text, anything else as JSON."""
    if isinstance(value, str):
        return [text_part(value)]
    if isinstance(value, dict | list):
        return [{"data": value if isinstance(value, dict) else {"value": value},
                 "mediaType": "application/json", "metadata": {"mimeType": "application/json"}}]
    return [text_part(json.dumps(value))]


def complete_action(action: dict[str, Any]) -> dict[str, Any]:
    """The action with the five fields v0.9 requires (a seed-000 ``user.action`` lacks some)."""
    out = dict(action)
    for key in ("name", "surfaceId", "sourceComponentId"):
        if not isinstance(out.get(key), str):
            out[key] = ""
    if not isinstance(out.get("timestamp"), str):
        out["timestamp"] = datetime.now(UTC).isoformat(timespec="milliseconds").replace(
            "+00:00", "Z")
    if not isinstance(out.get("context"), dict):
        out["context"] = {}
    return out


def action_parts(action: dict[str, Any], *, legacy: bool) -> list[dict[str, Any]]:
    """The extension's action DataPart(s) for a person's v0.9 action."""
    return ext.parts_for([ext.action_message(complete_action(action))], as_list=not legacy)


def error_parts(errors: Iterable[dict[str, Any]], *, legacy: bool) -> list[dict[str, Any]]:
    """The extension's error DataPart(s) for server messages this server refused."""
    return ext.parts_for(list(errors), as_list=not legacy)
