"""The Python API for agents that run inside a Django process.

The same operations as the agent WebSocket and the REST endpoint, through the same service
layer. Async functions follow Django's naming (``arender``); the sync ones (``render``) wrap
them for views, management commands and Celery-style workers::

    from a2ui import agents

    await agents.arender(agent, session_id, "card", {"title": "Hello"})
    answer = await agents.arequest_input(agent, session_id, "text", "Your name?")
    approved = agents.confirm(agent, session_id, "Delete 3 files?", severity="warning")

``arequest_input`` and ``aconfirm`` wait for the person's answer on a fresh channel of the
channel layer, so the answer reaches them whichever process receives it. A timed-out confirm
returns ``{"approved": False, "reason": "timeout"}``; a timed-out input raises
``ProtocolError(-32004)``. An answer whose waiter died (its process was killed) is not lost:
``apending`` (sync: ``pending_requests``) lists what waits for the agent and hands such
outcomes over, once.

AG-UI activity (chat messages, tool calls, state deltas, plan cards, the resource tree, the
roster, artifacts): ``await agents.aagui_event(agent, session_id, {"type": "PLAN_CARD", ...})``
(sync: ``agui_event``); a person's chat messages and other actions arrive through
``agents.events(agent)`` as ``user.message`` / ``user.action``.

A2UI v0.9 surfaces: ``await agents.asurfaces(agent, session_id, messages)`` (sync:
``surfaces``); the person's actions arrive through ``agents.surface_events(agent)``, an async
iterator (see :class:`SurfaceEvents`). Every other notification an agent socket gets (session
events, ``user.cancel``, form submissions, ``agui.run_started`` / ``agui.run_ended``) arrives
through ``agents.events(agent)``; a run ends with ``afinish_run`` / ``aerror_run``
(docs/agents.md, "Runs").

Retries: every push takes ``idempotency_key=`` (a string the agent chooses per push): a retry
with the same key for the same session is stored and shown once, and returns a
``outcome.Pushed`` (0, ``replayed`` True) instead of a new sequence number. A push stored but
not delivered live returns a ``Pushed`` with a ``warning``; ``ProtocolError`` -32012 means the
database connection was lost while storing it: retry with the same key (docs/agents.md,
"Retrying pushes").
"""

from __future__ import annotations

import asyncio
import functools
import uuid
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar, cast
from uuid import UUID

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.utils import timezone

from a2ui import surfaces as surface_service
from a2ui.agents.events import AgentEvents, SurfaceEvents, events, surface_events  # noqa: F401
from a2ui.core import agentmethods
from a2ui.core.agentmethods import AgentMethod
from a2ui.core.content import idempotency
from a2ui.core.errors import DomainError, Fault
from a2ui.push import answers
from a2ui.push import entry as pushentry
from a2ui.push.outcome import Pushed, Sent
from a2ui.requests import pending
from a2ui.rpc.answers import Approval, PendingItem, RunEnd, SurfacesDelivered
from a2ui.rpc.errors import REQUEST_CANCELLED, REQUEST_TAKEN_OVER, ErrorCode, ProtocolError

if TYPE_CHECKING:
    from a2ui.models import Agent

#: What a ``ui.*`` push and an AG-UI event return: the push's sequence number (an ``int``), a
#: :class:`~a2ui.push.outcome.Sent` when sent live, a :class:`~a2ui.push.outcome.Pushed`
#: (0) when a retry was answered from its key (``replayed``) or it was stored but not
#: delivered live (``warning``).
Seq = Sent | Pushed

_P = ParamSpec("_P")
_R = TypeVar("_R")


def _seed_errors(
    func: Callable[_P, Awaitable[_R]],
) -> Callable[_P, Coroutine[Any, Any, _R]]:
    """The Python API speaks seed 000's errors: a service's domain error becomes the
    ProtocolError an agent socket would have answered (``SurfaceValidationError`` stays as it
    is: its ``body`` is the v0.9 answer)."""

    @functools.wraps(func)
    async def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return await func(*args, **kwargs)
        except surface_service.SurfaceValidationError:
            raise
        except DomainError as exc:
            if isinstance(exc, ProtocolError):
                raise
            raise ProtocolError.of(exc) from exc

    return wrapper


def _agent_id(agent: Agent | int) -> int:
    return agent if isinstance(agent, int) else agent.pk


