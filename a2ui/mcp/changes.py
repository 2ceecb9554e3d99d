"""Which resources of a session a channel-layer event changes. Sans-I/O.

Reads the core's session events (``a2ui.event``, ``a2ui.core.events``); other message types
(closing notices, another version's) change nothing.
"""

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
