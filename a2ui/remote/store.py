"""The remote agents' rows (``a2ui.remote.models``): registration, the per-process view of
which agents are remote, and the runs' queue. Synchronous ORM code, run on the database pool
by the runtime (``port.db``); every change of a run's status is one conditional UPDATE, so two
processes racing for a run cannot both win.
"""

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from a2ui.models import A2UISessionLog, Agent, Surface
from a2ui.remote.models import RemoteAgent, RemoteRun

Status = RemoteRun.Status
LIVE = A2UISessionLog.LIVE_STATES
ENDED = (Status.FINISHED, Status.ERROR, Status.INTERRUPTED, Status.CANCELLED, Status.MERGED)


def remote_agents():
    """``{agent_id: {...}}`` of every active remote agent (the runtime's per-process cache)."""
    out = {}
    rows = RemoteAgent.objects.filter(agent__is_active=True).select_related("agent")
    for r in rows:
        out[r.agent_id] = {
            "agent_id": r.agent_id, "name": r.agent.name, "label": r.agent.label,
            "kind": r.kind, "url": r.url, "in_process": r.in_process,
            "sealed_headers": r.sealed_headers, "config": r.config or {},
            "max_runs": r.max_concurrent_runs, "agent": r.agent,
        }
    return out


def session_person(session_id):
    """(user id, username, client_info) of a session, or None."""
    row = (A2UISessionLog.objects.filter(pk=session_id).select_related("user")
           .only("user__username", "client_info", "state").first())
    if row is None:
        return None
    return (row.user_id, row.user.get_username() if row.user else None, row.client_info or {},
            row.state in LIVE)


def surface_ids(session_id):
    return set(Surface.objects.filter(session_id=session_id)
               .values_list("surface_id", flat=True))


# The queue ------------------------------------------------------------------------------------


class QueueFull(Exception):
    pass


def enqueue(session_id, agent_id, run_id, turn, max_queued):
    """A person's turn queued for the session's agent; QueueFull beyond ``max_queued``."""
    waiting = RemoteRun.objects.filter(session_id=session_id, status=Status.QUEUED).count()
    if waiting >= max_queued:
        raise QueueFull(waiting)
    return RemoteRun.objects.create(session_id=session_id, agent_id=agent_id, run_id=run_id,
                                    turn=turn, status=Status.QUEUED)


def running(session_id):
    return RemoteRun.objects.filter(session_id=session_id, status=Status.RUNNING).first()


def claim_next(session_id, holder):
    """The session's oldest queued turn, now running here (``holder``), or None when another
    run is running or nothing is queued. Text turns queued behind it are taken with it (the
    transcript holds them all: one run answers them) and marked ``merged``."""
    queued = list(RemoteRun.objects.filter(session_id=session_id, status=Status.QUEUED)
                  .order_by("created_at", "id")[:20])
    if not queued:
        return None
    first = queued[0]
    merged = []
    if first.turn.get("type") == "text":
        for row in queued[1:]:
            if row.turn.get("type") != "text":
                break
            merged.append(row)
    now = timezone.now()
    try:
        with transaction.atomic():
            taken = RemoteRun.objects.filter(pk=first.pk, status=Status.QUEUED).update(
                status=Status.RUNNING, holder=holder, started_at=now)
            if not taken:
                return None
            if merged:
                RemoteRun.objects.filter(pk__in=[r.pk for r in merged],
                                         status=Status.QUEUED).update(
                    status=Status.MERGED, ended_at=now, outcome={"merged_into": first.run_id})
                last = merged[-1].turn
                if last.get("agui1"):
                    first.turn = {**first.turn, "agui1": last["agui1"]}
                    RemoteRun.objects.filter(pk=first.pk).update(turn=first.turn)
    except IntegrityError:  # another run of the session is running
        return None
    first.status, first.holder, first.started_at = Status.RUNNING, holder, now
    return first


def end(pk, status, outcome=None, ids=None, asks=None, from_status=Status.RUNNING):
    """End a run that is still ``from_status``; True if this call did."""
    fields = {"status": status, "outcome": outcome or {}, "ended_at": timezone.now()}
    if ids is not None:
        fields["ids"] = ids
    if asks is not None:
        fields["asks"] = asks
    return bool(RemoteRun.objects.filter(pk=pk, status=from_status).update(**fields))


def add_ask(pk, request_id, resume):
    """Keep a question of the run (``asks``), before the person is shown it."""
    with transaction.atomic():
        row = RemoteRun.objects.select_for_update().only("asks").get(pk=pk)
        row.asks = {**(row.asks or {}), request_id: resume}
        row.save(update_fields=["asks"])


def set_ids(pk, ids):
    RemoteRun.objects.filter(pk=pk).update(ids=ids)


def thread_ids(session_id):
    """What the session's latest runs kept (``RunIds``), merged oldest to newest."""
    out = {}
    rows = (RemoteRun.objects.filter(session_id=session_id).exclude(ids={})
            .order_by("-created_at", "-id").values_list("ids", flat=True)[:10])
    for ids in reversed(list(rows)):
        if isinstance(ids, dict):
            out.update(ids)
    return out


def asked(session_id, request_id):
    """The run that asked ``request_id`` (its row), or None."""
    return (RemoteRun.objects.filter(session_id=session_id, asks__has_key=request_id)
            .order_by("-created_at").first())


def cancel_queued(session_id, reason):
    return RemoteRun.objects.filter(session_id=session_id, status=Status.QUEUED).update(
        status=Status.CANCELLED, ended_at=timezone.now(), outcome={"reason": reason})


def running_rows(started_before, limit=200):
    """Running runs started before ``started_before``: (pk, session, run_id, agent, holder)."""
    return list(RemoteRun.objects.filter(status=Status.RUNNING, started_at__lt=started_before)
                .values_list("pk", "session_id", "run_id", "agent_id", "holder")[:limit])


def stale_queues(created_before, limit=100):
    """Sessions with a turn queued since before ``created_before`` and no run running."""
    busy = RemoteRun.objects.filter(status=Status.RUNNING).values("session_id")
    return list(RemoteRun.objects.filter(status=Status.QUEUED, created_at__lt=created_before)
                .exclude(session_id__in=busy).values_list("session_id", flat=True)
                .distinct()[:limit])


def held_by(holder, session_id=None):
    rows = RemoteRun.objects.filter(status=Status.RUNNING, holder=holder)
    if session_id is not None:
        rows = rows.filter(session_id=session_id)
    return list(rows.values_list("pk", "run_id"))


def run_holder(session_id):
    """(run_id, holder) of the session's running run, or None."""
    return (RemoteRun.objects.filter(session_id=session_id, status=Status.RUNNING)
            .values_list("run_id", "holder").first())


# Registration ---------------------------------------------------------------------------------


def register(agent, kind, url="", headers=None, config=None, in_process="",
             max_runs=None):
    """Give ``agent`` a transport (create or replace it). ``headers`` (name -> value) are
    sealed; None keeps the stored ones."""
    from a2ui.remote import secrets

    with transaction.atomic():
        remote = RemoteAgent.objects.select_for_update().filter(agent=agent).first()
        if remote is None:
            remote = RemoteAgent(agent=agent)
        remote.kind, remote.url, remote.in_process = kind, url, in_process
        remote.config = config or {}
        if headers is not None:
            remote.sealed_headers = secrets.seal(headers)
            remote.header_names = sorted(headers)
        if max_runs is not None:
            remote.max_concurrent_runs = max_runs
        remote.updated_at = timezone.now()
        remote.save()
    return remote


def find(name):
    return Agent.objects.filter(Q(name=name)).select_related("remote").first()
