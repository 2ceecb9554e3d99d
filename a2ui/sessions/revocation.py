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

This module also defines the "a2ui compliance" group and its permissions.
"""

from asgiref.sync import async_to_sync
from django.db import transaction
from django.utils import timezone

from a2ui.compliance import audit
from a2ui.consent import choices as consent
from a2ui.core.closes import CLOSE_REASONS, CloseCode
from a2ui.infra import groups
from a2ui.models import A2UIConsentRecord, A2UISessionLog, Agent, AuditEvent, StreamToken
from a2ui.sessions import agents
from a2ui.sessions import lifecycle as sessions

State = A2UISessionLog.State
TERMINATED_REASON = CLOSE_REASONS[CloseCode.TERMINATED]
TOKEN_REVOKED_REASON = "Stream token revoked"
AGENT_REVOKED_REASON = "Agent revoked"


async def _aclose_all(session_ids, reason, close_code, actor):
    closed = 0
    for sid in session_ids:
        closed += await sessions.aclose_session(
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


# The compliance group ----------------------------------------------------------------------------

COMPLIANCE_GROUP = "a2ui compliance"

#: Custom permissions (app label a2ui): (codename, model, name). Superusers have them all.
ACTION_PERMISSIONS = [
    ("terminate_a2uisessionlog", A2UISessionLog, "Can terminate live A2UI sessions"),
    ("revoke_streamtoken", StreamToken, "Can revoke stream tokens"),
    ("revoke_agent", Agent, "Can revoke agents"),
    ("revoke_a2uiconsentrecord", A2UIConsentRecord, "Can revoke consents on a user's behalf"),
    ("view_replay", A2UISessionLog, "Can replay what the person saw in a session"),
    ("verify_auditevent", AuditEvent, "Can verify the audit trail and write checkpoints"),
    ("export_person", AuditEvent, "Can export everything held about one person"),
]

#: Held by no group: erasing a person's data needs this second permission, given on purpose.
ERASE_PERMISSION = ("erase_person", AuditEvent, "Can erase everything held about one person")

#: What the group holds: view sessions, consents and the audit trail (and the tokens and agents
#: its revoke actions act on), the four action permissions, replay, verifying the audit trail
#: and exporting a person's data. Not erasing it (``erase_person``). Nothing else.
COMPLIANCE_PERMISSIONS = [
    ("view_a2uisessionlog", A2UISessionLog),
    ("view_a2uiconsentrecord", A2UIConsentRecord),
    ("view_auditevent", AuditEvent),
    ("view_streamtoken", StreamToken),
    ("view_agent", Agent),
] + [(codename, model) for codename, model, _ in ACTION_PERMISSIONS]


def ensure_compliance_group():
    """Create (or reset) the "a2ui compliance" group with exactly its permissions.

    Idempotent. Creates the custom action permissions and, on a fresh database, the model view
    permissions if ``migrate`` has not created them yet. Returns (group, created).
    """
    from django.contrib.auth.models import Group, Permission
    from django.contrib.contenttypes.models import ContentType

    names = {codename: name for codename, _, name in ACTION_PERMISSIONS}
    perms = []
    with transaction.atomic():
        codename, model, name = ERASE_PERMISSION
        Permission.objects.get_or_create(
            content_type=ContentType.objects.get_for_model(model), codename=codename,
            defaults={"name": name})
        for codename, model in COMPLIANCE_PERMISSIONS:
            ct = ContentType.objects.get_for_model(model)
            default_name = f"Can view {model._meta.verbose_name}"
            perm, _ = Permission.objects.get_or_create(
                content_type=ct, codename=codename,
                defaults={"name": names.get(codename, default_name)[:255]},
            )
            perms.append(perm)
        group, created = Group.objects.get_or_create(name=COMPLIANCE_GROUP)
        group.permissions.set(perms)
    return group, created
