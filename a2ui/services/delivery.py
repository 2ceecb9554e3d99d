"""Agent-to-UI delivery: one path for the agent WebSocket, the REST endpoint and the Python API.

``apush`` takes params already validated and sanitized by ``a2ui.protocol.methods`` and does,
in order: the owner check (cached), the state change for methods that have one (a component,
a pending request), the per-session sequence number, the buffered metrics, and the delivery:
straight to the consumers when every socket of the session is in this process
(``a2ui.services.direct``), else one group send. ui.progress, ui.notify and ui.navigate touch
no database at all.
"""

from ..core import events
from ..core.events import Kind
from ..protocol import events as wire
from ..protocol import methods
from ..protocol.errors import ErrorCode, ProtocolError
from . import components, consent, dbthreads, direct, pending, sessions, shared, stream
from .metrics import buffer


def validate(method, params):
    """Split off ``session_id`` and validate the rest as the seed's params for ``method``."""
    if method not in methods.AGENT_TO_UI:
        raise ProtocolError(ErrorCode.METHOD_NOT_FOUND, data={"method": str(method)[:100]})
    if not isinstance(params, dict) or "session_id" not in params:
        raise ProtocolError(
            ErrorCode.INVALID_PARAMS, "session_id is required", data={"path": "params.session_id"}
        )
    params = dict(params)
    session_id = params.pop("session_id")
    return session_id, methods.validate_params(method, params)


STATELESS = frozenset({"ui.progress", "ui.notify", "ui.navigate"})


async def apush(agent_id, session_id, method, params, *, reply_channel="", rpc_id=None):
    """Deliver one validated agent-to-UI message; return (seq, PendingRequest or None)."""
    if method in STATELESS:
        return await _apush_stateless(agent_id, session_id, method, params), None
    sid = await sessions.aensure_agent_session(agent_id, session_id)
    request = None
    if method == "ui.render":
        await dbthreads.run(components.store_render, sid, params)
    elif method == "ui.update":
        await dbthreads.run(components.store_update, sid, params)
    elif method in methods.AWAITING:
        await consent.aensure_session(sid)  # -32010 while a required consent is missing
        request = await dbthreads.run(pending.create, sid, method, params, reply_channel, rpc_id)
    kind, data = wire.to_event(method, params)
    seq, epoch, sockets = await shared.next_seq_and_sockets(sid.hex, direct.wanted(sid.hex))
    buffer.add(
        sid,
        rendered=int(kind is Kind.COMPONENT_RENDERED),
        inputs=int(kind is Kind.REQUEST_OPENED),
        pushed=True,
    )
    await stream.send(sid, seq, sockets, events.to_message(kind, data, seq, epoch))
    return seq, request


async def _apush_stateless(agent_id, session_id, method, params):
    """The hot path (progress, toasts): owner check and sequence number in one Redis trip.

    A sequence number taken for a session that then fails the check is never sent; only a
    session that is not live (or not this agent's) fails it, and such a session has no
    socket to see the gap.
    """
    sid = sessions.parse_session_id(session_id)
    owner, seq, epoch, sockets = await shared.cached_session_and_next_seq(
        sid.hex, direct.wanted(sid.hex)
    )
    if owner is None or owner[0] != str(agent_id or ""):
        await sessions.aensure_agent_session(agent_id, sid)
    buffer.add(sid, pushed=True)
    kind, data = wire.to_event(method, params)
    await stream.send(sid, seq, sockets, events.to_message(kind, data, seq, epoch))
    return seq
