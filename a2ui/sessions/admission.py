"""Who gets a session: the places an agent's sessions take, and a person's closed tabs.

What counts is what holds the agent's attention: a session some client shows now (attached:
a socket, an SSE stream, an AG-UI 1.0 run in flight or an MCP watch counts it). A detached
session (its clients all gone, kept ``RESUME_WINDOW_SECONDS`` so a reload can resume it)
takes no place: every AG-UI 1.0 thread is a session, and a person trying threads, closing
tabs or letting runs finish must not use up the agent. Three limits, all per agent:

* the agent's: at most ``Agent.session_limit()`` attached sessions, everyone's together;
* a person's share: at most ``MAX_SESSIONS_PER_PERSON_PERCENT`` of that (rounded up, at least
  one) attached sessions of one person, so one person cannot take every place;
* a person's detached sessions: at most ``MAX_DETACHED_SESSIONS_PER_PERSON``; a new session
  of the person closes their oldest detached ones beyond it (``REPLACED_REASON``, announced as the
  sweep announces a detached session it closes). They yield; they never refuse.

A refusal is -32007 with ``data {"limit": N, "per": "agent" | "person"}``. Reattaching a
detached session (a resume, the next run of a thread, a new tab taking over the person's
detached session) claims a place again and is refused the same way when there is none.

Everything here is decided in one transaction holding the agent row's lock, so two processes
(two tabs opening at once) are serialized; the take-over and the closes are conditional UPDATEs
too, so a resume of an attached session on another process (which does not take the agent
lock) cannot be overtaken.
"""

import math
from dataclasses import dataclass, field
from datetime import timedelta

from channels.db import database_sync_to_async
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from a2ui.compliance import audit
from a2ui.conf import a2ui_settings
from a2ui.core.errors import DomainError, Fault
from a2ui.models import A2UISessionLog, Agent
from a2ui.sessions import ghosts
from a2ui.sessions.lifecycle import (
    LIVE,
    State,
    close_session,
    idle_limit,
    parse_session_id,
    record_rejected,
    resume_cutoff,
)

REPLACED_REASON = "Replaced by a new session of the same person (session limit)."
LIMIT_REASON = "Agent has reached its concurrent session limit."
#: A refusal at the limit is recorded once per person and agent in this many seconds.
REJECTION_RECORD_SECONDS = 60


@dataclass(frozen=True)
class Refusal:
    """Which limit a new (or reattached) session would exceed: ``per`` "agent" or "person"."""

    limit: int
    per: str

    def error(self):
        if self.per == "person":
            message = (f"Max sessions exceeded: this person already has {self.limit} sessions "
                       "with this agent in use (their share): close a tab or end a run first.")
        else:
            message = (f"Max sessions exceeded: the agent's {self.limit} sessions are all in "
                       "use: try again later.")
        return DomainError(Fault.MAX_SESSIONS, message, {"limit": self.limit, "per": self.per})


@dataclass
class Opened:
    """What ``admit`` decided: the session (None when refused: ``refusal`` says why), whether
    it is a detached session of the same person taken over, and the sessions it closed to make
    room (to announce)."""

    session: A2UISessionLog | None
    resumed: bool = False
    closed: list = field(default_factory=list)
    refusal: Refusal | None = None

    @property
    def limit(self):
        return self.refusal.limit if self.refusal is not None else 0


def person_limit(agent_limit):
    """A person's share of an agent's limit: ``MAX_SESSIONS_PER_PERSON_PERCENT`` of it,
    rounded up, at least one."""
    share = math.ceil(agent_limit * a2ui_settings.MAX_SESSIONS_PER_PERSON_PERCENT / 100)
    return max(1, min(agent_limit, share))


