"""Session lifecycle (seed 000 section 6): open, resume, detach, close, time out, terminate.

A session outlives its sockets: a client that reconnects (after a network drop, a reload, or the
death of the process that held its socket) resumes it with ``session_id`` in ``a2ui.init``. A
session whose sockets are all gone is closed after ``RESUME_WINDOW_SECONDS``; any session idle
longer than ``SESSION_INACTIVITY_TIMEOUT_SECONDS`` times out.
"""

import time
import uuid
from dataclasses import dataclass, field
from datetime import timedelta

from channels.db import database_sync_to_async
from django.utils import timezone

from a2ui.compliance import audit
from a2ui.conf import a2ui_settings
from a2ui.consent import choices as consent
from a2ui.core.errors import DomainError, Fault
from a2ui.core.events import Notice
from a2ui.core.states import SESSIONS
from a2ui.infra import dbthreads, shared
from a2ui.models import A2UISessionLog, PendingRequest, RenderedComponent, Surface
from a2ui.requests import pending
from a2ui.sessions import agentroute, ghosts
from a2ui.sessions import sql as session_sql
from a2ui.sessions.counters import buffer
from a2ui.surfaces import activity

State = A2UISessionLog.State
LIVE = A2UISessionLog.LIVE_STATES


@dataclass
class Snapshot:
    """What a resuming client must see again: components, open requests, surfaces, and the
    activity (``a2ui.core.activity.to_dict``: state document, transcript, tool calls, plans,
    tree, roster, artifacts)."""

    components: list = field(default_factory=list)
    requests: list = field(default_factory=list)
    surfaces: list = field(default_factory=list)
    activity: dict = field(default_factory=dict)


def parse_session_id(value):
    """The session UUID, or -32000 for anything that is not one."""
    return _parse_uuid(value)


def _parse_uuid(value):
    try:
        return uuid.UUID(str(value))
    except (ValueError, TypeError, AttributeError):
        raise DomainError(
            Fault.SESSION_NOT_FOUND, data={"session_id": str(value)[:64]}
        ) from None


def idle_limit():
    return timedelta(seconds=a2ui_settings.SESSION_INACTIVITY_TIMEOUT_SECONDS)


# Opening ---------------------------------------------------------------------------------------

#: Why the sweep closes a session whose sockets all left and that was not resumed in time.
GONE_REASON = "Disconnected and not resumed."


def resume_cutoff(now):
    return now - timedelta(seconds=a2ui_settings.RESUME_WINDOW_SECONDS)


def record_rejected(token, reason, client_info=None, capabilities=None):
    """Keep a refused session (seed section 6.1 'Rejected') for operators to see.

    Only refusals of a real, once-valid token are recorded: garbage credentials are logged,
    not stored, so they cannot fill the table.
    """
    now = timezone.now()
    session = A2UISessionLog.objects.create(
        agent_id=token.agent_id, user_id=token.user_id, token=token, state=State.REJECTED,
        client_info=client_info or {}, capabilities=capabilities or {},
        closed_at=now, close_reason=reason[:200],
    )
    audit.record("session.reject", actor=token.user, agent=token.agent, target=session,
                 session_id=session.session_id, details={"reason": reason})
    return session


arecord_rejected = database_sync_to_async(record_rejected)


def live_components(session_id, now=None):
    """The session's live components in render order. Those past their ttl are left out; the
    sweep deletes them and says so (component.removed, services.components.aexpire_due)."""
    now = now or timezone.now()
    return [
        {
            "component_id": c.component_id,
            "component_type": c.component_type,
            "data": c.data,
            "metadata": c.metadata,
            "expires_at": c.expires_at,
        }
        for c in RenderedComponent.objects.filter(session_id=session_id)
        .exclude(expires_at__lte=now).order_by("position")
    ]


def snapshot(session_id):
    """The session's current screen: live components in render order, pending requests."""
    now = timezone.now()
    components = live_components(session_id, now)
    requests = []
    for r in PendingRequest.objects.filter(
        session_id=session_id, status=PendingRequest.Status.PENDING, deadline__gt=now
    ):
        params = dict(r.params)
        params["timeout_seconds"] = max(1, int((r.deadline - now).total_seconds()))
        requests.append({"kind": r.kind, "params": params})
    surfaces = list(
        Surface.objects.filter(session_id=session_id).order_by("created_at", "id")
        .values_list("state", flat=True)
    )  # in creation order (a surface created again comes last), as surfaces.load gives them
    return Snapshot(components, requests, surfaces, activity.load(session_id))


