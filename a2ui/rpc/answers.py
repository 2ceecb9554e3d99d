"""What the agent methods answer, as typed dicts: the JSON an agent gets back, named for type
checkers (``a2ui.sdk.AgentClient`` and the Python agent API ``a2ui.agents`` return them).

Plain dicts at run time (``TypedDict``): nothing here is checked or built, only described.
Sans-I/O: typing alone.
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict


class Approval(TypedDict):
    """A ``ui.confirm``'s answer: ``approved`` False with ``reason`` "timeout" when the person
    did not answer in time."""

    approved: bool
    reason: str


class Delivered(TypedDict):
    """A push's answer on the agent socket (``ui.render``, ``ui.update``, ... ``agui.event``):
    ``seq`` null for a retry answered from its idempotency key (``replayed``) or a push stored
    but not delivered live (``warning``); ``clients`` / ``reached``: the session's attached
    clients per protocol, and those of them whose protocol shows the push."""

    delivered: bool
    seq: int | None
    clients: NotRequired[dict[str, int]]
    reached: NotRequired[dict[str, int]]
    replayed: NotRequired[bool]
    warning: NotRequired[str]


class SurfacesDelivered(TypedDict):
    """An ``a2ui.v09`` batch's answer: how many messages, the last surface sequence number."""

    delivered: int
    seq: int
    clients: NotRequired[dict[str, int]]
    reached: NotRequired[dict[str, int]]
    replayed: NotRequired[bool]
    warning: NotRequired[str]


class RunEnd(TypedDict):
    """``agui.run_finish`` / ``agui.run_error``: ``delivered`` False when the run's stream was
    lost (the client did not receive the end)."""

    ended: bool
    delivered: bool
    seq: int


class PendingItem(TypedDict):
    """One entry of ``a2ui.pending``: a request waiting for the person (``status``
    "pending"), or an outcome no waiter received ("answered", "timed_out", "cancelled", with
    ``answer`` and ``resolved_at``)."""

    session_id: str
    request_id: str
    method: str
    params: dict[str, Any]
    status: str
    created_at: str
    deadline: str
    resolved_at: NotRequired[str | None]
    answer: NotRequired[Any]
    cancelled_by: NotRequired[str | None]


class AgentEvent(TypedDict):
    """A notification an agent hears (``session.opened``, ``user.cancel``, ...)."""

    method: str
    params: dict[str, Any]


class SurfaceEvent(TypedDict):
    """A person's A2UI v0.9 actions and errors (the ``a2ui.v09`` notification's params)."""

    session_id: str
    messages: list[dict[str, Any]]
    dataModel: NotRequired[dict[str, Any]]