def _key(value: str | idempotency.Key | None) -> idempotency.Key | None:
    if isinstance(value, idempotency.Key):  # read already (MCP: arguments.idempotency_key)
        return value
    return idempotency.read(value, idempotency.PARAM)


def _pushed(method: str) -> AgentMethod:
    """The dispatch table's entry for a push (-32601 for a method that is none)."""
    entry = agentmethods.get(method)
    if entry is None or not entry.handled:
        raise DomainError(Fault.UNKNOWN_OPERATION, data={"method": str(method)[:100]})
    return entry


@_seed_errors
async def apush(agent: Agent | int, session_id: UUID | str, method: str,
                params: dict[str, Any], *,
                idempotency_key: str | None = None) -> Any:
    """Validate and deliver one agent method of the dispatch table (``a2ui.core.agentmethods``:
    ``ui.render``, ... ``agui.event``, ``a2ui.v09``); return what the method returns (its
    sequence number for a ``ui.*`` push)."""
    key = _key(idempotency_key)
    entry = _pushed(method)
    if not isinstance(params, dict):
        raise DomainError(Fault.INVALID_INPUT, "params must be an object",
                          data={"path": "params"})
    validate = cast("Callable[[Any], tuple[Any, dict[str, Any]]]", entry.validate)  # a push's
    _, clean = validate({**params, "session_id": str(session_id)})
    if entry.awaits:
        raise ProtocolError(
            ErrorCode.INVALID_PARAMS, f"use a{method[3:]} to wait for the answer"
        )
    return await _call(agent, session_id, entry, clean, key, where="params")


async def _call(agent: Agent | int, session_id: UUID | str | None, entry: AgentMethod,
                params: dict[str, Any], key: idempotency.Key | None, *,
                where: str = "") -> Any:
    result = await pushentry.apush(_agent_id(agent), session_id, entry.name, params, key=key,
                                  where=where)
    if entry.shape == "request":
        return result[0]
    return result


def _drop_none(**params: Any) -> dict[str, Any]:
    return {k: v for k, v in params.items() if v is not None}


def component_id_for(idempotency_key: str | idempotency.Key | None) -> str:
    """A new component's id: random, or derived from the push's idempotency key, so that a
    retry renders the same component."""
    if idempotency_key is None:
        return str(uuid.uuid4())
    value = getattr(idempotency_key, "value", idempotency_key)
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"a2ui:push:{value}"))


@_seed_errors
async def arender(agent: Agent | int, session_id: UUID | str, component_type: str,
                  data: dict[str, Any], *, component_id: str | None = None,
                  metadata: dict[str, Any] | None = None,
                  idempotency_key: str | None = None) -> str:
    """Render a component in the session; return its ``component_id``."""
    component_id = component_id or component_id_for(idempotency_key)
    await apush(agent, session_id, "ui.render", _drop_none(
        component_id=component_id, component_type=component_type, data=data, metadata=metadata),
        idempotency_key=idempotency_key)
    return component_id


@_seed_errors
async def aupdate(agent: Agent | int, session_id: UUID | str, component_id: str,
                  data: dict[str, Any], operation: str = "merge", *,
                  idempotency_key: str | None = None) -> Seq:
    return await apush(agent, session_id, "ui.update", {
        "component_id": component_id, "operation": operation, "data": data},
        idempotency_key=idempotency_key)


@_seed_errors
async def aprogress(agent: Agent | int, session_id: UUID | str, task_id: str,
                    progress_type: str = "determinate", *, value: float | None = None,
                    total: float | None = None, message: str | None = None,
                    idempotency_key: str | None = None) -> Seq:
    return await apush(agent, session_id, "ui.progress", _drop_none(
        task_id=task_id, progress_type=progress_type, value=value, total=total, message=message),
        idempotency_key=idempotency_key)


@_seed_errors
async def anavigate(agent: Agent | int, session_id: UUID | str, url: str, *,
                    new_tab: bool = False, idempotency_key: str | None = None) -> Seq:
    return await apush(agent, session_id, "ui.navigate", {"url": url, "new_tab": new_tab},
                       idempotency_key=idempotency_key)


@_seed_errors
async def anotify(agent: Agent | int, session_id: UUID | str, title: str, *,
                  level: str = "info", message: str | None = None,
                  duration_ms: int | None = None, idempotency_key: str | None = None) -> Seq:
    return await apush(agent, session_id, "ui.notify", _drop_none(
        level=level, title=title, message=message, duration_ms=duration_ms),
        idempotency_key=idempotency_key)


