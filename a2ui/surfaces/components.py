"""What a session shows: RenderedComponent rows kept current by ui.render and ui.update."""

from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from a2ui.core.content import customtypes
from a2ui.core.content.updates import apply_update
from a2ui.core.errors import DomainError, Fault
from a2ui.models import RenderedComponent
from a2ui.surfaces import sql as component_sql


def _expiry(metadata):
    ttl = (metadata or {}).get("ttl_seconds")
    return timezone.now() + timedelta(seconds=ttl) if ttl else None


def store_render(session_id, params):
    """Insert or replace a component; a re-render keeps its place in the render order."""
    now = timezone.now()
    metadata = params.get("metadata") or {}
    fields = {
        "component_type": params["component_type"],
        "data": params["data"],
        "metadata": metadata,
        "expires_at": _expiry(metadata),
        "updated_at": now,
    }
    # A re-render (the common case) is one UPDATE (in the push store's transaction, which
    # holds the session against erasure: a2ui.push.store.in_session); a new component one
    # INSERT (which turns into the UPDATE if another process rendered it in between).
    if not component_sql.update_component(session_id, params["component_id"], fields):
        component_sql.insert_component(session_id, params["component_id"], fields, now)


#: Tries of ``store_update``'s compare-and-set before it takes the row lock instead.
UPDATE_TRIES = 8


def store_update(session_id, params):
    """Apply ui.update to the stored component, or -32003 if it is unknown or expired.

    Two statements: read the component, then write the new data only if the
    row is still the one read (same ``updated_at``); a concurrent render or update in between
    makes the write miss and the update is applied again to what is there now. Under
    contention that keeps missing, the same in a transaction holding the row lock.
    """
    for _ in range(UPDATE_TRIES):
        component = _updated(session_id, params, lock=False)
        if component_sql.update_component(
            session_id, params["component_id"],
            {"data": component.data, "updated_at": component.updated_at},
            expect={"updated_at": component.read_updated_at},
        ):
            return component
    with transaction.atomic():
        component = _updated(session_id, params, lock=True)
        component_sql.update_component(session_id, params["component_id"],
                                {"data": component.data, "updated_at": component.updated_at})
    return component


def _updated(session_id, params, *, lock):
    """The stored component with ``params`` applied (not written yet), or -32003."""
    component = component_sql.component(session_id, params["component_id"], for_update=lock)
    if component is None or (
        component.expires_at is not None and component.expires_at <= timezone.now()
    ):
        raise DomainError(
            Fault.COMPONENT_NOT_FOUND,
            data={"component_id": params["component_id"]},
        )
    component.read_updated_at = component.updated_at
    component.data = apply_update(
        component.component_type, component.data, params["operation"], params["data"]
    )
    component.updated_at = timezone.now()
    return component


def is_form(session_id, component_id):
    """True when the id names a rendered form component, or a component of a host project's
    own type (A2UI['COMPONENT_TYPES']): its submit is a user.respond the agent gets as is."""
    return component_sql.has_component(session_id, component_id, ("form", *customtypes.names()))


# Expiry ----------------------------------------------------------------------------------------

EXPIRE_BATCH = 500


def expire_due():
    """Delete components whose ``ttl_seconds`` ran out; ``[(session_id, component_id)]`` of
    those this call deleted (another process's sweep may take some: each is reported once)."""
    now = timezone.now()
    due = list(
        RenderedComponent.objects.filter(expires_at__lte=now)
        .values_list("pk", "session_id", "component_id")[:EXPIRE_BATCH]
    )
    gone = []
    for pk, session_id, component_id in due:
        deleted, _ = RenderedComponent.objects.filter(pk=pk, expires_at__lte=now).delete()
        if deleted:
            gone.append((session_id, component_id))
    return gone


