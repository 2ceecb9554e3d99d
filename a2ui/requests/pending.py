"""Pending input and confirm requests, resolvable by whichever process hears the answer.

A PendingRequest row holds the request, its deadline and the channel that awaits it. Answer,
timeout and session close all race through one conditional UPDATE on ``status='pending'``:
exactly one of them wins, and only the winner notifies the waiter.

The outcome is stored with the row and counts as delivered only once an agent took it: the
waiting socket (or Python API call) claims it with a conditional UPDATE on
``delivered_at IS NULL`` before passing it on, so an outcome whose waiter died (its process
was killed) stays in the database. An agent that comes back takes over what waits for it
(``take_over``): open requests are re-pointed to its channel, undelivered outcomes are claimed
and handed to it, each exactly once whichever sockets and processes race for it.

A request is also its own idempotency key: asking again with the same ``request_id``, the same
kind and the same params (``ask``; compared by ``content_hash``, stored with the row) is a
retry, not a second question. The retry waits on the request if it is still open, or gets its
outcome at once if it has one (again, if a waiter that died took it first); another request
under a ``request_id`` already used in the session is refused.
"""

import hashlib
import json
from collections import namedtuple
from datetime import timedelta

from channels.db import database_sync_to_async
from django.db import IntegrityError
from django.db.models import Count
from django.utils import timezone

from a2ui.conf import a2ui_settings
from a2ui.core.errors import DomainError, Fault
from a2ui.core.states import REQUESTS
from a2ui.infra import dbthreads, sql
from a2ui.models import A2UISessionLog, PendingRequest
from a2ui.requests import sql as request_sql
from a2ui.surfaces import components

Status = PendingRequest.Status
KIND_BY_METHOD = {"ui.request_input": PendingRequest.KIND_INPUT, "ui.confirm": PendingRequest.KIND_CONFIRM}
METHOD_BY_KIND = {v: k for k, v in KIND_BY_METHOD.items()}
ANSWER_METHOD = {PendingRequest.KIND_INPUT: "user.respond", PendingRequest.KIND_CONFIRM: "user.approve"}
LIVE = A2UISessionLog.LIVE_STATES
MOVED = "moved"  # the outcome event an old waiter gets when another one took its request over
#: The answer stored with a request the person cancelled (``acancel``); a request cancelled
#: because its session closed has none. Every agent path tells them apart: ``cancelled_by``.
PERSON_CANCEL = {"cancelled_by": "person"}
LIST_LIMIT = 100  # of each: outcomes, open requests (outcomes taken leave room for more)


def timeout_for(kind, params):
    if kind == PendingRequest.KIND_CONFIRM:
        return params.get("timeout_seconds") or a2ui_settings.CONFIRM_TIMEOUT_SECONDS
    return params.get("timeout_seconds") or a2ui_settings.INPUT_TIMEOUT_SECONDS