async def _await_answer(agent: Agent | int, session_id: UUID | str, method: str,
                        params: dict[str, Any]) -> Any:
    layer = get_channel_layer()
    channel = await layer.new_channel()  # default prefix: see SurfaceEvents.start
    _, clean = pushentry.validate(method, {**params, "session_id": str(session_id)})
    _, request = await pushentry.apush(
        _agent_id(agent), session_id, method, clean, reply_channel=channel
    )
    delay = max(0.0, (request.deadline - timezone.now()).total_seconds())
    # One receive for the whole wait: with channels-redis' PubSub layer a cancelled receive
    # unsubscribes the channel, and the timeout's outcome sent right after would be lost.
    receiving = asyncio.ensure_future(layer.receive(channel))
    try:
        done, _ = await asyncio.wait({receiving}, timeout=delay + 0.5)
        if not done:
            await answers.aexpire(request.session_id, request.request_id)
            await asyncio.wait({receiving}, timeout=5)
        event = receiving.result()  # InvalidStateError if nothing came: a bug, not a timeout
    finally:
        if not receiving.done():
            receiving.cancel()
    status = event["status"]
    if status == pending.MOVED or not await pending.aclaim(
        request.session_id, request.request_id, channel
    ):
        raise ProtocolError(
            REQUEST_TAKEN_OVER, "Request taken over by another waiter",
            data={"session_id": str(request.session_id), "request_id": request.request_id},
        )
    if status == "answered" or (status == "timed_out" and method == "ui.confirm"):
        return event["value"]
    if status == "timed_out":
        raise ProtocolError(ErrorCode.REQUEST_TIMEOUT, data={"request_id": request.request_id})
    if pending.cancelled_by(event["value"]) == "person":  # the session goes on
        raise ProtocolError(REQUEST_CANCELLED, "Request cancelled", data={
            "session_id": str(request.session_id), "request_id": request.request_id,
            "cancelled_by": "person"})
    raise ProtocolError(ErrorCode.SESSION_NOT_FOUND, "Session closed before the user answered")


@_seed_errors
async def arequest_input(agent: Agent | int, session_id: UUID | str, input_type: str,
                         prompt: str, *, options: list[Any] | None = None,
                         validation: dict[str, Any] | None = None,
                         request_id: str | None = None,
                         timeout_seconds: float | None = None) -> Any:
    """Ask the person for input and return their answer (``user.respond`` value: a JSON
    value, as the input type gives it)."""
    return await _await_answer(agent, session_id, "ui.request_input", _drop_none(
        request_id=request_id or str(uuid.uuid4()), input_type=input_type, prompt=prompt,
        options=options, validation=validation, timeout_seconds=timeout_seconds))


@_seed_errors
async def aconfirm(agent: Agent | int, session_id: UUID | str, title: str, *,
                   description: str | None = None, severity: str | None = None,
                   timeout_seconds: float | None = None,
                   request_id: str | None = None) -> Approval:
    """Ask for approval; return ``{"approved": bool, "reason": str}``."""
    return cast(Approval, await _await_answer(agent, session_id, "ui.confirm", _drop_none(
        request_id=request_id or str(uuid.uuid4()), title=title, description=description,
        severity=severity, timeout_seconds=timeout_seconds)))


@_seed_errors
async def apending(agent: Agent | int,
                   session_id: UUID | str | None = None) -> list[PendingItem]:
    """What waits for the agent: the same list as the agent socket's ``a2ui.pending``.

    Open requests (``status`` "pending") are listed and left where they are; outcomes no waiter
    received (the process that asked died: ``status`` "answered", "timed_out" or "cancelled",
    with ``answer``) are handed to this call, once: the next call, or another socket or
    process, does not get them again.
    """
    items, _ = await answers.apending(_agent_id(agent), session_id)
    return cast(list[PendingItem], items)


# AG-UI 1.0 runs (docs/agents.md "Runs") --------------------------------------------------------


@_seed_errors
async def afinish_run(agent: Agent | int, session_id: UUID | str, run_id: str,
                      result: Any = None) -> RunEnd:
    """End a run the person started (``agui.run_started``): RUN_FINISHED, with ``result``."""
    return await _call(agent, session_id, _pushed("agui.run_finish"),
                       {"run_id": run_id, "result": result}, None, where="params")


