"""Channel-layer group names and the event shapes that travel through them.

Group membership is how a push reaches a socket in whichever process holds it. Event types map
to consumer handlers (``a2ui.push`` -> ``a2ui_push``).
"""

import uuid

from channels.layers import get_channel_layer

from ..protocol import jsonrpc


def session_group(session_id):
    if not isinstance(session_id, uuid.UUID):  # the hot path passes a UUID already
        session_id = uuid.UUID(str(session_id))
    return f"a2ui.s.{session_id.hex}"


def agent_group(agent_id):
    return f"a2ui.a.{agent_id}"


def agent_key_group(agent):
    """Sockets opened with the agent's current key, so rotating or revoking it closes them."""
    return f"a2ui.k.{agent.key_prefix}"


def user_group(user_id):
    return f"a2ui.u.{user_id}"


def token_group(jti):
    """Sockets opened with one stream token, so revoking it closes them."""
    return f"a2ui.t.{uuid.UUID(str(jti)).hex}"


async def send_group(group, event):
    await get_channel_layer().group_send(group, event)


async def send_channel(channel, event):
    await get_channel_layer().send(channel, event)


def push_event(seq, method, params, text=None, epoch=None):
    """A JSON-RPC agent-to-UI message for every socket of a session.

    ``text`` is the encoded notification, built once here rather than once per socket.
    ``epoch`` names the sequence counter ``seq`` came from (``shared``): a new one means the
    counter was lost and started again, so the receiving socket resyncs.
    """
    if text is None:
        text = jsonrpc.encode(jsonrpc.notification(method, params))
    return {"type": "a2ui.push", "seq": seq, "epoch": epoch, "method": method, "text": text}


def resync_event():
    """Tells a socket to resend its session's state from the database (``a2ui.services.seqwatch``).

    It travels the consumer's own queue, in order with the pushes, never the channel layer.
    """
    return {"type": "a2ui.push", "resync": True}


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
