"""Which resources of a session a channel-layer event changes. Sans-I/O.

Reads the core's session events (``a2ui.event``, ``a2ui.core.events``); other message types
(closing notices, another version's) change nothing.
"""

from a2ui.core import activity, events
from a2ui.mcp import uris

#: The URIs one changed item is shown under (``notices``).
VARIANTS = {"components": ("components", "apps"),
            "requests": ("requests", "request_forms", "request_apps")}


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


def _retitles(data):
    """Whether a ``component.updated`` may change the component's listed name (its title:
    ``a2ui.mcp.person.list_resources``): a replace, or a merge that sets ``title``."""
    patch = data.get("data")
    return data.get("operation") == "replace" or (isinstance(patch, dict) and "title" in patch)


def affected(event):
    """``(changed, list_changed)``: ``{(kind, item)}`` with kind "components", "surfaces",
    "requests" or "activity" (item None), and whether the session's resource list may have
    changed (a resource came or went, or a component's title, its listed name, changed)."""
    kind = event.get("type")
    if kind == events.MESSAGE_TYPE:
        what, data = events.kind_of(event), event.get("data") or {}
        if what in (events.Kind.COMPONENT_RENDERED, events.Kind.COMPONENT_UPDATED,
                    events.Kind.COMPONENT_REMOVED):
            cid = data.get("component_id")
            changed = {("components", cid)} if isinstance(cid, str) else set()
            return changed, what != events.Kind.COMPONENT_UPDATED or _retitles(data)
        if what == events.Kind.SURFACE_BATCH:
            return _surface_changes(data.get("messages"))
        if what in (events.Kind.REQUEST_OPENED, events.Kind.REQUEST_CLOSED):
            params = data.get("params") if what == events.Kind.REQUEST_OPENED else data
            rid = params.get("request_id") if isinstance(params, dict) else None
            return ({("requests", rid)} if isinstance(rid, str) else set()), True
        if what in activity.KINDS:
            return {("activity", None)}, False
    return set(), False


def notices(session_id, event, subscribed):
    """``(updated, list_changed)`` for one event of a session: ``updated`` the URIs among
    ``subscribed`` it changes (a component's ``components`` and ``apps`` URIs, a request's
    JSON, form and app URIs), in order."""
    changed, listed = affected(event)
    updated = []
    for kind, item in sorted(changed, key=lambda pair: (pair[0], pair[1] or "")):
        for name in VARIANTS.get(kind, (kind,)):
            uri = uris.build(name, session_id, item)
            if uri in subscribed:
                updated.append(uri)
    return updated, listed


#: The agents' notices about sessions (``a2ui.agent_event`` on the agent's group).
SESSION_NOTICES = {"session.opened": "opened", "session.resumed": "opened",
                   "session.closed": "closed"}


def session_notice(event):
    """``("opened" | "closed", session_id text)`` for an agent-group notice about a session,
    else None."""
    if not isinstance(event, dict) or event.get("type") != "a2ui.agent_event":
        return None
    what = SESSION_NOTICES.get(event.get("method"))
    params = event.get("params")
    if what is None or not isinstance(params, dict) or not isinstance(params.get("session_id"),
                                                                      str):
        return None
    return what, params["session_id"]
