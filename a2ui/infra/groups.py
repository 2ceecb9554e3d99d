"""Channel-layer group names and the event shapes that travel through them.

Group membership is how an event reaches a socket in whichever process holds it. Message types
map to consumer handlers (``a2ui.event`` -> ``a2ui_event``); session events are built by
``a2ui.core.events.to_message`` and sent by ``a2ui.push.fanout``.
"""

import uuid

from channels.layers import get_channel_layer

#: A session's group is this and the session's hex.
SESSION_GROUP_PREFIX = "a2ui.s."


def session_group(session_id):
    if not isinstance(session_id, uuid.UUID):  # the hot path passes a UUID already
        session_id = uuid.UUID(str(session_id))
    return f"{SESSION_GROUP_PREFIX}{session_id.hex}"


def agent_group(agent_id):
    return f"a2ui.a.{agent_id}"


def presence_group(agent_id):
    """The people's sockets told when the agent comes online or goes offline (``presence``)."""
    return f"a2ui.p.{agent_id}"


def agent_key_group(agent):
    """Sockets opened with the agent's current key, so rotating or revoking it closes them."""
    return f"a2ui.k.{agent.key_prefix}"


def user_group(user_id):
    return f"a2ui.u.{user_id}"


def token_group(jti):
    """Sockets opened with one stream token, so revoking it closes them."""
    return f"a2ui.t.{uuid.UUID(str(jti)).hex}"


async def tell_agent(agent_id, method, params, since=None):
    """Tell the agent ``agent_id`` (if any) of something in one of its sessions: the one way
    every session notice and person input reaches an agent (``agent_event`` to its group; its
    relay in each process hands it to the socket holding the session,
    ``a2ui.sessions.agentroute``). ``since``: for a session's opened/resumed notice, when the
    person's socket connected (``a2ui.sessions.lifecycle.ToldOnce``)."""
    if agent_id:
        event = agent_event(method, params)
        if since is not None:
            event["since"] = since
        await send_group(agent_group(agent_id), event)


#: The seam of remote agents (``a2ui.remote.runtime``, set once per process): ``await
#: divert(target, event)`` is offered the events of an agent's group and of reply channels
#: named ``DIVERTED_CHANNEL_PREFIX...``; True means it took them (a remote agent's events go to
#: the runtime of the process where they happen, not to the channel layer).
divert = None
DIVERTED_CHANNEL_PREFIX = "a2ui.remote!"
_AGENT_PREFIX = "a2ui.a."


async def send_group(group, event):
    if divert is not None and group.startswith(_AGENT_PREFIX) and await divert(group, event):
        return
    await get_channel_layer().group_send(group, event)


async def send_group_soon(group, event, lost):
    """``send_group`` for the push path: where the layer can (``a2ui.layer``), the publish is
    queued on its connection and not waited for, so the sender goes on to its next message and
    the publish shares a write with what comes next; ``lost(exc)`` is called should Redis not
    take it. (A PUBLISH's reply only says Redis took it, never that a socket got it.)"""
    layer = get_channel_layer()
    soon = getattr(layer, "group_send_soon", None)
    if soon is None:
        await send_group(group, event)
        return
    future = await soon(group, event)
    if future is not None:
        future.add_done_callback(lambda done: _check_sent(done, lost))


def _check_sent(future, lost):
    if future.cancelled():
        lost(ConnectionError("the publish was cancelled"))
    elif future.exception() is not None:
        lost(future.exception())


async def send_channel(channel, event):
    if divert is not None and channel.startswith(DIVERTED_CHANNEL_PREFIX) and await divert(
            channel, event):
        return
    await get_channel_layer().send(channel, event)


def close_event(code, reason):
    """Close the receiving sockets with this WebSocket close code and reason."""
    return {"type": "a2ui.close", "code": code, "reason": reason}


def agent_event(method, params):
    """A notification for every socket of an agent (session opened/closed, user.cancel, ...)."""
    return {"type": "a2ui.agent_event", "method": method, "params": params}


def answer_event(session_id, request_id, status, value=None, rpc_id=None, kind=None):
    """The outcome of a pending request, for the channel that awaits it."""
    return {
        "type": "a2ui.answer",
        "session_id": str(session_id),
        "request_id": request_id,
        "status": status,
        "value": value,
        "rpc_id": rpc_id,
        "kind": kind,
    }
