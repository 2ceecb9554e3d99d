"""An AG-UI thread is one of our sessions.

``threadId`` is the session's id (a session of the same person and agent), or any other string:
the person's live session with the agent that was opened for that thread id
(``client_info.agui_thread_id``), else a new session remembering it. A closed session named
by its id gets a new session for the thread, as a closed tab gets a new one. The run counts
itself as a socket of the session from here on (``arelease`` undoes it when the run is refused
before its stream starts), so direct delivery never skips it and the session is detached when
the last socket or run goes.
"""

import uuid

from channels.db import database_sync_to_async

from ..core import events
from ..core.errors import DomainError, Fault
from ..models import A2UISessionLog
from ..services import admission, consent, groups, sessions

CAPABILITIES = {"agui": {"version": "1.0", "binding": "http-sse"}}


def find(user_id, agent_id, thread_id):
    """The live session of this person and agent for ``thread_id``, or None."""
    live = A2UISessionLog.objects.filter(user_id=user_id, agent_id=agent_id,
                                         state__in=A2UISessionLog.LIVE_STATES)
    try:
        by_id = live.filter(pk=uuid.UUID(thread_id)).values_list("pk", flat=True).first()
    except ValueError:
        by_id = None
    if by_id is not None:
        return by_id
    return (live.filter(client_info__agui_thread_id=thread_id).order_by("-created_at")
            .values_list("pk", flat=True).first())


afind = database_sync_to_async(find)


async def aopen(token, thread_id, found):
    """(session, counted epoch): the thread's session (``found``, from :func:`afind`),
    resumed, or a new one; counted."""
    session = None
    if found is not None:
        try:
            session = await sessions.aresume_session(token, found)
        except DomainError as exc:
            if exc.fault not in (Fault.SESSION_NOT_FOUND, Fault.SESSION_EXPIRED):
                raise
    fresh = session is None
    if fresh:
        session, _ = await admission.aadmit(
            token, {"protocol": "agui", "name": "AG-UI 1.0", "agui_thread_id": thread_id},
            CAPABILITIES)
    counted = await sessions.asocket_opened(session.session_id, fresh=fresh)
    if fresh and session.agent_id:
        await groups.send_group(groups.agent_group(session.agent_id), groups.agent_event(
            events.Notice.SESSION_OPENED, {
                "session_id": str(session.session_id), "user": token.user.get_username(),
                "client_info": session.client_info, "capabilities": CAPABILITIES,
                "consents_missing": await consent.amissing_types(session.user_id)}))
    return session, counted


async def arelease(session_id, counted):
    """The run was refused: uncount it (the session is detached if nothing else shows it)."""
    await sessions.asocket_closed(session_id, counted)