def content_hash(kind, params):
    """SHA-256 (hex) of a request's kind and params as canonical JSON (keys sorted, no spaces):
    what a retry must repeat, whatever order its keys came in."""
    text = json.dumps([kind, params], sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False, allow_nan=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class RequestIdUsed(DomainError):
    """-32602: the session has a request under this request_id (``existing``)."""

    def __init__(self, existing, message="request_id already used in this session"):
        super().__init__(Fault.INVALID_INPUT, message, data={"path": "params.request_id"})
        self.existing = existing


def create(session_id, kind, params, reply_channel="", rpc_id=None):
    """Store a new pending request; a request_id already used in the session is -32602
    (``RequestIdUsed``)."""
    now = timezone.now()
    try:
        return sql.insert(PendingRequest(
            session_id=session_id,
            request_id=params["request_id"],
            kind=kind,
            params=params,
            content_hash=content_hash(kind, params),
            deadline=now + timedelta(seconds=timeout_for(kind, params)),
            reply_channel=reply_channel,
            rpc_id=rpc_id,
            created_at=now,
        ))
    except IntegrityError:
        existing = request_sql.request(session_id, params["request_id"])
        if existing is None:  # the session was deleted
            raise DomainError(Fault.SESSION_NOT_FOUND,
                              data={"session_id": str(session_id)}) from None
        raise RequestIdUsed(existing) from None


#: What ``ask`` did: the request's row, whether it is new, the old waiters to tell they lost it
#: (``(channel, rpc id, row)``), and whether this call timed the request out (its deadline had
#: passed: the person's clients must hear it closed).
Asked = namedtuple("Asked", "row new moved expired")


def ask(session_id, kind, params, reply_channel="", rpc_id=None):
    """Open a request for the waiter on ``reply_channel``, or take up a retry of it.

    A new ``request_id``: the row is stored (``create``). The same request again (same kind
    and params: ``content_hash``) is a retry: the request is not asked again; if it is still
    open its waiter becomes the caller (the old one is told ``MOVED``), and if it has an
    outcome the caller is to get it (``aretried`` sends it), even if another waiter took it
    before (it may have died with it). Another request under a used ``request_id`` is -32602.
    """
    try:
        return Asked(create(session_id, kind, params, reply_channel, rpc_id), True, [], False)
    except RequestIdUsed as exc:
        existing = exc.existing
    stored = existing.content_hash or content_hash(existing.kind, existing.params)
    if existing.kind != kind or stored != content_hash(kind, params):
        raise RequestIdUsed(existing, "request_id already used in this session by another "
                                      "request (a retry must repeat the same request)")
    return _retake(existing, reply_channel, rpc_id)


def _retake(row, channel, rpc_id):
    moved, expired = [], False
    if row.status == Status.PENDING and row.deadline <= timezone.now():
        expired = _finish(row.session_id, row.request_id, row.kind, Status.TIMED_OUT) is not None
        row = request_sql.request(row.session_id, row.request_id)
    if row.status == Status.PENDING and _repoint(row, channel, moved, rpc_id, retry=True):
        return Asked(row, False, moved, expired)
    # Resolved (before or meanwhile): its outcome goes to this caller, who claims it.
    if not PendingRequest.objects.filter(pk=row.pk).exclude(status=Status.PENDING).update(
            reply_channel=channel, rpc_id=rpc_id, delivered_at=None):
        # Still open, and other waiters kept taking it (_repoint gave up): say so.
        raise DomainError(Fault.REQUEST_TAKEN_OVER, "Request taken over by another waiter",
                          data={"session_id": str(row.session_id),
                                "request_id": row.request_id})
    return Asked(request_sql.request(row.session_id, row.request_id), False, moved, expired)


def _finish(session_id, request_id, kind, status, answer=None):
    """The conditional UPDATE every outcome goes through; returns the row if this call won.

    An answer is taken only while some agent can still receive it: before the deadline, the
    session live and its agent not revoked (``deliverable``)."""
    return request_sql.finish_request(session_id, request_id, kind, status, answer, timezone.now(),
                                 deliverable=status == Status.ANSWERED, live_states=LIVE)


def answer(session_id, request_id, kind, value):
    """Record the user's answer, or explain why it cannot be taken."""
    row = _finish(session_id, request_id, kind, Status.ANSWERED, value)
    if row is not None:
        return row
    existing = request_sql.request(session_id, request_id)
    if existing is None or existing.kind != kind:
        raise DomainError(
            Fault.INVALID_INPUT, "Unknown request_id", data={"path": "params.request_id"}
        )
    if existing.status == Status.PENDING and existing.deadline > timezone.now():
        # Live request, but no agent can ever get the answer: say so instead of "ok".
        raise DomainError(
            Fault.SESSION_NOT_FOUND, "The agent can no longer receive this answer",
            data={"request_id": request_id},
        )
    if existing.status == Status.PENDING or existing.status == Status.TIMED_OUT:
        if existing.status == Status.PENDING:  # past its deadline: the timeout wins
            _finish(session_id, request_id, kind, Status.TIMED_OUT)
        raise DomainError(Fault.REQUEST_TIMEOUT, data={"request_id": request_id})
    raise DomainError(
        Fault.INVALID_INPUT,
        f"Request already {existing.status}",
        data={"path": "params.request_id"},
    )


def cancelled_by(value):
    """Who cancelled a ``cancelled`` request, from its outcome value: ``"person"`` (the
    person cancelled it) or ``"session"`` (its session closed first)."""
    return "person" if value == PERSON_CANCEL else "session"


def outcome_value(row):
    if row.kind == PendingRequest.KIND_CONFIRM:
        if row.status == Status.TIMED_OUT:
            return {"approved": False, "reason": "timeout"}
    return row.answer


def settle(session_id, request_id, kind, value):
    """``answer``, safe to repeat: ``(row, True)`` when this call's answer was taken, ``(row,
    False)`` when the request had closed before (its ``status`` and ``answer`` say how: the
    same answer again is a repeat, another one came first, or it timed out or was cancelled).
    An unknown request, another kind, or an open request no agent can receive: ``answer``'s
    errors."""
    row = _finish(session_id, request_id, kind, Status.ANSWERED, value)
    if row is not None:
        return row, True
    existing = request_sql.request(session_id, request_id)
    if existing is not None and existing.kind == kind and existing.status != Status.PENDING:
        return existing, False
    return answer(session_id, request_id, kind, value), True


def respond(session_id, request_id, value):
    """``user.respond``: None when ``request_id`` names a rendered form component (its
    submission goes to the agent as it is), else ``answer`` to the input request."""
    if components.is_form(session_id, request_id):
        return None
    return answer(session_id, request_id, PendingRequest.KIND_INPUT, value)


def open_request(session_id, request_id):
    """The request if it is still open (pending, before its deadline), else None."""
    return PendingRequest.objects.filter(
        session_id=session_id, request_id=request_id, status=Status.PENDING,
        deadline__gt=timezone.now()).first()


aopen_request = database_sync_to_async(open_request)


def open_requests(session_id):
    """The session's open requests (pending, before their deadline), oldest first, at most
    ``LIST_LIMIT``: each as its ``request.opened`` event's data ``{kind, params}``, so a
    stream that starts shows them exactly as it shows one asked while it streams."""
    rows = PendingRequest.objects.filter(
        session_id=session_id, status=Status.PENDING, deadline__gt=timezone.now(),
    ).order_by("created_at", "pk").values_list("kind", "params")[:LIST_LIMIT]
    return [{"kind": kind, "params": params} for kind, params in rows]


aopen_requests = dbthreads.wrap(open_requests)


def cancel_open(session_id, now):
    """Cancel the session's open requests (its end: ``a2ui.sessions.lifecycle.close_session``);
    returns what their waiters need to be told (``request_id``, ``reply_channel``, ``rpc_id``,
    ``kind`` of each)."""
    event = "cancel"
    rows = PendingRequest.objects.filter(session_id=session_id,
                                         status__in=REQUESTS.sources(event))
    cancelled = list(rows.values("request_id", "reply_channel", "rpc_id", "kind"))
    rows.update(status=REQUESTS.target(event), resolved_at=now)
    return cancelled


def overdue():
    return list(
        PendingRequest.objects.filter(status=Status.PENDING, deadline__lte=timezone.now())
        .values_list("session_id", "request_id")[:500]
    )


# Delivery to agents ---------------------------------------------------------------------------


def claim(session_id, request_id, channel):
    """Mark an outcome delivered to the waiter on ``channel``; True if this call won it."""
    return bool(request_sql.claim_outcome(session_id, request_id, channel, timezone.now()))


# On the pool: every answer is claimed by the agent socket that waits for it, and that socket's
# next push waits for the claim; 300 answers in a row on the one thread-sensitive thread held
# every agent socket for seconds (docs/performance.md, soak).
aclaim = dbthreads.wrap(claim)


def _waiting(agent_id, session_id=None):
    """The agent's requests not delivered yet: undelivered outcomes, then open requests (live
    sessions), each oldest first."""
    now = timezone.now()
    qs = PendingRequest.objects.filter(session__agent_id=agent_id, delivered_at__isnull=True)
    if session_id is not None:
        qs = qs.filter(session_id=session_id)
    qs = qs.order_by("created_at", "pk")
    resolved = list(qs.exclude(status=Status.PENDING)[:LIST_LIMIT])
    open_ = list(qs.filter(status=Status.PENDING, session__state__in=LIVE, deadline__gt=now)
                 [:LIST_LIMIT])
    return resolved + open_


def undelivered_count(agent_id):
    """How many outcomes of the agent's requests no waiter received (told to a new socket)."""
    return PendingRequest.objects.filter(
        session__agent_id=agent_id, delivered_at__isnull=True
    ).exclude(status=Status.PENDING).count()


aundelivered_count = database_sync_to_async(undelivered_count)


def describe(row):
    """One waiting request as agents see it (``a2ui.pending``, REST, Python API)."""
    item = {
        "session_id": str(row.session_id),
        "request_id": row.request_id,
        "method": METHOD_BY_KIND[row.kind],
        "params": row.params,
        "status": row.status,
        "created_at": row.created_at.isoformat(),
        "deadline": row.deadline.isoformat(),
    }
    if row.status != Status.PENDING:
        item["resolved_at"] = row.resolved_at.isoformat() if row.resolved_at else None
        item["answer"] = outcome_value(row) if row.status != Status.CANCELLED else None
        if row.status == Status.CANCELLED:
            item["cancelled_by"] = cancelled_by(row.answer)
    return item


def listing(agent_id, session_id=None):
    """What waits for the agent, changing nothing (REST GET)."""
    return [describe(row) for row in _waiting(agent_id, session_id)]


alisting = database_sync_to_async(listing)


def take_over(agent_id, channel, session_id=None):
    """Hand what waits for the agent to the waiter on ``channel``; exactly once.

    Open requests are re-pointed to ``channel`` (their outcome will come there, as a
    notification: ``rpc_id`` is cleared); ``channel=""`` leaves them where they are. Undelivered
    outcomes are claimed for the caller, who passes them on. Open requests go first, so one
    resolved in between is either re-pointed here or claimed here. Returns ``(items, taken,
    moved)``: the items for the agent, the rows re-pointed, and ``(old channel, old rpc id,
    row)`` for each old waiter that must hear it lost the request.
    """
    now = timezone.now()
    taken, moved = [], []
    rows = _waiting(agent_id, session_id)
    if channel:
        for row in rows:
            if row.status == Status.PENDING and _repoint(row, channel, moved):
                taken.append(row)
    items, open_ids = [], {row.pk for row in rows if row.status == Status.PENDING}
    for row in rows:
        if row.pk in open_ids and row in taken:
            items.append(describe(row))
            continue
        if row.pk in open_ids and not channel:
            items.append(describe(row))
            continue
        # Resolved (before the listing or since): claim it, once, for this caller.
        if PendingRequest.objects.filter(pk=row.pk, delivered_at__isnull=True).exclude(
            status=Status.PENDING
        ).update(delivered_at=now):
            row.refresh_from_db()
            items.append(describe(row))
    return items, taken, moved


def _repoint(row, channel, moved, rpc_id=None, retry=False):
    """Point an open request at ``channel`` (and ``rpc_id``: None, its outcome is then a
    notification), conditional on the waiter it had, so that the waiter it really had (two
    takers racing) is the one told; False once it is resolved. A ``retry`` on the same channel
    tells the JSON-RPC id it replaces too."""
    for _ in range(10):
        qs = PendingRequest.objects.filter(
            pk=row.pk, status=Status.PENDING, reply_channel=row.reply_channel
        )
        if qs.update(reply_channel=channel, rpc_id=rpc_id):
            if row.reply_channel and (row.reply_channel != channel or (
                    retry and row.rpc_id is not None and row.rpc_id != rpc_id)):
                moved.append((row.reply_channel, row.rpc_id, row))
            row.reply_channel, row.rpc_id = channel, rpc_id
            return True
        current = PendingRequest.objects.filter(pk=row.pk, status=Status.PENDING).values(
            "reply_channel", "rpc_id").first()
        if current is None:
            return False  # resolved meanwhile: the caller claims the outcome instead
        row.reply_channel, row.rpc_id = current["reply_channel"], current["rpc_id"]
    return False


def open_counts():
    """``{kind: open requests}`` of every session (the metrics' gauge: one grouped count on an
    indexed column)."""
    counts = dict.fromkeys((PendingRequest.KIND_INPUT, PendingRequest.KIND_CONFIRM), 0)
    rows = (PendingRequest.objects.filter(status=Status.PENDING, deadline__gt=timezone.now())
            .values_list("kind").annotate(n=Count("pk")).order_by())
    counts.update(dict(rows))
    return counts
