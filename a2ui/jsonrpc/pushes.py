"""Seed 000's agent messages (``ui.render``, ``ui.update``, ...) into the core.

The agent paths' shared vocabulary: the agent WebSocket, REST, the Python API and the MCP agent
tools all take seed 000's agent-to-UI methods. ``validate`` reads one (sans-I/O:
``a2ui.core.content.methods.agent_message``, a DomainError for bad input before any state
changes) and ``apush`` turns it into the protocol-neutral session event that
``a2ui.push.pipeline.aemit`` applies and delivers. The services never see the wire.
"""

from a2ui.core.content import methods as wire
from a2ui.push import pipeline as delivery

#: Seed 000's agent-to-UI message, read: ``(session_id, params)`` or a ProtocolError.
validate = wire.agent_message


async def apush(agent_id, session_id, method, params, *, reply_channel="", rpc_id=None,
                key=None):
    """``delivery.aemit`` for a validated seed-000 agent message; returns (seq, request).
    ``key``: an idempotency key (``a2ui.core.content.idempotency``)."""
    kind, data = wire.to_event(method, params)
    return await delivery.aemit(agent_id, session_id, kind, data, reply_channel=reply_channel,
                                rpc_id=rpc_id, key=key)


async def apush_batch(agent_id, session_id, batch, key=None):
    """``delivery.aemit_batch`` for validated ``(method, params)`` pairs: all or nothing;
    returns their sequence numbers."""
    return await delivery.aemit_batch(
        agent_id, session_id, [wire.to_event(method, params) for method, params in batch],
        key=key)
