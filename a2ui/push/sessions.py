"""Sessions opened and closed, told to their clients and agents.

The session domain (``a2ui.sessions``: ``admission`` decides, ``lifecycle`` records) changes
the rows; this module says so afterwards: a session opened or resumed by a client (its agent
gets ``session.opened`` / ``session.resumed`` from the client's listener), the sessions a new
one closed to make room, a session closed by an operator, by the inactivity timeout or at the
end of its resume window (its sockets close with the code given, its open requests close in
the session's order, their waiters hear ``cancelled``, its agent gets ``session.closed``).
"""

from channels.db import database_sync_to_async

from a2ui.core.closes import CloseCode
from a2ui.core.events import Kind
from a2ui.infra import dbthreads, groups, shared
from a2ui.push import fanout
from a2ui.sessions import admission, ghosts
from a2ui.sessions import lifecycle as sessions

State = sessions.State


# Opening ---------------------------------------------------------------------------------------


async def aadmit(token, client_info, capabilities, *, reuse=False):
    """``admit`` for consumers: announces the sessions closed to make room (their agent gets
    ``session.closed``), then returns ``(session, resumed)`` or raises -32007."""
    opened = await dbthreads.run(admission.admit, token, client_info, capabilities,
                                 reuse=reuse)
    if opened.session is None and await ghosts.amake_room(opened.refusal, token.agent_id,
                                                          token.user_id):
        # the place was held by sessions no client shows: admitted once they are detached
        opened = await dbthreads.run(admission.admit, token, client_info, capabilities,
                                     reuse=reuse)
    if opened.session is None:
        await dbthreads.run(admission.record_limit_rejection, token, client_info, capabilities)
    return await aannounce(opened)


async def aannounce(opened):
    """What ``aadmit`` does after ``admit``: the closes announced, then ``(session, resumed)``
    or -32007."""
    for session, cancelled in opened.closed:
        await _announce_close(
            session, cancelled, State.CLOSED, admission.REPLACED_REASON,
            CloseCode.SESSION_NOT_FOUND,
        )
    if opened.session is None:
        raise opened.refusal.error()
    return opened.session, opened.resumed


async def aopen_session(token, client_info, capabilities):
    """A new session (the v0.9 socket's handshake); -32007 at the limit (recorded)."""
    session, _ = await aadmit(token, client_info, capabilities)
    return session


async def aattach(token, session_id, capabilities):
    """Open a session (like a2ui.init) or resume one for a /ws/v09 or SSE client."""
    if session_id:
        session = await admission.aresume_session(token, session_id)
        return session, True
    session = await aopen_session(token, {"name": "a2ui-v0.9"}, capabilities)
    return session, False


# Closing ---------------------------------------------------------------------------------------


async def aclose_session(session_id, state=State.CLOSED, reason="", *, actor=None,
                         close_code=None, still_detached=False, past_window=False):
    """Close a session and tell everyone: its sockets (with ``close_code``), its agent, waiters."""
    sid = sessions.parse_session_id(session_id)
    result = await database_sync_to_async(sessions.close_session)(
        sid, state, reason, actor, still_detached=still_detached, past_window=past_window
    )
    if result is None:
        return False
    await _announce_close(*result, state, reason, close_code)
    return True


async def _announce_close(session, cancelled, state, reason, close_code):
    sid = session.session_id
    await shared.forget_session(sid.hex)
    if close_code is not None:
        await groups.send_group(groups.session_group(sid), groups.close_event(close_code, reason))
    for req in cancelled:  # in the session's order, so every adapter's state drops them
        await fanout.emit(sid, Kind.REQUEST_CLOSED,
                          {"request_id": req["request_id"], "status": "cancelled"})
    for req in cancelled:
        if req["reply_channel"]:
            await groups.send_channel(
                req["reply_channel"],
                groups.answer_event(sid, req["request_id"], "cancelled", rpc_id=req["rpc_id"],
                                    kind=req["kind"]),
            )
    await groups.tell_agent(session.agent_id, "session.closed",
                            {"session_id": str(sid), "state": state, "reason": reason})


async def areap():
    """Close what is due; run periodically by every process (closing is idempotent)."""

    await ghosts.adetach()  # in use with no live client: detached (a2ui.sessions.ghosts)
    idle, gone = await database_sync_to_async(sessions.due_for_closing)()
    closed = 0
    for sid in idle:
        closed += await aclose_session(
            sid, State.TIMED_OUT, "Session inactive for more than the inactivity timeout.",
            close_code=CloseCode.SESSION_EXPIRED,
        )
    for sid in gone:
        # A socket that resumed while the last one was leaving can find its session marked
        # detached after it attached (two processes, no common lock): the socket count says,
        # unless the session's client registry is sure no client shows it (a count left high
        # by a killed process).
        if (await shared.socket_count(sid.hex) or 0) > 0 and not await ghosts.ghosts([sid]):
            await database_sync_to_async(sessions.reattach)(sid)
            continue
        closed += await aclose_session(
            sid, State.CLOSED, sessions.GONE_REASON,
            close_code=CloseCode.SESSION_NOT_FOUND, past_window=True,
        )
    return closed
