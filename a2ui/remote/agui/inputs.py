"""The ``RunAgentInput`` of a run of an AG-UI 1.0 agent, from the runtime's context and the
person's turn. Sans-I/O (``ag_ui.core`` models).

* ``threadId``: the session's thread; ``runId``: the run's;
* ``messages``: the session's transcript (the person's words as ``user``, the agent's as
  ``assistant``; this server's own notices left out), then what the turn adds: the answer of a
  question tool as the tool call and its ``tool`` result, a person's action on a surface as
  ``@ag-ui/a2ui-middleware`` tells it (a ``log_a2ui_event`` tool call and its result, and
  ``forwardedProps.a2uiAction.userAction``), a client's frontend tool result;
* ``resume``: the answer of an interrupt (``resolved`` with the value, or ``cancelled``);
* ``state``, ``context``, ``tools`` (the question tools, ``a2ui.remote.agui.mapping.ask_tools``,
  and the tools the person's AG-UI 1.0 clients declared: ``ctx.tools``), ``forwardedProps`` (an AG-UI 1.0 client's, with ``a2ui``: what the
  session's clients can show).
"""

import json
import uuid

from ag_ui.core import (
    AssistantMessage,
    Context,
    FunctionCall,
    ResumeEntry,
    RunAgentInput,
    Tool,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from ag_ui.core.version import PROTOCOL_VERSION

from a2ui.remote import ops
from a2ui.remote.agui import mapping


def _new_id():
    return uuid.uuid4().hex


def history(transcript):
    """The transcript as AG-UI messages (system notices of this server left out)."""
    out = []
    for m in transcript:
        role, content = m.get("role"), m.get("content")
        if not isinstance(content, str) or not content:
            continue
        message_id = str(m.get("message_id") or _new_id())
        if role == "user":
            out.append(UserMessage(id=message_id, content=content))
        elif role == "agent":
            out.append(AssistantMessage(id=message_id, content=content))
    return out


def _tool_call_messages(call, parent_id, content):
    call_id = str(call.get("id") or _new_id())
    assistant = AssistantMessage(id=str(parent_id or _new_id()), tool_calls=[ToolCall(
        id=call_id, type="function", function=FunctionCall(
            name=str(call.get("name") or ""), arguments=str(call.get("arguments") or "{}")))])
    return [assistant, ToolMessage(id=_new_id(), tool_call_id=call_id, content=content)]


def answer_content(turn):
    """What a question tool returns to the agent: the input's value, or the confirm's
    ``{approved, reason}``, as JSON text; a timeout or a cancel says so."""
    if turn.status == "timed_out":
        return json.dumps({"error": "The person did not answer in time."})
    if turn.status == "cancelled":
        return json.dumps({"error": "The person cancelled the question."})
    return json.dumps(turn.value, ensure_ascii=False)


def action_text(action):
    """The middleware's words for a person's action (the ``log_a2ui_event`` result)."""
    name = action.get("name") or "unknown_action"
    surface = action.get("surfaceId") or "unknown_surface"
    text = f'User performed action "{name}" on surface "{surface}"'
    if action.get("sourceComponentId"):
        text += f" (component: {action['sourceComponentId']})"
    return text + f". Context: {json.dumps(action.get('context') or {}, ensure_ascii=False)}"


def build(ctx, turn):
    """The ``RunAgentInput`` of ``ctx`` (a ``RunContext``) for ``turn``."""
    messages = history(ctx.transcript)
    resume = None
    forwarded = dict(ctx.forwarded or {})
    if isinstance(turn, ops.Answer):
        info = turn.resume if isinstance(turn.resume, dict) else {}
        if "interrupt_id" in info:
            status = "resolved" if turn.status == "answered" else "cancelled"
            resume = [ResumeEntry(interrupt_id=str(info["interrupt_id"]), status=status,
                                  payload=turn.value if status == "resolved" else None)]
        elif isinstance(info.get("tool_call"), dict):
            messages += _tool_call_messages(info["tool_call"], info.get("parent_message_id"),
                                            answer_content(turn))
    elif isinstance(turn, ops.ToolResult):
        messages.append(ToolMessage(id=_new_id(), tool_call_id=turn.call_id,
                                    content=turn.content))
    elif isinstance(turn, ops.Action):
        user_action = {k: turn.action[k] for k in
                       ("name", "surfaceId", "sourceComponentId", "context", "timestamp")
                       if k in turn.action}
        if turn.data_model is not None:
            user_action["dataModel"] = turn.data_model
        forwarded["a2uiAction"] = {"userAction": user_action}
        messages += _tool_call_messages(
            {"id": _new_id(), "name": mapping.LOG_EVENT_TOOL,
             "arguments": json.dumps(user_action, ensure_ascii=False)}, None,
            action_text(turn.action))
    forwarded["a2ui"] = {
        "protocols": sorted(ctx.capabilities.protocols),
        "catalogs": list(ctx.capabilities.catalogs),
        **({"user": ctx.user} if ctx.user else {}),
    }
    offered = {t["name"]: t for t in [*mapping.ask_tools(), *ctx.tools]}
    tools = [Tool(**t) for t in offered.values()]
    context = [Context(description=str(c.get("description", "")), value=str(c.get("value", "")))
               for c in ctx.context]
    return RunAgentInput(thread_id=ctx.thread_id, run_id=ctx.run_id,
                         protocol_version=PROTOCOL_VERSION, state=ctx.state or {},
                         messages=messages, tools=tools, context=context,
                         forwarded_props=forwarded, resume=resume)


def body(run_input):
    """The request body (camelCase JSON, optional fields left out)."""
    return run_input.model_dump_json(by_alias=True, exclude_none=True)
