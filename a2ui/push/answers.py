"""A request's outcome, told to whoever waits for it and to every client of its session.

Every outcome of a pending request (answered, timed out, cancelled by the person) is one
conditional UPDATE of its domain (``a2ui.requests.pending``: exactly one of them wins), then,
by the call that won only: the waiter (the agent socket or Python API call on the request's
``reply_channel``) gets the outcome, and the session's clients the ``request.closed`` event in
the session's order. ``apending`` hands what waits for an agent to a socket that comes back.
"""

from channels.db import database_sync_to_async

from a2ui.core.events import Kind
from a2ui.infra import dbthreads, groups, prom
from a2ui.push import fanout
from a2ui.requests import pending
from a2ui.sessions import lifecycle as sessions
from a2ui.sessions.counters import buffer


async def aretried(asked):
    """Tell the waiters of a retry (``ask`` with ``new`` False): the old ones that lost the
    request, and the new one its outcome if it has one."""
    await _tell_moved(asked.moved)
    row = asked.row
    if asked.expired:
        await _notify(row)  # the waiter and the person's clients
    elif row.status != pending.Status.PENDING and row.reply_channel:
        await groups.send_channel(row.reply_channel, groups.answer_event(
            row.session_id, row.request_id, row.status, pending.outcome_value(row), row.rpc_id,
            row.kind))


async def _notify(row):
    """Tell the waiter and every socket of the session that the request is over."""
    if row.reply_channel:
        await groups.send_channel(
            row.reply_channel,
            groups.answer_event(
                row.session_id, row.request_id, row.status, pending.outcome_value(row), row.rpc_id,
                row.kind,
            ),
        )
    await fanout.emit(
        row.session_id, Kind.REQUEST_CLOSED,
        {"request_id": row.request_id, "status": row.status},
    )


async def aanswer(session_id, request_id, kind, value, via=None):
    """``answer``, then tell the waiter and the session's clients. ``via``: the protocol of
    the client that answered, for the metrics (``prom.answered``)."""
    row = await dbthreads.run(pending.answer, session_id, request_id, kind, value)
    if prom.ON:
        prom.answered(row, via)
    buffer.add(session_id)
    await _notify(row)
    return row


async def asettle(session_id, request_id, kind, value, via=None):
    """``settle``; the waiter and the session's clients are told once, by the call that took
    the answer (``via``: as ``aanswer``'s)."""
    row, taken = await dbthreads.run(pending.settle, session_id, request_id, kind, value)
    if taken:
        if prom.ON:
            prom.answered(row, via)
        buffer.add(session_id)
        await _notify(row)
    return row, taken


async def arespond(session_id, request_id, value, via=None):
    """``respond`` in one database call; False for a form's submission, which the caller
    forwards to the agent, True for an answer taken (``via``: as ``aanswer``'s)."""
    row = await dbthreads.run(pending.respond, session_id, request_id, value)
    if row is None:
        return False
    if prom.ON:
        prom.answered(row, via)
    buffer.add(session_id)
    await _notify(row)
    return True


async def acancel(session_id, request_id):
    """The person cancels an open request (AG-UI ``resume`` ``cancelled``); True if it was open.
    The waiter gets ``cancelled`` with :data:`~a2ui.requests.pending.PERSON_CANCEL` (``cancelled_by: "person"``): a
    cancellation, not a closed session (the session goes on)."""
    row = await database_sync_to_async(pending._finish)(session_id, request_id, None, pending.Status.CANCELLED,
                                                dict(pending.PERSON_CANCEL))
    if row is None:
        return False
    await _notify(row)
    return True


async def aexpire(session_id, request_id):
    """Time a request out if it is still pending; True if this call did it."""
    row = await database_sync_to_async(pending._finish)(session_id, request_id, None, pending.Status.TIMED_OUT)
    if row is None:
        return False
    await _notify(row)
    return True


async def areap():
    """Time out open requests past their deadline whose waiter did not (it died).

    Only the deadline counts: a request whose waiter died is left open until then, for a
    reconnecting agent to take over. The timeout is then an undelivered outcome like an answer.
    """
    count = 0
    for session_id, request_id in await database_sync_to_async(pending.overdue)():
        count += await aexpire(session_id, request_id)
    return count


async def apending(agent_id, session_id=None, channel=""):
    """``a2ui.pending``, the one operation every agent transport exposes after a restart (the
    agent socket's ``a2ui.pending``, ``POST /api/v4/requests``, ``agents.apending``, MCP's
    ``pending_requests``): what waits for the agent, taken over by the caller (``take_over``).
    ``session_id`` (a UUID or its text; -32000 for anything else) narrows it to one session;
    ``channel`` is the caller's, if it can hear outcomes later (a socket). Returns
    ``(items, open requests re-pointed to channel)``."""
    if session_id is not None:
        session_id = sessions.parse_session_id(session_id)
    return await atake_over(agent_id, channel, session_id)


async def atake_over(agent_id, channel, session_id=None):
    items, taken, moved = await database_sync_to_async(pending.take_over)(agent_id, channel, session_id)
    await _tell_moved(moved)
    return items, taken


async def _tell_moved(moved):
    for old_channel, old_rpc_id, row in moved:
        await groups.send_channel(
            old_channel,
            groups.answer_event(row.session_id, row.request_id, pending.MOVED, None, old_rpc_id, row.kind),
        )
