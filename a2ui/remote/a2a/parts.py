"""What an A2A agent streams, read into protocol-neutral items: sans-I/O.

Input: one ``StreamResponse`` in its A2A 1.0 JSON form (``{"task": ...}``, ``{"message": ...}``,
``{"statusUpdate": ...}`` or ``{"artifactUpdate": ...}``; the client turns what either protocol
version sends into it with the SDK). Output: a list of items (:class:`Ids`, :class:`Text`,
:class:`TextChunk`, :class:`Surface`, :class:`Refused`, :class:`Status`) the client maps onto the
runtime's ops. Nothing here trusts the agent:

- A2UI parts are found wherever the agent puts them: in a status update's message (what the
  official samples do), a plain message, an artifact, a task snapshot's status message; a part is
  A2UI when ``metadata.mimeType`` or ``mediaType`` is ``application/a2ui+json`` (or the legacy
  ``application/json+a2ui``); its ``data`` is a list of messages or one message object;
- each message must be a JSON object within the JSON value policy
  (:mod:`a2ui.core.content.jsonvalue`: no lone surrogates in keys, bounded depth, finite numbers,
  integers within 2**53-1); numbers come back integral where they were (protobuf carries every
  number as a double); v0.9.1's basic catalog id is read as v0.9's;
- anything else A2UI-typed (a string, a number, too many messages, an unknown message kind) is a
  :class:`Refused` item, which the client reports to the person and to the agent;
- text parts become chat text (the runtime's content rules clean them like any agent text);
  other data parts and file parts are not shown.

:class:`Reader` keeps the one piece of state a stream needs: which text artifacts are open.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from a2ui.core.content import jsonvalue
from a2ui.core.content.sanitize import clean_string
from a2ui.remote.a2a.extension import MIMES, canonical_catalog_id

#: The most A2UI messages one part may carry, and parts one event may carry.
MAX_MESSAGES_PER_PART = 500
MAX_PARTS_PER_EVENT = 500
#: The server-to-client message kinds of v0.9.
SERVER_KINDS = frozenset({"createSurface", "updateComponents", "updateDataModel", "deleteSurface"})
#: How much of a refused value is echoed back (to the person, the audit, the agent).
ECHO_CAP = 120

#: A2A task states (1.0 enum names; 0.3's kebab-case names are mapped onto them by the SDK).
WORKING = frozenset({"TASK_STATE_SUBMITTED", "TASK_STATE_WORKING", "TASK_STATE_UNSPECIFIED"})
INPUT_REQUIRED = "TASK_STATE_INPUT_REQUIRED"
AUTH_REQUIRED = "TASK_STATE_AUTH_REQUIRED"
COMPLETED = "TASK_STATE_COMPLETED"
CANCELED = "TASK_STATE_CANCELED"
FAILED = frozenset({"TASK_STATE_FAILED", "TASK_STATE_REJECTED"})
TERMINAL = frozenset({COMPLETED, CANCELED, *FAILED})
INTERRUPTED = frozenset({INPUT_REQUIRED, AUTH_REQUIRED})


@dataclass(frozen=True)
class Ids:
    """The agent named the A2A context and (when there is one) the task of this run."""

    context_id: str
    task_id: str


@dataclass(frozen=True)
class Text:
    """A whole text message (a message's or a status update's text parts, joined)."""

    message_id: str
    text: str


@dataclass(frozen=True)
class TextChunk:
    """A piece of a text artifact streamed in chunks (``append``/``lastChunk``)."""

    message_id: str
    text: str
    last: bool


@dataclass(frozen=True)
class Surface:
    """A2UI v0.9 server-to-client messages, in the order the agent sent them."""

    messages: list[dict[str, Any]]


@dataclass(frozen=True)
class Refused:
    """An A2UI part or message this server will not pass on; ``surface_id`` when one is known."""

    reason: str
    surface_id: str = ""
    path: str = ""


@dataclass(frozen=True)
class Status:
    """The task's state changed; ``text`` is its status message's text (a question, an error)."""

    state: str
    text: str = ""
    has_surface: bool = False
    final: bool = False


@dataclass
class _Out:
    items: list[Any] = field(default_factory=list)


def _str(value: Any, default: str = "") -> str:
    return value if isinstance(value, str) else default


def echo(value: Any) -> str:
    """A short, printable rendering of a refused value (never the whole thing)."""
    text = repr(value) if not isinstance(value, str) else value
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text[:ECHO_CAP] + ("..." if len(text) > ECHO_CAP else "")


def is_a2ui_part(part: dict[str, Any]) -> bool:
    meta = part.get("metadata")
    mime = meta.get("mimeType") if isinstance(meta, dict) else None
    return mime in MIMES or part.get("mediaType") in MIMES


def integral(value: Any) -> Any:
    """Numbers back to integers where they are integral and safe (protobuf made them doubles)."""
    kind = type(value)
    if kind is float:
        if math.isfinite(value) and value.is_integer() and abs(value) <= jsonvalue.MAX_SAFE_INTEGER:
            return int(value)
        return value
    if kind is dict:
        return {k: integral(v) for k, v in value.items()}
    if kind is list:
        return [integral(v) for v in value]
    return value


def read_a2ui(data: Any) -> tuple[list[dict[str, Any]], list[Refused]]:
    """The messages of one A2UI part's ``data`` and what was refused among them."""
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list):
        return [], [Refused(f"An A2UI part's data must be a list of messages, not {echo(data)}.")]
    if len(data) > MAX_MESSAGES_PER_PART:
        return [], [Refused(f"An A2UI part may carry at most {MAX_MESSAGES_PER_PART} messages "
                            f"(it carried {len(data)}).")]
    messages, refused = [], []
    for i, message in enumerate(data):
        problem = message_problem(message)
        if problem is not None:
            path = clean_string(f"/{i}{problem[1]}")[:ECHO_CAP]
            refused.append(Refused(problem[0], _surface_of(message), path))
            continue
        messages.append(_canonical(integral(message)))
    return messages, refused


