"""A2A items (:mod:`a2ui.remote.a2a.parts`) onto the runtime's ops (:mod:`a2ui.remote.ops`):
sans-I/O, one :class:`RunMapper` per exchange (a sent message and its stream).

==========================  ====================================================================
what the agent sent         what the session gets
==========================  ====================================================================
context / task ids          ``RunIds(context_id, task_id)``, and ``extra["task_state"]``
text parts (any message)    ``TextDelta`` + ``TextEnd`` (one chat message per A2A message id)
streamed text artifact      ``TextDelta`` per chunk, ``TextEnd`` on the last chunk
A2UI DataPart               ``Surface(messages)`` (the runtime validates); refused messages go
                            back to the agent as the extension's ``error`` message
a refused A2UI part         ``Notice`` (warning) to the person, ``error`` message to the agent
``input-required``          ``Ask`` (input) with the status text as the prompt; when the status
                            message carries a surface, the surface is the question: the run
                            ends and the person's action or message continues the task
``auth-required``           ``Ask`` (confirm): the agent's instructions; approved continues the
                            task, declined cancels it
``completed``/``canceled``  ``Finished``
``failed``/``rejected``     ``Failed`` with the status text
==========================  ====================================================================
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from a2ui.remote import ops
from a2ui.remote.a2a import parts as p
from a2ui.remote.a2a.extension import error_message

DEFAULT_QUESTION = "The agent needs your answer to go on."
AUTH_TITLE = "The agent needs your authorization"
MAX_ERRORS = 20

#: ``extra["task_state"]`` values kept with the thread.
STATE_NAMES = {
    p.INPUT_REQUIRED: "input-required", p.AUTH_REQUIRED: "auth-required",
    p.COMPLETED: "completed", p.CANCELED: "canceled",
    "TASK_STATE_FAILED": "failed", "TASK_STATE_REJECTED": "rejected",
    "TASK_STATE_SUBMITTED": "submitted", "TASK_STATE_WORKING": "working",
}
WAITING = frozenset({"input-required", "auth-required"})


@dataclass
class RunMapper:
    """Maps one exchange's items; afterwards :attr:`end` says how it ended."""

    context_id: str = ""
    task_id: str = ""
    #: The v0.9 client ``error`` messages to send back to the agent.
    errors: list[dict[str, Any]] = field(default_factory=list)
    #: The last status seen (:class:`~a2ui.remote.a2a.parts.Status`), None before any.
    last: p.Status | None = None
    asks: int = 0

    @property
    def state(self) -> str:
        return STATE_NAMES.get(self.last.state, "working") if self.last else "working"

    @property
    def ended(self) -> bool:
        """The agent is done with this exchange (a final state, or waiting for the person)."""
        return self.last is not None and (self.last.final or self.state in WAITING)

    def ops(self, items: list[Any]) -> list[Any]:
        out: list[Any] = []
        for item in items:
            if isinstance(item, p.Ids):
                self._ids(item, out)
            elif isinstance(item, p.Text):
                out += [ops.TextDelta(item.message_id, item.text), ops.TextEnd(item.message_id)]
            elif isinstance(item, p.TextChunk):
                if item.text:
                    out.append(ops.TextDelta(item.message_id, item.text))
                if item.last:
                    out.append(ops.TextEnd(item.message_id))
            elif isinstance(item, p.Surface):
                out.append(ops.Surface(tuple(item.messages)))
            elif isinstance(item, p.Refused):
                out.append(ops.Notice(f"The agent sent A2UI this server refused: {item.reason}",
                                      level="warning"))
                self.refused(item.surface_id, item.reason, item.path)
            elif isinstance(item, p.Status):
                self.last = item
        return out

    def _ids(self, item: p.Ids, out: list[Any]) -> None:
        ctx = item.context_id if item.context_id and item.context_id != self.context_id else None
        task = item.task_id if item.task_id and item.task_id != self.task_id else None
        if ctx is None and task is None:
            return
        self.context_id = item.context_id or self.context_id
        self.task_id = item.task_id or self.task_id
        out.append(ops.RunIds(context_id=ctx, task_id=task, extra={"task_state": "working"}))

    def refused(self, surface_id: str, reason: str, path: str = "") -> None:
        """Queue a refused server message for the agent (the extension's ``error`` message)."""
        if len(self.errors) < MAX_ERRORS:
            self.errors.append(error_message("VALIDATION_FAILED", surface_id, reason, path))

    def refusal(self, refusal: Any) -> None:
        """A runtime's :class:`~a2ui.remote.clients.Refusal` of a Surface op, for the agent."""
        detail = refusal.detail if isinstance(refusal.detail, dict) else {}
        err = detail.get("error") if isinstance(detail.get("error"), dict) else detail
        surface = err.get("surfaceId") if isinstance(err.get("surfaceId"), str) else ""
        path = err.get("path") if isinstance(err.get("path"), str) else ""
        message = err.get("message") if isinstance(err.get("message"), str) else refusal.message
        self.refused(surface, str(message)[:500], path)

    def finish(self) -> list[Any]:
        """The ops that end the run, from the last status (call once :attr:`ended`)."""
        state, last = self.state, self.last
        keep = ops.RunIds(task_id="" if state not in WAITING else None,
                          extra={"task_state": state})
        if last is None:
            return [keep, ops.Finished(None)]
        resume = {"task_id": self.task_id, "context_id": self.context_id, "state": state}
        if state == "input-required":
            if last.has_surface and not last.text:
                return [keep, ops.Finished({"state": state, "task_id": self.task_id})]
            self.asks += 1
            return [keep, ops.Ask(f"a2a:{self.task_id}:{self.asks}", "input",
                                  {"input_type": "text", "prompt": last.text or DEFAULT_QUESTION},
                                  resume)]
        if state == "auth-required":
            self.asks += 1
            return [keep, ops.Ask(f"a2a:{self.task_id}:{self.asks}", "confirm",
                                  {"title": AUTH_TITLE,
                                   "description": last.text or "Authorize the agent, then go on.",
                                   "severity": "warning"}, resume)]
        if state in ("failed", "rejected"):
            what = "refused the request" if state == "rejected" else "failed"
            text = f"The agent {what}: {last.text}" if last.text else f"The agent {what}."
            return [keep, ops.Failed(text[:2000], code=f"task_{state}")]
        return [keep, ops.Finished({"state": state, "task_id": self.task_id})]
