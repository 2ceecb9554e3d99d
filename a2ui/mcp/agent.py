"""The agent's tools at /mcp (agent key): the Python API (``a2ui.agents``) behind MCP tools.

Every tool is an entry of the agent-method table (``a2ui.core.agentmethods``, declared by the
adapters) and goes through the same entry point as the agent WebSocket:
``services.agentapi`` (the entry's validation, then its service call: sanitization, owner
check, consent gate for requests), ``pending`` for answers. ``request_input`` / ``confirm``
wait for the person on a fresh channel-layer channel (whichever process gets the answer),
sending MCP progress notifications while they wait when the call has a progress token; a
cancelled call (``notifications/cancelled``) withdraws its request (it is timed out, so the
person's client drops it). A call whose client went away (its response stream closed: the
agent's process died, or on 2026-07-28 closed the stream) stops waiting and leaves the request
open until its deadline: the agent gets the answer after a restart with ``pending_requests``
(``answers.apending``, what the agent socket's ``a2ui.pending`` does) or by calling the tool
again with the same ``request_id`` and arguments (``pending.ask``: a retry waits on the same
request, or returns its outcome at once).
"""

import asyncio
import json
import time
import uuid

import mcp_types as types

from a2ui import agents, surfaces
from a2ui.core import agentmethods
from a2ui.core.content import idempotency
from a2ui.core.errors import DomainError
from a2ui.mcp import tools
from a2ui.mcp.tools import invalid
from a2ui.push import answers, outcome
from a2ui.push import entry as pushentry
from a2ui.rpc.errors import REQUEST_CANCELLED, ErrorCode, ProtocolError
from a2ui.sessions import lifecycle as sessions

#: Seconds between progress notifications while a request waits for the person.
PROGRESS_INTERVAL = 5.0


def text_result(value, *, is_error=False):
    structured = value if isinstance(value, dict) else {"result": value}
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=json.dumps(value, default=str))],
        structured_content=structured, is_error=is_error)


async def call(ctx, who, name, arguments):
    agent = who.agent
    if name in tools.READ_TOOLS:
        session_id = tools.read_arguments(name, arguments).get("session_id")
        if name == "list_sessions":
            return text_result({"sessions": await sessions.alive_sessions(agent)})
        if name == "list_runs":
            return text_result({"runs": await agents.aruns(agent, session_id)})
        return text_result({"requests": await agents.apending(agent, session_id)})
    try:
        session_id, rest = tools.split_session(tools.with_defaults(name, arguments))
    except ValueError as exc:
        raise invalid(str(exc), "is required (a string)") from None
    # Every other tool is an entry of the agent-method table (a2ui.core.agentmethods).
    entry = agentmethods.by("tool", name)
    key = None
    if entry.keyed and entry.handled:
        rest, key = idempotency.pop(rest, "arguments")
    if name == "finish_run":
        return text_result(await agents.afinish_run(agent, session_id, rest.get("run_id"),
                                                    rest.get("result")))
    if name == "fail_run":
        return text_result(await agents.aerror_run(agent, session_id, rest.get("run_id"),
                                                   rest.get("message"), rest.get("code")))
    if entry.awaits:
        return await _wait(ctx, agent, session_id, name, entry, rest)
    if name == "render":
        rest.setdefault("component_id", agents.component_id_for(key))
    try:
        _, clean = pushentry.validate(entry.name, {**rest, "session_id": session_id})
        result = await pushentry.apush(agent.pk, session_id, entry.name, clean, key=key,
                                      where="arguments")
    except surfaces.SurfaceValidationError:
        raise  # its data is the v0.9 answer
    except DomainError as exc:  # in seed 000's words, as the Python API raises them
        raise ProtocolError.of(exc) from exc
    out = result if entry.shape == "result" else outcome.answer(result)
    if name == "render":
        out["component_id"] = rest["component_id"]
    return text_result(out)


