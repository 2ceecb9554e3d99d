"""A person's turn (``a2ui.remote.ops`` TURNS) as JSON and back, as a queued run keeps it
(``RemoteRun.turn``). Sans-I/O.

``{"type": "text" | "answer" | "action" | "cancel" | "tool" | "resume", ...}``; any turn may
carry ``"agui1"``: what a person's AG-UI 1.0 client sent with it (``tools``, ``forwarded``,
``context``), and ``"user_id"``, whose turn it is.
"""

from a2ui.remote import ops

RESUME = "resume"  # pick up a run whose process died: {"type": "resume", "of": run_id, "turn"}


def to_json(turn, **extra):
    if isinstance(turn, ops.UserText):
        out = {"type": "text", "text": turn.text, "message_id": turn.message_id,
               "sender": turn.sender}
    elif isinstance(turn, ops.Answer):
        out = {"type": "answer", "request_id": turn.request_id, "value": turn.value,
               "resume": turn.resume, "status": turn.status}
    elif isinstance(turn, ops.Action):
        out = {"type": "action", "action": turn.action, "data_model": turn.data_model}
    elif isinstance(turn, ops.ToolResult):
        out = {"type": "tool", "call_id": turn.call_id, "content": turn.content}
    elif isinstance(turn, ops.Cancel):
        out = {"type": "cancel", "reason": turn.reason}
    else:
        raise TypeError(f"not a turn: {type(turn).__name__}")
    out.update({k: v for k, v in extra.items() if v is not None})
    return out


def from_json(data):
    """The turn of ``data`` (None for a ``resume`` or an unknown type)."""
    kind = data.get("type") if isinstance(data, dict) else None
    if kind == "text":
        return ops.UserText(str(data.get("text") or ""), data.get("message_id"),
                            data.get("sender"))
    if kind == "answer":
        return ops.Answer(str(data.get("request_id")), data.get("value"), data.get("resume"),
                          data.get("status") or "answered")
    if kind == "action":
        action = data.get("action") if isinstance(data.get("action"), dict) else {}
        return ops.Action(action, data.get("data_model"))
    if kind == "tool":
        return ops.ToolResult(str(data.get("call_id")), str(data.get("content") or ""))
    if kind == "cancel":
        return ops.Cancel(data.get("reason"))
    return None
