"""A session's state as a pure reducer over its events (sans-I/O: no Django, no network).

``apply(state, kind, data) -> state`` folds one session event (``a2ui.core.events``) into a
:class:`SessionState` and returns a new state (the one given is left as it was);
``snapshot(state)`` gives what ``a2ui.sessions.lifecycle.snapshot()`` returns for the same
session: the components in render order, the open requests, the v0.9 surfaces. The invariant
the tests hold the services to (tests/push/test_snapshot_invariant.py)::

    comparable(snapshot(fold(from_snapshot(snap_before), events_after))) ==
    comparable(fresh snapshot)

What each kind does, as the services do it:

* ``component.rendered``: a new id goes last in the render order; a known id is replaced in
  place (type, data and metadata; ``services.components.store_render``). No metadata is ``{}``.
* ``component.updated``: ``a2ui.core.content.updates.apply_update`` on the stored data (an unknown
  id changes nothing: the service refuses such an update before emitting anything).
* ``component.removed``: the component is gone.
* ``request.opened`` / ``request.closed``: an open request by ``params["request_id"]``; closing
  removes it whatever the status.
* ``surface.batch``: each message through ``a2ui.v09.SurfaceState`` (createSurface starts a
  state, deleteSurface drops it, the others ``SurfaceState.apply``). An id deleted may be
  created again (v0.9.1): a new state, last in the order, as the store lists it.
* ``message``, ``tool_call``, ``state.delta``, ``plan``, ``resources``, ``roster``,
  ``artifact``: the session's activity, ``a2ui.core.activity.apply`` (with the state's
  ``limits``, the service's ``A2UI['ACTIVITY_*']`` settings).
* ``progress``, ``navigate``, ``notify`` and kinds this version does not know: no change.

Time is not modelled: a component's ``ttl_seconds`` and a request's deadline are the services'
business (the database snapshot drops what expired and gives a request's remaining
``timeout_seconds``). ``snapshot`` gives ``expires_at: None`` and the request params as opened;
:func:`comparable` leaves both out, and also the order of requests and surfaces, which the
database snapshot does not define.
"""

import json
from dataclasses import dataclass, field, replace
from typing import Any

from a2ui.core import activity as A
from a2ui.core.content.updates import apply_update
from a2ui.core.events import Kind
from a2ui.core.surfaces.state import SurfaceState


@dataclass(frozen=True)
class SessionState:
    """Components by id in render order, open requests by id, surfaces by id.

    ``components``: ``{id: {"component_type", "data", "metadata"}}``; ``requests``:
    ``{request_id: {"kind", "params"}}``; ``surfaces``: ``{surface_id: SurfaceState}``.
    ``registry``: the v0.9 catalog registry (None: the basic catalog only). ``activity``:
    the session's transcript, tool calls, state document, plans, tree, roster and artifacts
    (``a2ui.core.activity``), trimmed by ``limits``.
    """

    components: dict = field(default_factory=dict)
    requests: dict = field(default_factory=dict)
    surfaces: dict = field(default_factory=dict)
    registry: Any = None
    activity: A.Activity = field(default_factory=A.Activity)
    limits: A.Limits = field(default_factory=A.Limits)


def _rendered(state, data):
    components = dict(state.components)  # a known id keeps its place in the dict's order
    components[data["component_id"]] = {
        "component_type": data["component_type"],
        "data": data["data"],
        "metadata": data.get("metadata") or {},
    }
    return replace(state, components=components)


def _updated(state, data):
    current = state.components.get(data["component_id"])
    if current is None:
        return state
    components = dict(state.components)
    components[data["component_id"]] = {
        **current,
        "data": apply_update(current["component_type"], current["data"], data["operation"],
                             data["data"]),
    }
    return replace(state, components=components)


def _removed(state, data):
    if data["component_id"] not in state.components:
        return state
    components = {k: v for k, v in state.components.items() if k != data["component_id"]}
    return replace(state, components=components)


def _opened(state, data):
    params = data["params"]
    requests = {**state.requests, params["request_id"]: {"kind": data["kind"], "params": params}}
    return replace(state, requests=requests)


def _closed(state, data):
    if data["request_id"] not in state.requests:
        return state
    requests = {k: v for k, v in state.requests.items() if k != data["request_id"]}
    return replace(state, requests=requests)