@_seed_errors
async def aerror_run(agent: Agent | int, session_id: UUID | str, run_id: str, message: str,
                     code: str | None = None) -> RunEnd:
    """End a run as failed: RUN_ERROR ``message`` (``code`` optional)."""
    return await _call(agent, session_id, _pushed("agui.run_error"),
                       {"run_id": run_id, "message": message, "code": code}, None,
                       where="params")


@_seed_errors
async def aruns(agent: Agent | int,
                session_id: UUID | str | None = None) -> list[dict[str, Any]]:
    """The agent's running runs, each as its ``agui.run_started`` said (for agents that poll)."""
    return await _call(agent, session_id, _pushed("agui.runs"), {}, None)


# A2UI v0.9 surfaces -----------------------------------------------------------------------------


@_seed_errors
async def asurfaces(agent: Agent | int, session_id: UUID | str,
                    messages: list[dict[str, Any]], *,
                    idempotency_key: str | None = None) -> SurfacesDelivered:
    """Validate and deliver a batch of A2UI v0.9 server messages to a session's surfaces.

    Returns ``{"delivered": n, "seq": last sequence number}``; an invalid batch changes nothing
    and raises ``SurfaceValidationError`` (a domain error, -32602 as ``ProtocolError.of``, whose
    ``data`` / ``body`` is
    the standard VALIDATION_FAILED message, ``failure`` the ``a2ui.v09.ValidationFailed``).
    """
    return await _call(agent, session_id, _pushed("a2ui.v09"), {"messages": messages},
                       _key(idempotency_key))


@_seed_errors
async def aagui_event(agent: Agent | int, session_id: UUID | str, event: dict[str, Any], *,
                      idempotency_key: str | None = None) -> Seq:
    """Push one AG-UI-native event (seed 003: TEXT_MESSAGE, TOOL_CALL_*, STATE_DELTA,
    PLAN_CARD, RESOURCE_TREE, AGENT_ROSTER, ARTIFACT_*) to a session; return its sequence
    number. Bad input is ProtocolError -32602 with ``data.path`` ``event.<field>``; a
    STATE_DELTA whose ``old_value`` differs from the stored value is refused the same way
    (``event.old_value``) and changes nothing."""
    return await _call(agent, session_id, _pushed("agui.event"), {"event": event},
                       _key(idempotency_key))


def _table_function(entry: AgentMethod) -> Callable[..., Coroutine[Any, Any, Any]]:
    """The Python API function of a table entry no function here spells out:
    ``await agents.<sdk>(agent, session_id, {params} or **params, idempotency_key=None)``."""

    @_seed_errors
    async def call(agent: Agent | int, session_id: UUID | str,
                   params: dict[str, Any] | None = None, *,
                   idempotency_key: str | None = None, **fields: Any) -> Any:
        return await apush(agent, session_id, entry.name, {**(params or {}), **fields},
                           idempotency_key=idempotency_key)

    call.__name__ = call.__qualname__ = str(entry.sdk)
    call.__doc__ = entry.summary or f"Push ``{entry.name}`` (a2ui.core.agentmethods)."
    return call


if not TYPE_CHECKING:  # a type checker sees the names above alone, so a typo is an error

    def __getattr__(name):
        """The dispatch table's entries with an ``sdk`` name that this module does not define:
        a protocol adding an agent method needs no change here (a type checker does not see
        them: call ``apush`` with the method's name instead, which it does)."""
        entry = agentmethods.by("sdk", name) if not name.startswith("__") else None
        if entry is None or not entry.handled or entry.awaits:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        return _table_function(entry)


def __dir__() -> list[str]:
    return sorted({*globals(), *(e.sdk for e in agentmethods.table().values()
                                 if e.sdk and e.handled and not e.awaits)})


render = async_to_sync(arender)
update = async_to_sync(aupdate)
progress = async_to_sync(aprogress)
navigate = async_to_sync(anavigate)
notify = async_to_sync(anotify)
request_input = async_to_sync(arequest_input)
confirm = async_to_sync(aconfirm)
pending_requests = async_to_sync(apending)
push = async_to_sync(apush)
surfaces = async_to_sync(asurfaces)
agui_event = async_to_sync(aagui_event)
finish_run = async_to_sync(afinish_run)
error_run = async_to_sync(aerror_run)
running_runs = async_to_sync(aruns)
