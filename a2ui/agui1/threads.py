"""An AG-UI thread is one of our sessions.

``threadId`` is the session's id (a session of the same person and agent), or any other string:
the person's live session with the agent that was opened for that thread id
(``A2UISessionLog.thread_id``; ``client_info.agui_thread_id`` says it too), else a new session
remembering it. A closed session named
by its id gets a new session for the thread, as a closed tab gets a new one. The run counts
itself as a socket of the session from here on (``arelease`` undoes it when the run is refused
before its stream starts), so direct delivery never skips it and the session is detached when
the last socket or run goes.

A thread names at most one live session of a person and agent: a unique index
(``THREAD_CONSTRAINT``) on the session's thread id decides between concurrent first runs of a
new thread (:func:`aopen`).
"""

import uuid

from channels.db import database_sync_to_async
from django.db import IntegrityError, transaction

from a2ui.consent import choices as consent
from a2ui.core import events
from a2ui.core.errors import DomainError, Fault
from a2ui.infra import groups
from a2ui.models import THREAD_CONSTRAINT, A2UISessionLog, AgentRun, StreamToken
from a2ui.push import sessions as session_actions
from a2ui.runs import records as runs
from a2ui.sessions import admission, ghosts
from a2ui.sessions import lifecycle as sessions

CAPABILITIES = {"agui": {"version": "1.0", "binding": "http-sse"}}


def find(user_id, agent_id, thread_id):
    """The live session of this person and agent for ``thread_id``, or None."""
    if not thread_id:
        return None
    live = A2UISessionLog.objects.filter(user_id=user_id, agent_id=agent_id,
                                         state__in=A2UISessionLog.LIVE_STATES)
    try:
        by_id = live.filter(pk=uuid.UUID(thread_id)).values_list("pk", flat=True).first()
    except ValueError:
        by_id = None
    if by_id is not None:
        return by_id
    return (live.filter(thread_id=thread_id).order_by("-created_at")
            .values_list("pk", flat=True).first())


afind = database_sync_to_async(find)


def find_run(user_id, agent_id, thread_id, run_id):
    """``(session_id, status)`` of this person's run ``run_id`` of ``thread_id`` with the agent
    (whatever its session's state: a client may come back after the session closed, for the
    run's last events), or None."""
    return (AgentRun.objects.filter(session__user_id=user_id, session__agent_id=agent_id,
                                    thread_id=thread_id, run_id=run_id)
            .order_by("-started_at").values_list("session_id", "status").first())


afind_run = database_sync_to_async(find_run)


def revoked(jti):
    """True once the stream token ``jti`` is revoked (a client back at a run stops then)."""
    return StreamToken.objects.filter(pk=jti, revoked_at__isnull=False).exists()


arevoked = database_sync_to_async(revoked)


async def aopen(token, thread_id, found, *, run=None, issue=None):
    """(token, session, counted epoch): the thread's session (``found``, from :func:`afind`),
    resumed, or a new one; counted. ``token`` is None for a signed-in person: ``issue()`` makes
    one (sync), in the new session's transaction when there is one.

    A new session and its first run (``run``: ``runs.start``'s arguments after the session)
    are one transaction, and the unique index of live sessions by thread decides between
    concurrent first runs of a thread: the others are refused (409-like INVALID_REQUEST) with
    nothing stored, and a run that finds the new session finds its run too."""
    session = None
    if found is not None:
        if token is None:
            token = await database_sync_to_async(issue)()
        try:
            session = await admission.aresume_session(token, found)
        except DomainError as exc:
            if exc.fault not in (Fault.SESSION_NOT_FOUND, Fault.SESSION_EXPIRED):
                raise
    fresh = session is None
    if fresh:
        token, opened = await database_sync_to_async(_open_new)(token, issue, thread_id, run,
                                                                record=False)
        if opened.session is None:
            # a place held by sessions no client shows is freed (they are detached) first
            await ghosts.amake_room(opened.refusal, token.agent_id, token.user_id)
            token, opened = await database_sync_to_async(_open_new)(token, issue, thread_id,
                                                                    run)
        session, _ = await session_actions.aannounce(opened)
    counted = await sessions.asocket_opened(session.session_id, fresh=fresh)
    if fresh and session.agent_id:
        await groups.tell_agent(session.agent_id, events.Notice.SESSION_OPENED, {
                "session_id": str(session.session_id), "user": token.user.get_username(),
                "client_info": session.client_info, "capabilities": CAPABILITIES,
                "consents_missing": await consent.amissing_types(session.user_id)})
    return token, session, counted


def _open_new(token, issue, thread_id, run, record=True):
    """(token, ``admission.Opened``): a new session for the thread and its first run, or
    nothing (the thread's session was opened by another run meanwhile: DomainError)."""
    info = {"protocol": "agui", "name": "AG-UI 1.0", "agui_thread_id": thread_id}
    with transaction.atomic():
        if token is None:
            token = issue()
        try:
            with transaction.atomic():
                opened = admission.admit(token, info, CAPABILITIES, thread_id=thread_id)
        except IntegrityError as exc:
            if THREAD_CONSTRAINT not in str(exc):
                raise
            raise runs.busy() from None
        if opened.session is not None and run is not None:
            runs.start(opened.session.session_id, *run)
    if opened.session is None and record:
        admission.record_limit_rejection(token, info, CAPABILITIES)
    return token, opened


async def arelease(session_id, counted):
    """The run was refused: uncount it (the session is detached if nothing else shows it)."""
    await sessions.asocket_closed(session_id, counted)
