"""A ``POST /api/v4/agui/run`` body read as an AG-UI 1.0 ``RunAgentInput``. Sans-I/O.

The text is parsed under the JSON value policy of every edge (``a2ui.core.content.jsonvalue``:
no integers beyond 2**53-1, no lone surrogates, no NUL in keys, bounded depth), then validated
by the official ``ag-ui-protocol`` models. A refusal is :class:`InputError` with the HTTP
status, a message and the offending field: the view answers it before any state changes.
"""

from dataclasses import dataclass, field

from ag_ui.core import RunAgentInput
from pydantic import ValidationError

from a2ui.core.content import jsonvalue

MAX_ID_LENGTH = 200
MAX_MESSAGES = 1000
#: Roles of the trailing messages that are new to the agent: what the person (or a frontend
#: tool the person's client ran) added since the agent last spoke.
NEW_ROLES = {"user", "tool"}


class InputError(Exception):
    def __init__(self, status, message, field=None, reason=None):
        super().__init__(message)
        self.status, self.message, self.field, self.reason = status, message, field, reason

    def body(self):
        error = {"code": "invalid_input" if self.status == 400 else "refused",
                 "message": self.message}
        if self.field:
            error["field"] = self.field
        if self.reason:
            error["reason"] = self.reason
        return {"error": error}


@dataclass
class RunInput:
    model: RunAgentInput
    thread_id: str
    run_id: str
    new_messages: list = field(default_factory=list)
    #: The candidates for new messages (:func:`candidates`); ``new_messages`` are those the
    #: session has not seen (:meth:`forget_seen`).
    candidates: list = field(default_factory=list)
    #: Trailing user and tool messages beyond the per-run limit: history, not new.
    dropped: int = 0

    def forget_seen(self, seen_ids):
        """Only the candidates whose id the session has not seen are new."""
        self.new_messages = [m for m in self.candidates if m.id not in seen_ids]

    def candidate_ids(self):
        return [m.id for m in self.candidates]

    def dump(self, value):
        return value.model_dump(by_alias=True, mode="json") if value is not None else None

    def notice(self):
        """What the agent is told about the run (besides session_id): camelCase AG-UI values
        as the client sent them, optional fields left out."""
        m = self.model
        out = {"thread_id": self.thread_id, "run_id": self.run_id,
               "messages": [self.dump(x) for x in self.new_messages],
               "state": m.state if m.state is not None else {},
               "tools": [self.dump(t) for t in m.tools or []],
               "context": [self.dump(c) for c in m.context or []]}
        if m.forwarded_props is not None:
            out["forwarded_props"] = m.forwarded_props
        if m.resume:
            out["resume"] = [self.dump(r) for r in m.resume]
        if m.parent_run_id is not None:
            out["parent_run_id"] = m.parent_run_id
        return out


def _loc(loc):
    return ".".join(str(p) for p in loc if not str(p).startswith("function-")) or None


def candidates(messages, limit):
    """(candidates, dropped): the messages that may be new to the agent. AG-UI clients send
    the whole history on every run; what the person (or a frontend tool the person's client
    ran) added since the agent last spoke is the trailing ``user`` and ``tool`` messages, each
    id once (a repeated id is the same message), the last ``limit`` of them (``dropped``: how
    many more there were, taken as history)."""
    trailing = []
    for message in reversed(messages):
        if message.role not in NEW_ROLES:
            break
        trailing.append(message)
    trailing.reverse()
    ids, unique = set(), []
    for message in trailing:
        if message.id not in ids:
            ids.add(message.id)
            unique.append(message)
    kept = unique[-limit:] if limit > 0 else []
    return kept, len(unique) - len(kept)


def parse(raw, max_size, max_new=MAX_MESSAGES):
    """``raw`` (bytes) as a :class:`RunInput`, or :class:`InputError`. At most ``max_new`` of
    its messages are candidates for new ones (:func:`candidates`)."""
    if len(raw) > max_size:
        raise InputError(413, f"The body is larger than {max_size} bytes.",
                         reason="payload_too_large")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(400, "The body is not UTF-8 text.") from None
    try:
        obj = jsonvalue.loads(text)
    except jsonvalue.JSONValueError as exc:
        raise InputError(400, f"A value is not acceptable: {exc.reason}", exc.dotted or None,
                         exc.reason) from None
    except (ValueError, RecursionError):
        raise InputError(400, "The body is not valid JSON.") from None
    if not isinstance(obj, dict):
        raise InputError(400, "The body must be a RunAgentInput object.")
    if "\\u0000" in text:  # the run's notice is stored as it came: no NUL in any text
        where = jsonvalue.find_nul(obj)
        if where is not None:
            raise InputError(400, "NUL (\\u0000) is not accepted in text.",
                             jsonvalue.dotted(where) or None, "nul")
    try:
        model = RunAgentInput.model_validate(obj)
    except ValidationError as exc:
        first = exc.errors(include_url=False, include_input=False)[0]
        where = _loc(first.get("loc", ()))
        raise InputError(400, f"Not a valid RunAgentInput: {where or 'body'}: "
                         f"{first.get('msg', 'invalid')}", where) from None
    for name, value in (("threadId", model.thread_id), ("runId", model.run_id)):
        if not value.strip() or len(value) > MAX_ID_LENGTH or "\x00" in value:
            raise InputError(400, f"{name} must be 1 to {MAX_ID_LENGTH} characters, no NUL.",
                             name)
    if len(model.messages) > MAX_MESSAGES:
        raise InputError(400, f"At most {MAX_MESSAGES} messages.", "messages")
    for i, message in enumerate(model.messages):
        if len(message.id) > MAX_ID_LENGTH:
            raise InputError(400, f"A message id is at most {MAX_ID_LENGTH} characters.",
                             f"messages.{i}.id")
    if model.state is not None and not isinstance(model.state, dict):
        raise InputError(400, "state must be an object.", "state")
    kept, dropped = candidates(model.messages, max_new)
    return RunInput(model, model.thread_id, model.run_id, list(kept), list(kept), dropped)