asnapshot = dbthreads.wrap(snapshot)  # a read: on the pool, beside the per-message work


# Lookups on the per-message path ---------------------------------------------------------------


def live_owner(session_id):
    """``(agent_id, user_id)`` of a live session, or None (the push's owner check:
    ``a2ui.push.admit``)."""
    return (
        A2UISessionLog.objects.filter(pk=session_id, state__in=LIVE)
        .values_list("agent_id", "user_id")
        .first()
    )


def live_sessions(agent):
    return [
        {
            "session_id": str(s.session_id),
            "user": s.user.get_username() if s.user else None,
            "state": s.state,
            "client_info": s.client_info,
            "created_at": s.created_at.isoformat(),
        }
        for s in A2UISessionLog.objects.filter(agent=agent, state__in=LIVE).select_related("user")
    ]


alive_sessions = database_sync_to_async(live_sessions)


#: The most live sessions a connecting agent socket is told of (the newest first); the rest
#: are listed by ``a2ui.sessions``.
ANNOUNCE_LIMIT = 100


def _announcements(agent_id, before):
    rows = (A2UISessionLog.objects.filter(agent_id=agent_id, state__in=LIVE,
                                          created_at__lt=before)
            .select_related("user").order_by("-created_at")[:ANNOUNCE_LIMIT])
    missing = {}
    out = []
    for s in rows:
        if s.user_id not in missing:
            missing[s.user_id] = consent.missing_types(s.user_id) if s.user_id else []
        out.append({"session_id": str(s.session_id),
                    "user": s.user.get_username() if s.user else None,
                    "client_info": s.client_info, "capabilities": s.capabilities,
                    "consents_missing": list(missing[s.user_id])})
    return out[::-1]  # oldest first, as they opened


async def aannouncements(agent_id, channel, mode, before):
    """The live sessions of the agent a socket (or listener) ``channel`` that just connected is
    told of, as ``session.resumed`` params (oldest first): those no other open socket of the
    agent holds, which ``channel`` now holds (``agentroute``), so that an agent started after
    its people opened their pages, or restarted, finds its work, and a second process of the
    agent is not told of the first's sessions. An observer (``events="all"``) is told of all.
    ``before``: when the socket began to get the agent's events; a session opened since then
    is told by its own ``session.opened``, not twice."""
    found = await database_sync_to_async(_announcements)(agent_id, before)
    return [params for params in found if await agentroute.atake(
        agent_id, channel, mode, {"method": "session.resumed", "params": params})]


class ToldOnce:
    """Each session told once to an agent socket (or listener) as it connects.

    The person's socket tells the agent ``session.opened`` (or ``resumed``) after it answers
    ``a2ui.init``; an agent socket that connects in between is handed that notice by its relay
    and finds the session among its :func:`aannouncements` too. Whichever comes first is told:
    :meth:`announce` drops the sessions whose notice came first, and :meth:`relayed` drops the
    notice of an announced session whose person's socket connected before the agent's socket
    began to listen (``since``: the notice's ``since``, ``listening``: the agent's, wall clock).
    A notice of a socket that connected later (a reload, a resume on another process) is told.
    Holds the ids of the connect's notices until the announcements are sent, then the
    announced ids (``ANNOUNCE_LIMIT`` at most) for ``REPEAT_SECONDS``."""

    METHODS = frozenset({Notice.SESSION_OPENED, Notice.SESSION_RESUMED})
    REPEAT_SECONDS = 60.0  # a repeat is on its way as the socket connects; this bounds memory

    def __init__(self, listening):
        self.listening = listening
        self.early = set()  # told by the relay before the announcements were sent
        self.announced = None  # then: the ids announced
        self.until = 0.0

    def relayed(self, event):
        """False for the repeat of a session's announcement (``event``: the relay's)."""
        if event.get("method") not in self.METHODS:
            return True
        sid = (event.get("params") or {}).get("session_id")
        if self.announced is None:
            self.early.add(sid)
            return True
        if self.announced and time.monotonic() > self.until:
            self.announced = set()
        if sid in self.announced and event.get("since", self.listening) < self.listening:
            self.announced.discard(sid)
            return False
        return True

    def announce(self, found):
        told = [params for params in found if params["session_id"] not in self.early]
        self.announced, self.early = {params["session_id"] for params in told}, set()
        self.until = time.monotonic() + self.REPEAT_SECONDS
        return told