def _batch(state, data):
    surfaces = dict(state.surfaces)
    copied = set()
    for message in data["messages"]:
        if "createSurface" in message:
            surface = SurfaceState.from_create(message)
            surfaces[surface.surface_id] = surface
            copied.add(surface.surface_id)
            continue
        body = next(v for k, v in message.items() if k != "version")
        sid = body["surfaceId"]
        if "deleteSurface" in message:
            surfaces.pop(sid, None)
            continue
        if sid not in surfaces:
            continue  # validated batches never do this; nothing to apply it to
        if sid not in copied:  # the state given stays as it was
            surfaces[sid] = surfaces[sid].copy()
            copied.add(sid)
        surfaces[sid].apply(message, state.registry)
    return replace(state, surfaces=surfaces)


_REDUCERS = {
    Kind.COMPONENT_RENDERED: _rendered,
    Kind.COMPONENT_UPDATED: _updated,
    Kind.COMPONENT_REMOVED: _removed,
    Kind.REQUEST_OPENED: _opened,
    Kind.REQUEST_CLOSED: _closed,
    Kind.SURFACE_BATCH: _batch,
}


def _activity(state, kind, data):
    activity = A.apply(state.activity, kind, data, state.limits)
    return state if activity is state.activity else replace(state, activity=activity)


def apply(state, kind, data):
    """The state after one event; transient and unknown kinds return ``state`` itself."""
    if kind in A.KINDS:
        return _activity(state, Kind(kind), data)
    reducer = _REDUCERS.get(kind)
    return state if reducer is None else reducer(state, data)


def fold(state, events):
    """``apply`` over ``[(kind, data)]`` in order."""
    for kind, data in events:
        state = apply(state, kind, data)
    return state


def snapshot(state):
    """``{"components", "requests", "surfaces", "activity"}`` shaped like
    ``services.sessions.snapshot()`` (``activity``: ``a2ui.core.activity.to_dict``)."""
    return {
        "components": [
            {"component_id": cid, **component, "expires_at": None}
            for cid, component in state.components.items()
        ],
        "requests": list(state.requests.values()),
        "surfaces": [surface.to_dict() for surface in state.surfaces.values()],
        "activity": A.to_dict(state.activity),
    }


def from_snapshot(snap, registry=None, limits=None):
    """The state a snapshot shows (a ``services.sessions.Snapshot`` or a ``snapshot()`` dict);
    ``limits``: the activity limits the service keeps (``a2ui.core.activity.Limits``)."""
    get = snap.get if isinstance(snap, dict) else lambda name: getattr(snap, name, None)
    components = {
        c["component_id"]: {"component_type": c["component_type"], "data": c["data"],
                            "metadata": c.get("metadata") or {}}
        for c in get("components")
    }
    requests = {r["params"]["request_id"]: {"kind": r["kind"], "params": r["params"]}
                for r in get("requests")}
    surfaces = {}
    for stored in get("surfaces"):
        surface = SurfaceState.from_dict(stored, registry)
        surfaces[surface.surface_id] = surface
    return SessionState(components, requests, surfaces, registry,
                        A.from_dict(get("activity")), limits or A.Limits())


def comparable(snap):
    """A snapshot as plain JSON data without time or undefined order, for equality.

    Components keep their render order; ``expires_at`` and each request's ``timeout_seconds``
    are left out; requests are sorted by id and surfaces by id. The activity keeps its orders
    (transcript, tool calls, plans and artifacts are shown in them).
    """
    get = snap.get if isinstance(snap, dict) else lambda name: getattr(snap, name, None)
    components = [{k: v for k, v in c.items() if k != "expires_at"} for c in get("components")]
    requests = sorted(
        ({"kind": r["kind"],
          "params": {k: v for k, v in r["params"].items() if k != "timeout_seconds"}}
         for r in get("requests")),
        key=lambda r: r["params"]["request_id"],
    )
    surfaces = sorted(get("surfaces"), key=lambda s: s["surfaceId"])
    activity = A.to_dict(A.from_dict(get("activity")))
    return json.loads(json.dumps({"components": components, "requests": requests,
                                  "surfaces": surfaces, "activity": activity}))
