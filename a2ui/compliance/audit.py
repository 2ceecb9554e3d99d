"""Append-only audit trail: every token, session, consent and admin action leaves an event."""

from channels.db import database_sync_to_async

from a2ui.models import AuditEvent


def actor_label(actor=None, agent=None):
    if actor is not None and getattr(actor, "pk", None):
        return f"user:{actor.get_username()}"
    if agent is not None:
        return f"agent:{agent.name}"
    return "system"


def storable(value):
    """``value`` with NUL taken out of every string and key: PostgreSQL's JSON cannot hold
    ``\u0000``, and an audit entry must never fail for what a client sent."""
    if isinstance(value, str):
        return value.replace("\x00", "") if "\x00" in value else value
    if isinstance(value, dict):
        return {storable(k) if isinstance(k, str) else k: storable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [storable(v) for v in value]
    return value


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
        target_id=storable(str(target_id)),
        session_id=session_id,
        agent=agent,
        details=storable(details or {}),
    )


arecord = database_sync_to_async(record)