def person_sessions(user_id, agent_id):
    """The live sessions of a person with an agent (what a stream token of theirs may see)."""
    return [
        {"session_id": s.session_id, "client_info": s.client_info,
         "capabilities": s.capabilities, "created_at": s.created_at.isoformat()}
        for s in A2UISessionLog.objects.filter(
            user_id=user_id, agent_id=agent_id, state__in=LIVE).order_by("created_at")
    ]


aperson_sessions = database_sync_to_async(person_sessions)


# Detaching and closing -------------------------------------------------------------------------


def detach_sessions(session_ids):
    """Mark the live sessions among ``session_ids`` detached (their last socket went away):
    one statement. Returns a None per id."""
    now = timezone.now()
    if dbthreads.vendor() == "postgresql":
        session_sql.detach(session_ids, now)
    else:
        A2UISessionLog.objects.filter(pk__in=list(session_ids), state__in=LIVE).update(
            detached_at=now)
    return [None] * len(session_ids)


def detach_session(session_id):
    detach_sessions([session_id])


# On the per-message pool (``dbthreads``), not the one thread-sensitive thread, and batched: a
# mass close (a load balancer's restart, 10,000 sockets at once) detaches hundreds of sessions
# in one statement (docs/performance.md, "Closing many sockets at once").
adetach_session = dbthreads.batched(detach_sessions)


async def asocket_opened(session_id, fresh=False):
    """A socket (any protocol) now shows this session; returns the epoch it is counted under.

    ``fresh``: the session was created for this socket (no other socket can show it yet).
    """
    return await shared.socket_opened(_parse_uuid(session_id).hex, fresh)


async def asocket_closed(session_id, epoch=None):
    """A socket of the session went away; the session is detached when it was the last.

    ``epoch`` is what ``asocket_opened`` returned (None: the current one). When the count it
    was in is gone (Redis lost it), the session's client registry says whether a client still
    shows it (``a2ui.sessions.ghosts``): detached when none does.
    """
    remaining = await shared.socket_closed(_parse_uuid(session_id).hex, epoch)
    if remaining is None:  # the count is gone: the client registry says whether one is left
        await ghosts.adetach_if_ghost(_parse_uuid(session_id))
    elif remaining <= 0:
        await adetach_session(session_id)


def close_session(session_id, state=State.CLOSED, reason="", actor=None, *,
                  still_detached=False, past_window=False):
    """End a live session: record why, cancel its open requests. Returns None if not live.

    ``still_detached``: only if no socket came back (``detached_at`` still set); with
    ``past_window`` also only if that was more than ``RESUME_WINDOW_SECONDS`` ago (the sweep).
    The caller notifies sockets and agents (``aclose_session`` does both).
    """
    buffer.flush_sync(session_id)
    now = timezone.now()
    event = SESSIONS.into(str(state))  # close, time_out or reject
    rows = A2UISessionLog.objects.filter(pk=session_id, state__in=SESSIONS.sources(event))
    if still_detached or past_window:
        rows = rows.filter(detached_at__isnull=False)
    if past_window:
        rows = rows.filter(detached_at__lt=resume_cutoff(now))
    updated = rows.update(state=SESSIONS.target(event), closed_at=now,
                          close_reason=reason[:200])
    if not updated:
        return None
    session = A2UISessionLog.objects.select_related("agent").get(pk=session_id)
    cancelled = pending.cancel_open(session_id, now)
    audit.record(
        "session.terminate" if actor is not None else f"session.{state}",
        actor=actor, agent=session.agent, target=session, session_id=session.session_id,
        details={"reason": reason, "state": state},
    )
    return session, cancelled


# Housekeeping ----------------------------------------------------------------------------------


def due_for_closing():
    """Sessions idle past the limit, and detached sessions past the resume window.

    A detached session closes ``RESUME_WINDOW_SECONDS`` after its last socket left, whatever
    its agent pushes meanwhile: ``last_activity`` does not keep it open.
    """
    now = timezone.now()
    idle = list(
        A2UISessionLog.objects.filter(
            state__in=LIVE, last_activity__lt=now - idle_limit()
        ).values_list("pk", flat=True)
    )
    gone = list(
        A2UISessionLog.objects.filter(state__in=LIVE, detached_at__lt=resume_cutoff(now))
        .exclude(pk__in=idle)
        .values_list("pk", flat=True)
    )
    return idle, gone


def reattach(session_id):
    A2UISessionLog.objects.filter(pk=session_id, state__in=LIVE).update(detached_at=None)


