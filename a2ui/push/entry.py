"""The one push entry point of the agent paths: ``apush`` reads the dispatch table
(``a2ui.core.agentmethods``) the adapters declare, validates, and calls the entry's service.

``apush(agent_id, session_id, method, params, key=..., reply_channel=..., rpc_id=...)``: the
same signature for every push an agent makes (seed 000's ``ui.*``, ``a2ui.v09``,
``agui.event``); what it returns is the entry's ``shape``. The services speak no wire format:
the table's validators are the protocols' own.
"""

from a2ui.core import agentmethods
from a2ui.core.errors import DomainError, Fault
from a2ui.infra import prom


def entry(method):
    """The table's entry for ``method``, or -32601 (as an unknown seed-000 method)."""
    found = agentmethods.get(method)
    if found is None or found.call is None:
        raise DomainError(Fault.UNKNOWN_OPERATION, data={"method": str(method)[:100]})
    return found


async def apush(agent_id, session_id, method, params, *, key=None, reply_channel="",
                rpc_id=None, where="params"):
    """Push one agent method's ``params`` (validated already, without ``session_id``) to a
    session: the entry's service call, its result as the entry's ``shape`` says. ``where``:
    how the caller's path names the params in a refusal's ``data.path`` ("params" on the
    agent socket, "arguments" for an MCP tool, "" when they are the body or the call's own
    arguments: REST, the Python API).

    Timed for the Prometheus metrics when they are on (``services.prom``: one latency
    observation per call, per protocol of the session's attached clients)."""
    if not prom.ON:
        return await entry(method).call(agent_id, session_id, params, key=key,
                                        reply_channel=reply_channel, rpc_id=rpc_id, where=where)
    start = prom.now()
    result = await entry(method).call(agent_id, session_id, params, key=key,
                                      reply_channel=reply_channel, rpc_id=rpc_id, where=where)
    prom.pushed_result(prom.now() - start, result)
    return result


def validate(method, params):
    """``(session_id, clean params)`` by the entry's validator."""
    return entry(method).validate(params)
