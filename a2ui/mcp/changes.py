"""Which resources of a session a channel-layer event changes. Sans-I/O.

Understands the core's session events (``a2ui.event``, ``a2ui.core.events``) and, until every
service emits those, the older ``a2ui.push`` (a JSON-RPC notification's text) and
``a2ui.surfaces`` (v0.9 messages) events.
"""

import json

from ..core import events


def _surface_changes(messages):
    changed, listed = set(), False
    for message in messages or []:
        if not isinstance(message, dict):
            continue
        for key, body in message.items():
            if key == "version" or not isinstance(body, dict):
                continue
            if isinstance(body.get("surfaceId"), str):
                changed.add(("surfaces", body["surfaceId"]))
            listed = listed or key in ("createSurface", "deleteSurface")
    return changed, listed


def affected(event):
    """``(changed, list_changed)``: ``{(kind, item)}`` with kind "components" or "surfaces",
    and whether the session's resource list may have changed."""
    kind = event.get("type")
    if kind == events.MESSAGE_TYPE:
        what, data = events.kind_of(event), event.get("data") or {}
        if what in (events.Kind.COMPONENT_RENDERED, events.Kind.COMPONENT_UPDATED,
                    events.Kind.COMPONENT_REMOVED):
            cid = data.get("component_id")
            changed = {("components", cid)} if isinstance(cid, str) else set()
            return changed, what != events.Kind.COMPONENT_UPDATED
        if what == events.Kind.SURFACE_BATCH:
            return _surface_changes(data.get("messages"))
        return set(), False
    if kind == "a2ui.surfaces":
        return _surface_changes(event.get("messages"))
    if kind == "a2ui.push" and event.get("method") in ("ui.render", "ui.update"):
        try:
            params = json.loads(event.get("text") or "{}").get("params") or {}
        except (ValueError, AttributeError):
            return set(), False
        cid = params.get("component_id")
        changed = {("components", cid)} if isinstance(cid, str) else set()
        return changed, event["method"] == "ui.render"
    return set(), False
