"""An agent's batch: clean, validate, store, push; and what a client starts from (load)."""

import logging

from channels.db import database_sync_to_async
from django.db import transaction
from django.utils import timezone

from a2ui.core import events
from a2ui.core.content.sanitize import sanitize_markdown
from a2ui.core.errors import DomainError, Fault
from a2ui.core.events import Kind
from a2ui.core.surfaces import ServerPolicy, SurfaceState, ValidationFailed, validate_batch
from a2ui.models import A2UISessionLog, Surface
from a2ui.surfaces.catalogs import catalog_registry
from a2ui.surfaces.cleaning import SurfaceValidationError, TooDeep, _failed, clean_json

log = logging.getLogger("a2ui.services")

MAX_BATCH = 500  # messages per agent batch
MAX_SURFACE_ID = 128  # Surface.surface_id


# Agent batches ---------------------------------------------------------------------------------


def _policy(agent):
    name = agent.label if agent is not None else None
    icon = (agent.icon_url or None) if agent is not None else None
    # Text literals are markdown to the renderer: HTML-safe, link targets vetted.
    return ServerPolicy.trusted(name, icon, sanitize_text=sanitize_markdown)


def _surface_ids(messages):
    ids = set()
    for message in messages:
        if type(message) is dict:
            for body in message.values():
                if type(body) is dict and type(body.get("surfaceId")) is str:
                    ids.add(body["surfaceId"][:MAX_SURFACE_ID])
    return ids


def _link_orphans(before, changes):
    """Re-send components an update made reachable but did not itself carry.

    A snapshot leaves out orphans (it must pass the strict validator). If a later update links
    an orphan by reference only, a client that started from a snapshot would never get it, so
    the last updateComponents of that surface in the batch carries it too (a client that has
    it just replaces it with the same thing).
    """
    created, sent, last = set(), {}, {}
    for i, message in enumerate(changes.messages):
        if "createSurface" in message:
            created.add(message["createSurface"]["surfaceId"])
        elif "updateComponents" in message:
            body = message["updateComponents"]
            sent.setdefault(body["surfaceId"], set()).update(c["id"] for c in body["components"])
            last[body["surfaceId"]] = i
    for sid, index in last.items():
        state = changes.states.get(sid)
        if sid in created or state is None or sid not in before:
            continue
        old = set(before[sid].reachable_ids())
        extra = [c for c in state.reachable_ids() if c not in old and c not in sent[sid]]
        if extra:
            message = changes.messages[index]
            body = message["updateComponents"]
            changes.messages[index] = {**message, "updateComponents": {
                **body, "components": list(body["components"]) + [
                    state.components[c] for c in extra]}}
    return changes.messages


def _id_with_nul(message):
    """JSON Pointer of a surfaceId or component id holding NUL (the cleaner would strip it and
    so change the id), or None."""
    for kind, body in message.items() if type(message) is dict else ():
        if type(body) is not dict:
            continue
        if "\x00" in str(body.get("surfaceId", "")):
            return f"/{kind}/surfaceId"
        components = body.get("components")
        for i, comp in enumerate(components if type(components) is list else ()):
            if type(comp) is dict and "\x00" in str(comp.get("id", "")):
                return f"/{kind}/components/{i}/id"
    return None


def _clean_batch(messages):
    out = []
    for index, message in enumerate(messages):
        nul = _id_with_nul(message)
        if nul is not None:
            raise _failed("NUL (\\u0000) is not accepted in identifiers", nul, None, index)
        try:
            message = clean_json(message)
        except TooDeep as exc:
            raise _failed(exc.reason, exc.pointer, None, index) from None
        create = message.get("createSurface") if type(message) is dict else None
        if type(create) is dict and type(create.get("surfaceId")) is str and \
                len(create["surfaceId"]) > MAX_SURFACE_ID:
            raise _failed(f"A surfaceId has at most {MAX_SURFACE_ID} characters.",
                          "/createSurface/surfaceId", create["surfaceId"][:MAX_SURFACE_ID], index)
        out.append(message)
    return out


def store_batch(session_id, messages):
    """Validate and store one batch; return (first seq, messages to forward)."""
    messages = _clean_batch(messages)
    touched = _surface_ids(messages)
    with transaction.atomic():
        session = (
            A2UISessionLog.objects.select_for_update(of=("self",), no_key=True)
            .select_related("agent")
            .filter(pk=session_id, state__in=A2UISessionLog.LIVE_STATES)
            .first()
        )
        if session is None:
            raise DomainError(Fault.SESSION_NOT_FOUND, data={"session_id": str(session_id)})
        rows = {
            row.surface_id: row
            for row in Surface.objects.filter(session_id=session_id, surface_id__in=touched)
        }
        registry = catalog_registry()
        before = {sid: SurfaceState.from_dict(row.state, registry) for sid, row in rows.items()}
        try:
            changes = validate_batch(before, messages, registry, policy=_policy(session.agent))
        except ValidationFailed as exc:
            raise SurfaceValidationError(exc) from None
        out = _link_orphans(before, changes)
        now = timezone.now()
        # A surface deleted and created again (its id is free once deleted: v0.9.1) is a new
        # row, so snapshots list it where a renderer shows it: last, in creation order.
        gone = [*changes.deleted, *changes.replaced]
        if gone:
            Surface.objects.filter(session_id=session_id, surface_id__in=gone).delete()
        created = set(changes.created)
        for sid, state in changes.states.items():
            row = rows.get(sid)
            if row is not None and sid not in created:
                row.catalog_id, row.state, row.updated_at = state.catalog_id, state.to_dict(), now
                row.save(update_fields=["catalog_id", "state", "updated_at"])
        for sid in changes.created:
            state = changes.states[sid]
            Surface.objects.create(session_id=session_id, surface_id=sid,
                                   catalog_id=state.catalog_id, state=state.to_dict(),
                                   created_at=now, updated_at=now)
        first = session.surface_seq + 1
        A2UISessionLog.objects.filter(pk=session_id).update(
            surface_seq=session.surface_seq + len(out)
        )
    return first, out


def batch_data(first_seq, messages):
    """The ``surface.batch`` event's data: message ``i`` is number ``first_seq + i`` of the
    session's surface store (``A2UISessionLog.surface_seq``; the SSE event ids)."""
    return {"first_seq": first_seq, "messages": messages}


def surfaces_event(first_seq, messages, seq=None, epoch=None):
    """A ``surface.batch`` channel-layer message (tests; ``apush`` numbers its own)."""
    return events.to_message(Kind.SURFACE_BATCH, batch_data(first_seq, messages), seq, epoch)


def tracked(data):
    """The ``Tracker`` view of a ``surface.batch`` event's data."""
    return {"seq": data["first_seq"], "messages": data["messages"]}


# What a client starts from ---------------------------------------------------------------------


def load(session_id):
    """(surface_seq, [SurfaceState]) read consistently (the session row is locked briefly)."""
    with transaction.atomic():
        seq = (
            A2UISessionLog.objects.select_for_update(no_key=True)
            .filter(pk=session_id)
            .values_list("surface_seq", flat=True)
            .first()
        )
        rows = list(
            Surface.objects.filter(session_id=session_id)
            .order_by("created_at", "id")
            .values_list("state", flat=True)
        )
    return seq or 0, [SurfaceState.from_dict(state, catalog_registry()) for state in rows]


aload = database_sync_to_async(load)