def refusal(agent, user_id, exclude=None):
    """None when one more attached session of this person with ``agent`` fits in both limits,
    else the :class:`Refusal` (the agent's first). Call it holding the agent row's lock."""
    limit = agent.session_limit()
    attached = A2UISessionLog.objects.filter(agent=agent, state__in=LIVE,
                                             detached_at__isnull=True)
    if exclude is not None:
        attached = attached.exclude(pk=exclude)
    counts = attached.aggregate(total=Count("pk"), mine=Count("pk", filter=Q(user_id=user_id)))
    if counts["total"] >= limit:
        return Refusal(limit, "agent")
    share = person_limit(limit)
    if counts["mine"] >= share:
        return Refusal(share, "person")
    return None


def admit(token, client_info, capabilities, *, reuse=False, thread_id=""):
    """Open a session for the token's person and agent, within the agent's limits.

    1. If one more attached session of the person does not fit (the agent's limit, or the
       person's share of it), it is refused: ``Opened.session`` is None, ``Opened.refusal``
       says which, and nothing was changed.
    2. ``reuse`` (a new tab): the person's most recently detached session with this agent that
       is still resumable (detached within the resume window, not idle past the inactivity
       timeout) is taken over: ``Opened.resumed`` is True.
    3. Otherwise a new session. The person's detached sessions with this agent are closed,
       oldest first, down to ``MAX_DETACHED_SESSIONS_PER_PERSON`` - 1 (so that with this
       one, once it detaches, the person keeps at most that many)
       (``REPLACED_REASON``, audited as ``session.closed``).

    ``thread_id``: the client's name for the conversation the session is (an AG-UI thread):
    at most one live session of a person and agent has it (``THREAD_CONSTRAINT``, a unique
    index: of two concurrent admissions of one new thread, the second raises IntegrityError).
    """
    closed = []
    with transaction.atomic():
        agent = None
        if token.agent_id is not None:
            agent = Agent.objects.select_for_update(no_key=True).get(pk=token.agent_id)
            refused = refusal(agent, token.user_id)
            if refused is not None:
                return Opened(None, refusal=refused)
        now = timezone.now()
        if reuse:
            session = _take_over_detached(token, now)
            if session is not None:
                audit.record(
                    "session.resume", actor=token.user, agent=agent, target=session,
                    session_id=session.session_id, details={"reused": True},
                )
                return Opened(session, resumed=True)
        if agent is not None:
            # Room for this one when it detaches: at most the newest cap - 1 are kept now.
            keep = a2ui_settings.MAX_DETACHED_SESSIONS_PER_PERSON - 1
            extra = list(
                A2UISessionLog.objects.filter(
                    agent=agent, user_id=token.user_id, state__in=LIVE,
                    detached_at__isnull=False,
                ).order_by("-detached_at", "-created_at", "-pk").values_list("pk", flat=True)[keep:]
            )
            for pk in reversed(extra):  # oldest first
                # None: resumed meanwhile on another process: it is in use again, kept.
                result = close_session(pk, State.CLOSED, REPLACED_REASON, still_detached=True)
                if result is not None:
                    closed.append(result)
        session = A2UISessionLog.objects.create(
            agent=agent,
            user=token.user,
            token=token,
            state=State.INITIALIZED,
            client_info=client_info,
            capabilities=capabilities,
            thread_id=thread_id,
        )
        audit.record(
            "session.open", actor=token.user, agent=agent, target=session,
            session_id=session.session_id, details={"client": client_info.get("name", "")},
        )
    return Opened(session, closed=closed)


def reattach(agent_id, user_id, session_id, claim):
    """Reattach a detached session (a resume): ``claim()`` (the conditional UPDATE that
    attaches it) runs holding the agent row's lock, once the session fits in the agent's
    limits again; else the -32007 ``DomainError`` and nothing changed."""
    with transaction.atomic():
        agent = Agent.objects.select_for_update(no_key=True).get(pk=agent_id)
        refused = refusal(agent, user_id, exclude=session_id)
        if refused is not None:
            raise refused.error()
        return claim()


