"""The agent's tools at /mcp (agent key): the Python API (``a2ui.agents``) behind MCP tools.

Every tool goes through the same services as the agent WebSocket: ``pushes.validate`` and
``pushes.apush`` (validation, sanitization, owner check, consent gate for requests),
``surfaces.apush`` for v0.9 batches, ``pending`` for answers. ``request_input`` / ``confirm``
wait for the person on a fresh channel-layer channel (whichever process gets the answer),
sending MCP progress notifications while they wait when the call has a progress token; a
cancelled call withdraws its request (it is timed out, so the person's client drops it).
"""

import asyncio
import json
import time
import uuid

import mcp_types as types

from .. import agents
from ..protocol import idempotency
from ..protocol.errors import ErrorCode, ProtocolError
from ..services import delivery, pending, sessions
from . import tools

#: Seconds between progress notifications while a request waits for the person.
PROGRESS_INTERVAL = 5.0


def text_result(value, *, is_error=False):
    structured = value if isinstance(value, dict) else {"result": value}
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=json.dumps(value, default=str))],
        structured_content=structured, is_error=is_error)


async def call(ctx, who, name, arguments):
    from .server import invalid

    agent = who.agent
    if name == "list_sessions":
        return text_result({"sessions": await sessions.alive_sessions(agent)})
    if name == "list_runs":
        session_id = arguments.get("session_id") if isinstance(arguments, dict) else None
        return text_result({"runs": await agents.aruns(agent, session_id)})
    try:
        session_id, rest = tools.split_session(tools.with_defaults(name, arguments))
    except ValueError as exc:
        raise invalid(str(exc), "is required (a string)") from None
    key = None
    if name in tools.KEYED:
        rest, key = idempotency.pop(rest, "arguments")
    if name in tools.AGENT_METHODS:
        if name == "render":
            rest.setdefault("component_id", agents.component_id_for(key))
        seq = await agents.apush(agent, session_id, tools.AGENT_METHODS[name], rest,
                                 idempotency_key=key)
        out = delivery.answer(seq)
        if name == "render":
            out["component_id"] = rest["component_id"]
        return text_result(out)
    if name == "agui_event":
        from ..agui import push
        from ..core.errors import DomainError

        try:
            seq = await push.apush(agent.pk, session_id, rest.get("event"), "arguments.event",
                                   key)
        except DomainError as exc:
            raise ProtocolError.of(exc) from exc
        return text_result(delivery.answer(seq))
    if name == "finish_run":
        return text_result(await agents.afinish_run(agent, session_id, rest.get("run_id"),
                                                    rest.get("result")))
    if name == "fail_run":
        return text_result(await agents.aerror_run(agent, session_id, rest.get("run_id"),
                                                   rest.get("message"), rest.get("code")))
    if name == "push_surfaces":
        return text_result(await agents.asurfaces(agent, session_id, rest.get("messages"),
                                                  idempotency_key=key))
    return await _wait(ctx, agent, session_id, name, rest)


async def _wait(ctx, agent, session_id, name, params):
    request_id = params.get("request_id")
    if request_id is None:
        request_id = params["request_id"] = str(uuid.uuid4())
    method = tools.AWAITING[name]
    from ..adapters import pushes

    pushes.validate(method, {**params, "session_id": session_id})  # -32602 before waiting
    if name == "request_input":
        asking = agents.arequest_input(
            agent, session_id, params.pop("input_type"), params.pop("prompt"), **_kw(params))
    else:
        asking = agents.aconfirm(agent, session_id, params.pop("title"), **_kw(params))
    task = asyncio.ensure_future(asking)
    token = ctx.meta.get("progress_token") if isinstance(ctx.meta, dict) else getattr(
        ctx.meta, "progress_token", None)
    started = time.monotonic()
    try:
        while True:
            if token is not None:  # at once, then every PROGRESS_INTERVAL seconds
                await ctx.session.send_progress_notification(
                    token, round(time.monotonic() - started, 1), None,
                    f"waiting for the person ({name})", related_request_id=ctx.request_id)
            done, _ = await asyncio.wait({task}, timeout=PROGRESS_INTERVAL)
            if done:
                break
    except asyncio.CancelledError:
        task.cancel()
        await _withdraw(session_id, request_id)
        raise
    try:
        value = task.result()
    except ProtocolError as exc:
        if exc.code == ErrorCode.REQUEST_TIMEOUT:
            return text_result({"request_id": request_id, "status": "timed_out",
                                "error": "The person did not answer in time."}, is_error=True)
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


async def _withdraw(session_id, request_id):
    try:
        await asyncio.shield(pending.aexpire(sessions.parse_session_id(session_id), request_id))
    except Exception:  # best effort: the housekeeping sweep times it out anyway
        pass
