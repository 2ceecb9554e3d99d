"""What an upstream protocol client yields, and what a person's turn is: protocol-neutral.
Sans-I/O: plain dataclasses, no Django, no network.

A client of a remote agent (``a2ui.remote.clients.RemoteClient``: AG-UI 1.0, A2A...) reads its
protocol's stream and yields these *ops*; the runtime (``a2ui.remote.runtime``) turns each into
what the session shows, through the same services and checks as an agent's push. Nothing of
the upstream protocol is in an op: a client says "text of message m", "ask the person",
"these A2UI v0.9 messages", never "a TEXT_MESSAGE_CONTENT event" or "a DataPart".

=====================  =========================================================================
op                     what the session shows
=====================  =========================================================================
TextDelta              text appended to the chat message ``message_id`` (one chat message per
                       id, shown as it streams)
TextEnd                the message ``message_id`` is complete
Reasoning              the agent's reasoning text of ``message_id`` (shown where a client shows
                       reasoning; kept apart from the chat reply)
ReasoningEnd           the reasoning ``message_id`` is complete
Surface                A2UI v0.9 server-to-client messages, validated like an agent's push
Ask                    a question to the person: ``kind`` "input" or "confirm", ``params`` the
                       request (seed 000's ``ui.request_input`` / ``ui.confirm`` params without
                       ``request_id``); ``resume`` is what the client needs to go on once it
                       is answered (kept with the run, handed back in :class:`Answer`)
State                  the session's state document replaced by ``snapshot``
StatePatch             an RFC 6902 patch (``ops``) applied to the state document
Tool                   a tool call of the agent: ``phase`` "requested" (``name``, ``args``),
                       "status" (``status``, ``message``), "result" (``result`` or ``error``)
Notice                 a short notice to the person (``level`` info/warning/error, ``title``,
                       ``message``): what a protocol says besides chat (an A2A status text,
                       a step), transient
Failed                 the run failed: ``message`` (shown to the person), ``code``
Finished               the run ended; ``outcome`` its result (any JSON value) or None
RunIds                 ids the client wants kept for the next turn of the thread (A2A
                       ``context_id`` per session, ``task_id`` per run...): merged into what
                       the next :class:`~a2ui.remote.clients.RunContext` carries in ``ids``
=====================  =========================================================================

A person's turns (what starts or resumes a run):

=====================  =========================================================================
turn                   what it is
=====================  =========================================================================
UserText               a chat message of the person (any client)
Answer                 the person answered an :class:`Ask` (``value``: the input's value, or
                       ``{"approved": bool, "reason": str}`` for a confirm; ``status``
                       "answered", "timed_out" or "cancelled"), with the Ask's ``resume``
Action                 a v0.9 action on a surface the agent showed (the client message's
                       ``action`` object), with the surface's data model when it sends one
Cancel                 the person stops the run
ToolResult             a frontend tool's result, from a person's client that ran it
=====================  =========================================================================
"""

from dataclasses import dataclass, field
from typing import Any

# Ops ------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TextDelta:
    message_id: str
    delta: str
    #: "agent" (the agent's reply) or "system".
    role: str = "agent"


@dataclass(frozen=True, slots=True)
class TextEnd:
    message_id: str


@dataclass(frozen=True, slots=True)
class Reasoning:
    message_id: str
    delta: str


@dataclass(frozen=True, slots=True)
class ReasoningEnd:
    message_id: str


@dataclass(frozen=True, slots=True)
class Surface:
    #: A2UI v0.9 server-to-client messages (``createSurface``, ``updateComponents``...).
    messages: tuple


@dataclass(frozen=True, slots=True)
class Ask:
    request_id: str
    #: "input" or "confirm".
    kind: str
    #: input: ``{"input_type", "prompt", "options"?, ...}``; confirm: ``{"title",
    #: "description"?, "severity"?}`` (seed 000's params, without ``request_id``).
    params: dict
    #: What the client needs to go on when the person answers (JSON: kept in the database,
    #: handed back in :class:`Answer`, maybe to another process).
    resume: Any = None


@dataclass(frozen=True, slots=True)
class State:
    snapshot: dict


@dataclass(frozen=True, slots=True)
class StatePatch:
    #: RFC 6902 operations.
    ops: tuple


@dataclass(frozen=True, slots=True)
class Tool:
    call_id: str
    #: "requested", "status" or "result".
    phase: str
    name: str | None = None
    args: Any = None
    result: Any = None
    error: str | None = None
    #: phase "status": PENDING, RUNNING, COMPLETED, FAILED or CANCELLED.
    status: str | None = None
    message: str | None = None


@dataclass(frozen=True, slots=True)
class Notice:
    message: str
    level: str = "info"
    title: str | None = None


@dataclass(frozen=True, slots=True)
class Failed:
    message: str
    code: str | None = None


@dataclass(frozen=True, slots=True)
class Finished:
    outcome: Any = None


@dataclass(frozen=True, slots=True)
class RunIds:
    """Ids to keep for the thread's next turn: only the fields given (not None) change."""

    thread_id: str | None = None
    run_id: str | None = None
    context_id: str | None = None
    task_id: str | None = None
    #: Anything else a client keeps per thread (JSON), merged key by key.
    extra: dict = field(default_factory=dict)

    def as_dict(self):
        out = {k: getattr(self, k) for k in ("thread_id", "run_id", "context_id", "task_id")
               if getattr(self, k) is not None}
        out.update(self.extra)
        return out


OPS = (TextDelta, TextEnd, Reasoning, ReasoningEnd, Surface, Ask, State, StatePatch, Tool,
       Notice, Failed, Finished, RunIds)

# Turns ----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class UserText:
    text: str
    message_id: str | None = None
    #: The person's name as the transcript records it.
    sender: str | None = None


@dataclass(frozen=True, slots=True)
class Answer:
    request_id: str
    value: Any
    resume: Any = None
    #: "answered", "timed_out" or "cancelled".
    status: str = "answered"


@dataclass(frozen=True, slots=True)
class Action:
    """A v0.9 action of the person on a surface the agent showed."""

    #: The client message's ``action`` object (``name``, ``surfaceId``, ``sourceComponentId``,
    #: ``timestamp``, ``context``), checked by the v0.9 validation.
    action: dict
    #: The surface's data model, when the surface asked for it (``sendDataModel``).
    data_model: dict | None = None

    @property
    def name(self):
        return self.action.get("name")

    @property
    def surface_id(self):
        return self.action.get("surfaceId")


@dataclass(frozen=True, slots=True)
class Cancel:
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class ToolResult:
    """The result of a frontend tool a person's client ran for the agent (an AG-UI 1.0
    client's ``tool`` message answering the agent's tool call ``call_id``)."""

    call_id: str
    content: str


TURNS = (UserText, Answer, Action, Cancel, ToolResult)