def message_problem(message: Any) -> tuple[str, str] | None:
    """(reason, JSON pointer) when a message cannot be passed to the validator at all."""
    if not isinstance(message, dict):
        return f"An A2UI message must be a JSON object, not {echo(message)}.", ""
    kinds = [k for k in message if k in SERVER_KINDS]
    if len(kinds) != 1:
        names = ", ".join(echo(k) for k in list(message)[:5])
        return f"Not an A2UI v0.9 server message (keys: {names}).", ""
    found = jsonvalue.find(integral(message))
    if found is not None:
        reason, path = found
        return reason, jsonvalue.pointer(path)
    if not jsonvalue.depth_ok(message, 2 * jsonvalue.MAX_DEPTH):
        return f"Nested deeper than {2 * jsonvalue.MAX_DEPTH} levels.", ""
    return None


def _surface_of(message: Any) -> str:
    if isinstance(message, dict):
        for kind in SERVER_KINDS:
            body = message.get(kind)
            if isinstance(body, dict) and isinstance(body.get("surfaceId"), str):
                return clean_string(body["surfaceId"])[:ECHO_CAP]
    return ""


def _canonical(message: dict[str, Any]) -> dict[str, Any]:
    body = message.get("createSurface")
    if isinstance(body, dict) and isinstance(body.get("catalogId"), str):
        cid = canonical_catalog_id(body["catalogId"])
        if cid != body["catalogId"]:
            message = {**message, "createSurface": {**body, "catalogId": cid}}
    return message


def read_parts(parts: Any, out: _Out, message_id: str = "") -> tuple[list[str], bool]:
    """Texts of ``parts`` (returned) and their A2UI messages and refusals (into ``out``).

    With ``message_id``, text goes into ``out`` too, in order with the surfaces: consecutive text
    parts make one :class:`Text` (``message_id``, then ``message_id:2``... after a surface).
    """
    texts: list[str] = []
    has_surface = False
    if not isinstance(parts, list):
        return texts, has_surface
    if len(parts) > MAX_PARTS_PER_EVENT:
        out.items.append(Refused(f"An event may carry at most {MAX_PARTS_PER_EVENT} parts "
                                 f"(it carried {len(parts)})."))
        return texts, has_surface
    pending: list[str] = []
    pieces = 0

    def flush() -> None:
        nonlocal pieces
        text = "\n".join(t for t in pending if t)
        pending.clear()
        if text and message_id:
            pieces += 1
            out.items.append(Text(message_id if pieces == 1 else f"{message_id}:{pieces}", text))

    for part in parts:
        if not isinstance(part, dict):
            continue
        if is_a2ui_part(part):
            messages, refused = read_a2ui(part.get("data"))
            if messages:
                flush()
                out.items.append(Surface(messages))
                has_surface = True
            out.items.extend(refused)
        elif isinstance(part.get("text"), str):
            text = clean_string(part["text"])  # no lone surrogates, no control characters
            texts.append(text)
            pending.append(text)
    flush()
    return texts, has_surface


