"""Append-only audit trail: every token, session, consent and admin action leaves an event."""

from channels.db import database_sync_to_async

from ..models import AuditEvent


def actor_label(actor=None, agent=None):
    if actor is not None and getattr(actor, "pk", None):
        return f"user:{actor.get_username()}"
    if agent is not None:
        return f"agent:{agent.name}"
    return "system"


def record(action, *, actor=None, agent=None, target=None, session_id=None, details=None):
    """Write one AuditEvent. ``target`` is a model instance or a (type, id) pair."""
    if target is None:
        target_type, target_id = "", ""
    elif isinstance(target, tuple):
        target_type, target_id = target
    else:
        target_type, target_id = target._meta.model_name, str(target.pk)
    return AuditEvent.objects.create(
        actor=actor if actor is not None and getattr(actor, "pk", None) else None,
        actor_label=actor_label(actor, agent),
        action=action,
        target_type=target_type,
        target_id=str(target_id),
        session_id=session_id,
        agent=agent,
        details=details or {},
    )


arecord = database_sync_to_async(record)
