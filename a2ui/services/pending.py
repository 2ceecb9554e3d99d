"""Pending input and confirm requests, resolvable by whichever process hears the answer.

A PendingRequest row holds the request, its deadline and the channel that awaits it. Answer,
timeout and session close all race through one conditional UPDATE on ``status='pending'``:
exactly one of them wins, and only the winner notifies the waiter.
"""

from datetime import timedelta

from channels.db import database_sync_to_async
from django.db import IntegrityError, transaction
from django.utils import timezone

from ..conf import a2ui_settings
from ..models import PendingRequest
from ..protocol.errors import ErrorCode, ProtocolError
from . import dbthreads, groups
from .metrics import buffer

Status = PendingRequest.Status
KIND_BY_METHOD = {"ui.request_input": PendingRequest.KIND_INPUT, "ui.confirm": PendingRequest.KIND_CONFIRM}
METHOD_BY_KIND = {v: k for k, v in KIND_BY_METHOD.items()}
ANSWER_METHOD = {PendingRequest.KIND_INPUT: "user.respond", PendingRequest.KIND_CONFIRM: "user.approve"}


def timeout_for(method, params):
    if method == "ui.confirm":
        return params.get("timeout_seconds") or a2ui_settings.CONFIRM_TIMEOUT_SECONDS
    return params.get("timeout_seconds") or a2ui_settings.INPUT_TIMEOUT_SECONDS


def create(session_id, method, params, reply_channel="", rpc_id=None):
    """Store a new pending request; a request_id already used in the session is -32602."""
    now = timezone.now()
    try:
        with transaction.atomic():
            return PendingRequest.objects.create(
                session_id=session_id,
                request_id=params["request_id"],
                kind=KIND_BY_METHOD[method],
                params=params,
                deadline=now + timedelta(seconds=timeout_for(method, params)),
                reply_channel=reply_channel,
                rpc_id=rpc_id,
                created_at=now,
            )
    except IntegrityError:
        raise ProtocolError(
            ErrorCode.INVALID_PARAMS,
            "request_id already used in this session",
            data={"path": "params.request_id"},
        ) from None


def _finish(session_id, request_id, kind, status, answer=None):
    """The conditional UPDATE every outcome goes through; returns the row if this call won."""
    now = timezone.now()
    qs = PendingRequest.objects.filter(
        session_id=session_id, request_id=request_id, status=Status.PENDING
    )
    if kind is not None:
        qs = qs.filter(kind=kind)
    if status == Status.ANSWERED:
        qs = qs.filter(deadline__gt=now)
    if not qs.update(status=status, answer=answer, resolved_at=now):
        return None
    return PendingRequest.objects.get(session_id=session_id, request_id=request_id)


def answer(session_id, request_id, kind, value):
    """Record the user's answer, or explain why it cannot be taken."""
    row = _finish(session_id, request_id, kind, Status.ANSWERED, value)
    if row is not None:
        return row
    existing = PendingRequest.objects.filter(session_id=session_id, request_id=request_id).first()
    if existing is None or existing.kind != kind:
        raise ProtocolError(
            ErrorCode.INVALID_PARAMS, "Unknown request_id", data={"path": "params.request_id"}
        )
    if existing.status == Status.PENDING or existing.status == Status.TIMED_OUT:
        if existing.status == Status.PENDING:  # past its deadline: the timeout wins
            _finish(session_id, request_id, kind, Status.TIMED_OUT)
        raise ProtocolError(ErrorCode.REQUEST_TIMEOUT, data={"request_id": request_id})
    raise ProtocolError(
        ErrorCode.INVALID_PARAMS,
        f"Request already {existing.status}",
        data={"path": "params.request_id"},
    )


def _outcome_value(row):
    if row.kind == PendingRequest.KIND_CONFIRM:
        if row.status == Status.TIMED_OUT:
            return {"approved": False, "reason": "timeout"}
    return row.answer


async def _notify(row):
    """Tell the waiter and every socket of the session that the request is over."""
    if row.reply_channel:
        await groups.send_channel(
            row.reply_channel,
            groups.answer_event(
                row.session_id, row.request_id, row.status, _outcome_value(row), row.rpc_id,
                row.kind,
            ),
        )
    await groups.send_group(
        groups.session_group(row.session_id),
        groups.push_event(
            None, "a2ui.request_closed",
            {"request_id": row.request_id, "status": row.status},
            None,
        ),
    )


async def aanswer(session_id, request_id, kind, value):
    row = await dbthreads.run(answer, session_id, request_id, kind, value)
    buffer.add(session_id)
    await _notify(row)
    return row


async def aexpire(session_id, request_id):
    """Time a request out if it is still pending; True if this call did it."""
    row = await database_sync_to_async(_finish)(session_id, request_id, None, Status.TIMED_OUT)
    if row is None:
        return False
    await _notify(row)
    return True


def overdue():
    return list(
        PendingRequest.objects.filter(status=Status.PENDING, deadline__lte=timezone.now())
        .values_list("session_id", "request_id")[:500]
    )


async def areap():
    """Expire requests whose waiter died before their deadline (run by every process)."""
    count = 0
    for session_id, request_id in await database_sync_to_async(overdue)():
        count += await aexpire(session_id, request_id)
    return count
