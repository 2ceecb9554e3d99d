"""What one v0.9 client is shown of a session's seed-000 components and requests.

Sans-I/O (no Django, no network). A :class:`SessionView` belongs to one v0.9 client (a /ws/v09
socket, an SSE stream): it keeps the components and open requests it has shown (folded with
the core's reducer, ``a2ui.core.state``, so an update's operation gives the same data as the
service stored) and turns each session event into the v0.9 messages of
``a2ui.v09.translate``:

* ``reset(components, requests)``: from ``sessions.snapshot``'s components and requests,
  deleteSurface for what the client holds, then one surface per component (render order) and
  per open request;
* ``event(kind, data)``: ``component.rendered`` creates its surface (or re-sends its
  components, in place, for a known id), ``component.updated`` re-sends them,
  ``component.removed`` deletes it, ``request.opened`` / ``request.closed`` create and delete
  the request's surface; other kinds give ``[]``. ``None`` means the view cannot follow (an
  update it cannot apply): the caller resyncs with ``reset``.

``shows(kind)`` says which kinds it translates. A client that did not declare the basic
catalog is shown none of them (``enabled`` False).
"""

from a2ui.core import state as S
from a2ui.core.events import Kind
from a2ui.core.surfaces import translate as T
from a2ui.core.surfaces.schema import BASIC_CATALOG_ID

KINDS = frozenset({Kind.COMPONENT_RENDERED, Kind.COMPONENT_UPDATED, Kind.COMPONENT_REMOVED,
                   Kind.REQUEST_OPENED, Kind.REQUEST_CLOSED})


def shows(kind):
    return kind in KINDS


class SessionView:
    def __init__(self, catalogs=None):
        """``catalogs``: the catalog ids the client declared (None: any)."""
        self.enabled = catalogs is None or BASIC_CATALOG_ID in catalogs
        self.state = S.SessionState()
        self.sent = {}  # surface id -> what the client holds of it (translate.surface_messages)

    @property
    def holds(self):
        """The client holds translated surfaces (an SSE resume cannot skip the snapshot)."""
        return bool(self.sent)

    def reset(self, components, requests):
        """deleteSurface for every translated surface the client holds, then the snapshot."""
        out = [T.delete_message(sid) for sid in sorted(self.sent)]
        self.sent = {}
        state = S.SessionState()
        for c in components:
            state = S.apply(state, Kind.COMPONENT_RENDERED, {
                "component_id": c["component_id"], "component_type": c["component_type"],
                "data": c["data"], "metadata": c.get("metadata") or {}})
        for r in requests:
            state = S.apply(state, Kind.REQUEST_OPENED, r)
        self.state = state
        if not self.enabled:
            return out
        for cid, c in state.components.items():
            messages, self.sent[T.component_surface_id(cid)] = T.component_messages(
                cid, c["component_type"], c["data"])
            out += messages
        for r in state.requests.values():
            messages, self.sent[T.request_surface_id(r["params"]["request_id"])] = \
                T.request_messages(r["kind"], r["params"])
            out += messages
        return out

    def event(self, kind, data):
        if kind not in KINDS:
            return []
        try:
            state = S.apply(self.state, kind, data)
        except Exception:  # an update this copy cannot take: it is not the service's copy
            return None
        self.state = state
        if not self.enabled:
            return []
        if kind is Kind.COMPONENT_RENDERED or kind is Kind.COMPONENT_UPDATED:
            cid = data["component_id"]
            current = state.components.get(cid)
            if current is None:  # an update of a component this view never had
                return []
            sid = T.component_surface_id(cid)
            out, self.sent[sid] = T.component_messages(
                cid, current["component_type"], current["data"], self.sent.get(sid))
            return out
        if kind is Kind.REQUEST_OPENED:
            params = data["params"]
            sid = T.request_surface_id(params["request_id"])
            out, self.sent[sid] = T.request_messages(data["kind"], params, self.sent.get(sid))
            return out
        sid = (T.component_surface_id(data["component_id"]) if kind is Kind.COMPONENT_REMOVED
               else T.request_surface_id(data["request_id"]))
        if sid not in self.sent:
            return []
        del self.sent[sid]
        return [T.delete_message(sid)]


# SSE event ids ---------------------------------------------------------------------------------

#: The suffix of an SSE event id sent while the client holds translated surfaces.
HOLDS_SUFFIX = ".c"


def event_id(seq, holds):
    """The SSE ``id:`` after a message: the surface store's number ``seq``, marked when the
    client holds translated surfaces (they are not in the store: a resume cannot tell what it
    missed of them, so a marked id is answered with the whole snapshot)."""
    return f"{seq}{HOLDS_SUFFIX}" if holds else str(seq)


def parse_event_id(raw):
    """``(seq, holds)`` of a ``Last-Event-ID`` (``(None, False)``: none or not ours)."""
    if raw in (None, ""):
        return None, False
    holds = raw.endswith(HOLDS_SUFFIX)
    number = raw[: -len(HOLDS_SUFFIX)] if holds else raw
    if not number.isdigit() or len(number) > 19:
        return None, False
    return int(number), holds