def _take_over_detached(token, now):
    """Claim the person's most recently detached, still resumable session with this agent.

    The claim is a conditional UPDATE (still live, still detached within the window): of two
    claims of one session, one wins, the other tries the next candidate.
    """
    cutoff = resume_cutoff(now)
    candidates = A2UISessionLog.objects.filter(
        user_id=token.user_id, agent_id=token.agent_id, state__in=LIVE,
        detached_at__gte=cutoff, last_activity__gte=now - idle_limit(),
    ).order_by("-detached_at").values_list("pk", flat=True)[:5]
    for pk in list(candidates):
        claimed = A2UISessionLog.objects.filter(
            pk=pk, state__in=LIVE, detached_at__gte=cutoff
        ).update(detached_at=None, token=token, last_activity=now)
        if claimed:
            return A2UISessionLog.objects.get(pk=pk)
    return None


def record_limit_rejection(token, client_info=None, capabilities=None):
    """Record a refusal at the session limit once per person and agent per
    ``REJECTION_RECORD_SECONDS``: a client retrying (or many tabs) adds no row per try."""
    recent = A2UISessionLog.objects.filter(
        user_id=token.user_id, agent_id=token.agent_id, state=State.REJECTED,
        close_reason=LIMIT_REASON,
        closed_at__gte=timezone.now() - timedelta(seconds=REJECTION_RECORD_SECONDS),
    )
    if recent.exists():
        return None
    return record_rejected(token, LIMIT_REASON, client_info, capabilities)


# Opening and resuming --------------------------------------------------------------------------


def open_session(token, client_info, capabilities):
    """A new session (never a take-over) or -32007: ``admission.admit`` decides."""
    opened = admit(token, client_info, capabilities)
    if opened.session is None:
        raise opened.refusal.error()
    return opened.session


def resume_session(token, session_id):
    """Reattach a live session of the same user and agent and return it.

    The caller joins the session's group first and reads ``snapshot`` after, so nothing pushed
    in between is missed.
    """
    sid = parse_session_id(session_id)
    session = A2UISessionLog.objects.filter(pk=sid).first()
    if (
        session is None
        or session.user_id != token.user_id
        or session.agent_id != token.agent_id
        or session.state not in LIVE
    ):
        raise DomainError(Fault.SESSION_NOT_FOUND, data={"session_id": str(sid)})
    now = timezone.now()
    if session.last_activity < now - idle_limit():
        close_session(sid, State.TIMED_OUT, "Inactive for too long.")
        raise DomainError(Fault.SESSION_EXPIRED, data={"session_id": str(sid)})
    # Conditional: a session detached for longer than the resume window is the sweep's to
    # close (it closes only what is still detached that long), never both.
    def claim():
        return A2UISessionLog.objects.filter(
            Q(detached_at__isnull=True) | Q(detached_at__gte=resume_cutoff(now)),
            pk=sid, state__in=LIVE,
        ).update(detached_at=None, token=token, last_activity=now)

    if session.detached_at is not None and session.agent_id is not None:
        # A detached session takes no place in the agent's limits: it claims one again.
        resumed = reattach(session.agent_id, session.user_id, sid, claim)
    else:
        resumed = claim()
    if not resumed:
        raise DomainError(Fault.SESSION_NOT_FOUND, data={"session_id": str(sid)})
    session.refresh_from_db()
    audit.record(
        "session.resume", actor=token.user, agent=session.agent, target=session,
        session_id=sid,
    )
    return session


_aresume_session = database_sync_to_async(resume_session)


async def aresume_session(token, session_id):
    """``resume_session``; refused at a limit held by sessions no client shows (ghosts), it
    detaches them and tries once more."""
    try:
        return await _aresume_session(token, session_id)
    except DomainError as exc:
        data = exc.data if isinstance(exc.data, dict) else {}
        if exc.fault != Fault.MAX_SESSIONS or not await ghosts.amake_room(
                Refusal(data.get("limit", 0), data.get("per", "agent")), token.agent_id,
                token.user_id):
            raise
    return await _aresume_session(token, session_id)