async def _wait(ctx, agent, session_id, name, entry, params):
    request_id = params.get("request_id")
    if request_id is None:
        request_id = params["request_id"] = str(uuid.uuid4())
    pushentry.validate(entry.name, {**params, "session_id": session_id})  # -32602 first
    if name == "request_input":
        asking = agents.arequest_input(
            agent, session_id, params.pop("input_type"), params.pop("prompt"), **_kw(params))
    else:
        asking = agents.aconfirm(agent, session_id, params.pop("title"), **_kw(params))
    task = asyncio.ensure_future(asking)
    token = ctx.meta.get("progress_token") if isinstance(ctx.meta, dict) else getattr(
        ctx.meta, "progress_token", None)
    gone = _stream_gone(ctx)
    watching = {task} if gone is None else {task, asyncio.ensure_future(gone.wait())}
    started = time.monotonic()
    try:
        while True:
            if token is not None:  # at once, then every PROGRESS_INTERVAL seconds
                await ctx.session.send_progress_notification(
                    token, round(time.monotonic() - started, 1), None,
                    f"waiting for the person ({name})", related_request_id=ctx.request_id)
            done, _ = await asyncio.wait(watching, timeout=PROGRESS_INTERVAL,
                                         return_when=asyncio.FIRST_COMPLETED)
            if task in done:
                break
            if done:  # the client's stream closed: leave the request open for its return
                await _stop(task)
                return text_result({
                    "request_id": request_id, "status": "pending",
                    "error": "The client went away: the request stays open until its "
                             "deadline. Call pending_requests, or this tool again with the "
                             "same request_id and arguments."}, is_error=True)
    except asyncio.CancelledError:
        task.cancel()  # no await before the withdrawal: the SDK's cancel scope cancels them all
        if _cancel_requested(ctx):  # notifications/cancelled; not a closed stream
            await _withdraw(session_id, request_id)
        raise
    finally:
        for waiter in watching - {task}:
            waiter.cancel()
    try:
        value = task.result()
    except ProtocolError as exc:
        if exc.code == ErrorCode.REQUEST_TIMEOUT:
            return text_result({"request_id": request_id, "status": "timed_out",
                                "error": "The person did not answer in time."}, is_error=True)
        if exc.code == REQUEST_CANCELLED:  # the person declined to answer; the session goes on
            return text_result({"request_id": request_id, "status": "cancelled",
                                "cancelled_by": "person",
                                "error": "The person cancelled the request."}, is_error=True)
        if exc.code == ErrorCode.SESSION_NOT_FOUND:  # the session ended while it waited
            return text_result({"request_id": request_id, "status": "session_closed",
                                "error": "The session closed before the person answered."},
                               is_error=True)
        raise
    if name == "confirm" and isinstance(value, dict) and value.get("reason") == "timeout":
        return text_result({"request_id": request_id, "status": "timed_out", **value},
                           is_error=True)
    out = {"request_id": request_id, "status": "answered"}
    out.update(value if name == "confirm" and isinstance(value, dict) else {"value": value})
    return text_result(out)


def _kw(params):
    allowed = ("options", "validation", "timeout_seconds", "request_id", "description",
               "severity")
    return {k: params[k] for k in allowed if k in params}


def _stream_gone(ctx):
    """The event ``a2ui.mcp.app`` sets when the POST carrying this call is disconnected."""
    request = getattr(ctx, "request", None)
    scope = getattr(request, "scope", None)
    return scope.get("a2ui_mcp_gone") if isinstance(scope, dict) else None


def _cancel_requested(ctx):
    """True when the client sent ``notifications/cancelled`` for this call (handshake era); a
    closed response stream (a dead client, or cancelling on 2026-07-28) does not set it."""
    # The SDK's per-request DispatchContext carries it (its handlers' ServerRequestContext has
    # none); tests/live/test_live_mcp.py cancels a call and sees the request withdrawn.
    dctx = getattr(getattr(ctx, "session", None), "_request_outbound", None)
    event = getattr(dctx, "cancel_requested", None)
    return bool(event is not None and event.is_set())


async def _stop(task):
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


async def _withdraw(session_id, request_id):
    try:
        await asyncio.shield(answers.aexpire(sessions.parse_session_id(session_id), request_id))
    except Exception:  # best effort: the housekeeping sweep times it out anyway
        pass