class Reader:
    """Reads one run's stream events; remembers which streamed text artifacts are open."""

    def __init__(self) -> None:
        self._open: set[str] = set()
        self._seen: set[str] = set()  # status message ids already read
        self._shown: set[int] = set()  # fingerprints of status messages' parts already read

    def read(self, event: Any) -> list[Any]:
        """The items of one stream event (see the module docstring); ``[]`` for an empty one."""
        out = _Out()
        if not isinstance(event, dict):
            return [Refused(f"Not an A2A stream event: {echo(event)}.")]
        if isinstance(event.get("task"), dict):
            # A task snapshot (the first event of a stream or of a resubscription): its
            # artifacts were streamed before, so only its status is read, and its status
            # message only when this reader has not read it yet.
            task = event["task"]
            _ids(task, "id", out)
            self._status(task.get("status"), out, f"{_str(task.get('id'))}:status")
        elif isinstance(event.get("message"), dict):
            msg = event["message"]
            _ids(msg, "taskId", out)
            _message(msg, out, _str(msg.get("messageId"), "message"))
            if not _str(msg.get("taskId")):  # a bare message ends the exchange: no task made
                out.items.append(Status(COMPLETED, final=True))
        elif isinstance(event.get("statusUpdate"), dict):
            upd = event["statusUpdate"]
            _ids(upd, "taskId", out)
            self._status(upd.get("status"), out, f"{_str(upd.get('taskId'))}:status")
        elif isinstance(event.get("artifactUpdate"), dict):
            upd = event["artifactUpdate"]
            _ids(upd, "taskId", out)
            self._artifact(upd.get("artifact"), out, _str(upd.get("taskId")),
                           last=upd.get("lastChunk") is True)
        else:
            keys = ", ".join(echo(k) for k in list(event)[:5])
            out.items.append(Refused(f"Unknown A2A stream event (keys: {keys})."))
        return out.items

    def _status(self, status: Any, out: _Out, fallback_id: str) -> None:
        if not isinstance(status, dict):
            return
        message = status.get("message")
        mid = _str(message.get("messageId")) if isinstance(message, dict) else ""
        seen = bool(mid) and mid in self._seen
        if mid and not seen and len(self._seen) < 10_000:
            self._seen.add(mid)
        # a message read before is read again for its text, but not shown twice
        text, has_surface = _message(message, _Out() if seen else out, fallback_id)
        if isinstance(message, dict) and len(self._shown) < 10_000:
            self._shown.add(_fingerprint(message.get("parts")))
        state = _str(status.get("state"), "TASK_STATE_UNSPECIFIED")
        out.items.append(Status(state, text, has_surface, state in TERMINAL))

    def close_all(self) -> list[TextChunk]:
        """Ends every text artifact still open (the stream ended without their last chunk)."""
        items = [TextChunk(mid, "", True) for mid in sorted(self._open)]
        self._open.clear()
        return items

    def _artifact(self, artifact: Any, out: _Out, task_id: str, last: bool) -> None:
        if not isinstance(artifact, dict):
            return
        if _fingerprint(artifact.get("parts")) in self._shown:
            return  # the final artifact repeating a status message (Google ADK does)
        mid = f"{task_id}:{_str(artifact.get('artifactId'), 'artifact')}"
        texts, _ = read_parts(artifact.get("parts"), out)  # text here is a chunk, not a message
        text = "".join(texts)
        if text:
            out.items.append(TextChunk(mid, text, last))
            if last:
                self._open.discard(mid)
            else:
                self._open.add(mid)
        elif last and mid in self._open:
            self._open.discard(mid)
            out.items.append(TextChunk(mid, "", True))


def _message(message: Any, out: _Out, fallback_id: str) -> tuple[str, bool]:
    if not isinstance(message, dict):
        return "", False
    mid = _str(message.get("messageId"), fallback_id) or fallback_id
    texts, has_surface = read_parts(message.get("parts"), out, mid)
    return "\n".join(t for t in texts if t), has_surface


def _fingerprint(parts: Any) -> int:
    try:
        return hash(json.dumps(parts, sort_keys=True, ensure_ascii=False, allow_nan=True,
                               default=repr))
    except (ValueError, TypeError, RecursionError):
        return 0


def _ids(body: dict[str, Any], task_key: str, out: _Out) -> None:
    ctx, task = _str(body.get("contextId")), _str(body.get(task_key))
    if ctx or task:
        out.items.append(Ids(ctx, task))


