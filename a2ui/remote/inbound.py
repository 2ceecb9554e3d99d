"""The seam: every event for a remote agent, taken where it happens (``groups.divert``, set
by :func:`install` when the app is ready) and made a turn of its queue (``runtime.submit``) or
a cancel: a chat message of any client (``user.message``), an AG-UI 1.0 run against this
server (``agui.run_started``), a person's action on a surface (``a2ui.v09``, ``user.action``),
a cancel (``user.cancel``), the session's close, an answer to a question a run asked."""

from a2ui.remote import ops, port, runtime, store, turns
from a2ui.remote.agents import remote_agent
from a2ui.remote.applier import reply_channel

EVENT_TYPE = "a2ui.agent_event"


async def divert(target, event):
    """``groups.divert``: take the events of remote agents (see the module's docstring)."""
    if target.startswith(port.REPLY_PREFIX):
        await _on_answer(event)
        return True
    try:
        agent_id = int(target[len(port.AGENT_GROUP_PREFIX):])
    except ValueError:
        return False
    row = await remote_agent(agent_id)
    if row is None:
        return False
    if event.get("type") == EVENT_TYPE:
        await _on_agent_event(row, event.get("method"), event.get("params") or {})
    return True


def install():
    """Set the seam (``AppConfig.ready``)."""
    port.set_divert(divert)


async def _on_agent_event(row, method, params):
    try:
        sid = port.session_id(params.get("session_id"))
    except Exception:
        return
    runtime.ensure_sweeping()
    if method == "user.message":
        await runtime.submit(row, sid, ops.UserText(str(params.get("content") or ""),
                                            sender=params.get("sender")))
    elif method == "agui.run_started":
        await _agui_run(row, sid, params)
    elif method == "a2ui.v09":
        for message in params.get("messages") or ():
            if isinstance(message, dict) and isinstance(message.get("action"), dict):
                await runtime.submit(row, sid, ops.Action(message["action"], params.get("dataModel")))
    elif method == "user.action":
        action = {"name": params.get("action_type")}
        if params.get("component_id") is not None:
            action["sourceComponentId"] = params["component_id"]
        if isinstance(params.get("payload"), dict):
            action["context"] = params["payload"]
        await runtime.submit(row, sid, ops.Action(action))
    elif method == "user.cancel":
        await runtime.cancel(sid, "person")
    elif method == "session.closed":
        await runtime.cancel(sid, "session_closed")
        await port.db(store.cancel_queued, sid, "session_closed")
    elif method in ("session.opened", "session.resumed"):
        runtime.kick(sid)  # a queue left behind, a run lost meanwhile: looked at now


async def _agui_run(row, sid, notice):
    """A person's AG-UI 1.0 run against this server: its new user messages (already in the
    transcript) or frontend tool results are the turn; its tools, context and forwarded props
    go with it. A run that only resumes interrupts has no turn of its own: the answers are."""
    extra = {"agui1": {"tools": [t for t in notice.get("tools") or () if isinstance(t, dict)],
                       "context": [c for c in notice.get("context") or ()
                                   if isinstance(c, dict)],
                       "forwarded": notice.get("forwarded_props")
                       if isinstance(notice.get("forwarded_props"), dict) else {},
                       "run_id": notice.get("run_id")}}
    turn = None
    for message in notice.get("messages") or ():
        if not isinstance(message, dict):
            continue
        if message.get("role") == "tool" and message.get("toolCallId"):
            content = message.get("content")
            turn = ops.ToolResult(str(message["toolCallId"]),
                                  content if isinstance(content, str) else str(content))
        elif message.get("role") == "user":
            content = message.get("content")
            turn = ops.UserText(content if isinstance(content, str) else "")
    if turn is not None:
        await runtime.submit(row, sid, turn, **extra)
    elif not notice.get("resume"):
        # Nothing for the agent (a history it has seen): end the run at once.
        await port.finish_agui_run(row["agent_id"], sid, notice.get("run_id"))


async def _on_answer(event):
    """The outcome of a request a run asked: claimed once, then the answer is the next turn."""
    if event.get("status") == "moved":
        return
    try:
        sid = port.session_id(event.get("session_id"))
    except Exception:
        return
    request_id = event.get("request_id")
    if not await port.claim_answer(sid, request_id, reply_channel()):
        return  # another waiter (process) took it
    asked = await port.db(store.asked, sid, request_id)
    if asked is None:
        return
    row = await remote_agent(asked.agent_id)
    if row is None:
        return
    resume = (asked.asks or {}).get(request_id)
    status = event.get("status") or "answered"
    if isinstance(resume, dict) and "retry" in resume:  # "try again?" after a lost run
        value = event.get("value") if isinstance(event.get("value"), dict) else {}
        if status == "answered" and value.get("approved"):
            again = turns.from_json(resume["retry"])
            if again is not None:
                await runtime.submit(row, sid, again)
        return
    await runtime.submit(row, sid, ops.Answer(str(request_id), event.get("value"), resume, status))
