"""Who gets a session: the agent's concurrent-session limit, and a person's closed tabs.

Seed 000 allows an agent 10 concurrent sessions (-32007 beyond). A session outlives its sockets
for ``RESUME_WINDOW_SECONDS`` so a reload can resume it, which means a person who closes tabs
leaves detached sessions behind. So that nobody is locked out by their own closed tabs, a new
tab (``a2ui.init`` without ``session_id``) of a person takes over that person's most recently
detached session with the same agent (as a resume: same session, snapshot re-sent), and at the
limit the person's oldest detached sessions with that agent are closed to make room.

Everything here is decided in one transaction holding the agent row's lock, so two processes
(two tabs opening at once) are serialized; the take-over and the closes are conditional UPDATEs
too, so a resume on another process (which does not take the agent lock) cannot be overtaken.
"""

from dataclasses import dataclass, field
from datetime import timedelta

from channels.db import database_sync_to_async
from django.db import transaction
from django.utils import timezone

from ..core.closes import CloseCode
from ..core.errors import DomainError, Fault
from ..models import A2UISessionLog, Agent
from . import audit
from .sessions import (
    LIVE,
    State,
    _announce_close,
    _idle_limit,
    _resume_cutoff,
    close_session,
    record_rejected,
)

REPLACED_REASON = "Replaced by a new session of the same person (session limit)."
LIMIT_REASON = "Agent has reached its concurrent session limit."
#: A refusal at the limit is recorded once per person and agent in this many seconds.
REJECTION_RECORD_SECONDS = 60


@dataclass
class Opened:
    """What ``admit`` decided: the session (None when refused), whether it is a detached session
    of the same person taken over, and the sessions it closed to make room (to announce)."""

    session: A2UISessionLog | None
    resumed: bool = False
    closed: list = field(default_factory=list)
    limit: int = 0


def admit(token, client_info, capabilities, *, reuse=False):
    """Open a session for the token's person and agent, within the agent's limit.

    1. ``reuse`` (a new tab): the person's most recently detached session with this agent that
       is still resumable (detached within the resume window, not idle past the inactivity
       timeout) is taken over: ``Opened.resumed`` is True.
    2. Otherwise a new session. At the limit, the person's detached sessions with this agent,
       oldest first, are closed to make room (``REPLACED_REASON``, audited as ``session.closed``).
    3. If that is not enough (the limit is taken by attached sessions, or by other people's),
       it is refused: ``Opened.session`` is None and nothing was changed.
    """
    closed = []
    with transaction.atomic():
        agent = None
        if token.agent_id is not None:
            agent = Agent.objects.select_for_update().get(pk=token.agent_id)
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
            limit = agent.session_limit()
            live = A2UISessionLog.objects.filter(agent=agent, state__in=LIVE).count()
            if live >= limit:
                mine = list(
                    A2UISessionLog.objects.filter(
                        agent=agent, user_id=token.user_id, state__in=LIVE,
                        detached_at__isnull=False,
                    ).order_by("detached_at").values_list("pk", flat=True)[: live - limit + 1]
                )
                if live - len(mine) >= limit:
                    return Opened(None, limit=limit)
                for pk in mine:
                    result = close_session(pk, State.CLOSED, REPLACED_REASON, still_detached=True)
                    if result is None:  # resumed meanwhile on another process: refuse, undo
                        transaction.set_rollback(True)
                        return Opened(None, limit=limit)
                    closed.append(result)
        session = A2UISessionLog.objects.create(
            agent=agent,
            user=token.user,
            token=token,
            state=State.INITIALIZED,
            client_info=client_info,
            capabilities=capabilities,
        )
        audit.record(
            "session.open", actor=token.user, agent=agent, target=session,
            session_id=session.session_id, details={"client": client_info.get("name", "")},
        )
    return Opened(session, closed=closed)


def _take_over_detached(token, now):
    """Claim the person's most recently detached, still resumable session with this agent.

    The claim is a conditional UPDATE (still live, still detached within the window): of two
    claims of one session, one wins, the other tries the next candidate.
    """
    cutoff = _resume_cutoff(now)
    candidates = A2UISessionLog.objects.filter(
        user_id=token.user_id, agent_id=token.agent_id, state__in=LIVE,
        detached_at__gte=cutoff, last_activity__gte=now - _idle_limit(),
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


def _admit_or_record(token, client_info, capabilities, reuse):
    opened = admit(token, client_info, capabilities, reuse=reuse)
    if opened.session is None:
        record_limit_rejection(token, client_info, capabilities)
    return opened


async def aadmit(token, client_info, capabilities, *, reuse=False):
    """``admit`` for consumers: announces the sessions closed to make room (their agent gets
    ``session.closed``), then returns ``(session, resumed)`` or raises -32007."""
    opened = await database_sync_to_async(_admit_or_record)(
        token, client_info, capabilities, reuse
    )
    return await aannounce(opened)


async def aannounce(opened):
    """What ``aadmit`` does after ``admit``: the closes announced, then ``(session, resumed)``
    or -32007."""
    for session, cancelled in opened.closed:
        await _announce_close(
            session, cancelled, State.CLOSED, REPLACED_REASON,
            CloseCode.SESSION_NOT_FOUND,
        )
    if opened.session is None:
        raise DomainError(Fault.MAX_SESSIONS, data={"limit": opened.limit})
    return opened.session, opened.resumed
