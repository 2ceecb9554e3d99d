"""Operator actions: terminate sessions, revoke stream tokens, agents and consents.

The admin calls these (sync code; the async services are reached through ``async_to_sync``).
Every action leaves an AuditEvent naming the operator, and every live socket it affects closes
within a second in whichever process holds it, through the channel layer:

* terminate: the session's sockets close with 4010 "Session terminated by an operator";
* stream token: the token is refused from now on; sockets opened with it close with 4011
  "Stream token revoked", and the live sessions it opened (or last resumed) are closed too, so a
  session cannot be carried on with a token the operator took away;
* agent: its key is refused from now on, its sockets close (4011), and every live session of the
  agent is closed with 4011 "Agent revoked";
* consent: see ``consent.revoke``; the person's sockets and the agents are told.

The "a2ui compliance" group and its permissions: ``a2ui.compliance.access``.
"""

from asgiref.sync import async_to_sync
from django.db import transaction
from django.utils import timezone

from a2ui.compliance import audit, person
from a2ui.consent import choices as consent
from a2ui.core.closes import CLOSE_REASONS, CloseCode
from a2ui.infra import groups
from a2ui.models import A2UIConsentRecord, A2UISessionLog, Agent, StreamToken
from a2ui.push import sessions as session_actions
from a2ui.sessions import agents

State = A2UISessionLog.State
TERMINATED_REASON = CLOSE_REASONS[CloseCode.TERMINATED]
TOKEN_REVOKED_REASON = "Stream token revoked"
AGENT_REVOKED_REASON = "Agent revoked"


async def _aclose_all(session_ids, reason, close_code, actor):
    closed = 0
    for sid in session_ids:
        closed += await session_actions.aclose_session(
            sid, State.CLOSED, reason, actor=actor, close_code=close_code
        )
    return closed


def _live_ids(queryset):
    return list(queryset.filter(state__in=A2UISessionLog.LIVE_STATES).values_list("pk", flat=True))


def terminate_sessions(session_ids, actor):
    """Close live sessions now (4010). Returns how many were live."""
    ids = _live_ids(A2UISessionLog.objects.filter(pk__in=list(session_ids)))
    return async_to_sync(_aclose_all)(ids, TERMINATED_REASON, CloseCode.TERMINATED, actor)


def revoke_tokens(jtis, actor):
    """Revoke stream tokens; returns (tokens revoked, sessions closed)."""
    now = timezone.now()
    with transaction.atomic():
        rows = list(
            StreamToken.objects.select_for_update(of=("self",), no_key=True)
            .filter(pk__in=list(jtis), revoked_at__isnull=True)
            .select_related("agent")
        )
        StreamToken.objects.filter(pk__in=[t.pk for t in rows]).update(
            revoked_at=now, revoked_by=actor
        )
    for token in rows:
        audit.record(
            "token.revoke", actor=actor, agent=token.agent, target=token,
            details={"user_id": token.user_id},
        )
    live = _live_ids(A2UISessionLog.objects.filter(token__in=[t.pk for t in rows]))

    async def run():
        for token in rows:
            await groups.send_group(
                groups.token_group(token.jti),
                groups.close_event(CloseCode.REVOKED, TOKEN_REVOKED_REASON),
            )
        return await _aclose_all(live, TOKEN_REVOKED_REASON, CloseCode.REVOKED, actor)

    closed = async_to_sync(run)()
    return len(rows), closed


def revoke_agents(agent_ids, actor):
    """Revoke agents (their key stops working); returns (agents revoked, sessions closed)."""
    rows = list(Agent.objects.filter(pk__in=list(agent_ids), is_active=True))
    for agent in rows:
        agents.revoke(agent, actor=actor)
    live = _live_ids(A2UISessionLog.objects.filter(agent__in=rows))
    closed = async_to_sync(_aclose_all)(live, AGENT_REVOKED_REASON, CloseCode.REVOKED, actor)
    return len(rows), closed


def revoke_consents(record_ids, actor):
    """Revoke consent records on their people's behalf; returns how many were in force."""
    records = A2UIConsentRecord.objects.filter(pk__in=list(record_ids))
    in_force = records.filter(granted=True, revoked_at__isnull=True).count()
    consent.revoke_and_notify(records, actor, on_behalf=True)
    return in_force


def record_export(actor, count, filters):
    """The audit trail export is itself audited."""
    return audit.record(
        "audit.export", actor=actor, target=("auditevent", ""),
        details={"rows": count, "filters": filters},
    )


def erase_person(user, *, actor=None, dry_run=False):
    """A person's erasure as an operator runs it (the admin, ``manage.py a2ui_person erase``):
    her stream tokens revoked and her live sessions terminated, each socket told in whichever
    process holds it, then what is held about her erased (``a2ui.compliance.person.erase``).
    A dry run only counts."""
    if dry_run:
        return person.erase(user, actor=actor, dry_run=True)
    live_tokens = StreamToken.objects.filter(
        user=user, revoked_at__isnull=True, expires_at__gt=timezone.now())
    revoked, closed = revoke_tokens(list(live_tokens.values_list("pk", flat=True)), actor)
    closed += terminate_sessions(
        list(A2UISessionLog.objects.filter(user=user).values_list("pk", flat=True)), actor)
    return person.erase(user, actor=actor, closed={
        "live sessions": closed, "stream tokens in force": revoked})
