"""What the person saw: a session's screen at any moment, rebuilt from its events. Sans-I/O.

``replay(events, upto)`` folds the first ``upto`` events of a session (``a2ui.core.events``
kinds, as ``a2ui.compliance.replay`` keeps them, oldest first) with the session reducer
(``a2ui.core.state``) and returns a :class:`Screen`: every component, open request, v0.9
surface and the activity as they stood, plus the consent prompt open at that moment.
``messages(screen)`` gives the JSON-RPC notifications that draw that screen in the web client
(what a resuming socket is sent: ``ui.render`` per component, ``ui.confirm`` /
``ui.request_input`` per open request, one ``a2ui.v09`` snapshot (when there are surfaces), one ``ui.activity``
snapshot, ``a2ui.consent_required``), so the admin's replay frame draws it with the client's
own renderer and no connection.

Two kinds exist only for replay: ``consent.required`` (the consent prompt the person got, at
connect or on a refused push) opens the prompt; ``consent.recorded`` (``consent_type``,
``granted``: a choice the person made, from the consent records) takes its type off it.
``moments(events)`` labels each event for the admin's timeline of the replay.
"""

from dataclasses import dataclass, field, replace

from a2ui.core import state as S
from a2ui.core.events import Kind

CONSENT_REQUIRED = "consent.required"
CONSENT_RECORDED = "consent.recorded"

#: The kinds that change what the person sees and are kept for replay.
KINDS = frozenset({
    Kind.COMPONENT_RENDERED, Kind.COMPONENT_UPDATED, Kind.COMPONENT_REMOVED,
    Kind.REQUEST_OPENED, Kind.REQUEST_CLOSED, Kind.SURFACE_BATCH, Kind.MESSAGE,
    Kind.MESSAGE_BATCH, Kind.TOOL_CALL, Kind.STATE_DELTA, Kind.PLAN, Kind.RESOURCES,
    Kind.ROSTER, Kind.ARTIFACT, CONSENT_REQUIRED,
})


@dataclass(frozen=True)
class Screen:
    """The session's state (``a2ui.core.state.SessionState``) and the open consent prompt
    (the consent types still asked, each ``{"consent_type", ...}`` as described to the
    person; empty: no prompt)."""

    state: S.SessionState = field(default_factory=S.SessionState)
    consent: tuple = ()


def apply(screen, kind, data):
    """The screen after one event."""
    if kind == CONSENT_REQUIRED:
        return replace(screen, consent=tuple(data.get("consent_types") or ()))
    if kind == CONSENT_RECORDED:
        left = tuple(c for c in screen.consent
                     if _type_of(c) != data.get("consent_type"))
        return replace(screen, consent=left)
    return replace(screen, state=S.apply(screen.state, kind, data))


def _type_of(described):
    if isinstance(described, dict):
        return described.get("consent_type") or described.get("type") or described.get("id")
    return described


def replay(events, upto=None, registry=None, limits=None):
    """The screen after the first ``upto`` of ``events`` (``[(kind, data)]``; None: all)."""
    screen = Screen(S.SessionState(registry=registry, limits=limits or S.A.Limits()))
    chosen = events if upto is None else events[:max(0, upto)]
    for kind, data in chosen:
        screen = apply(screen, kind, data)
    return screen


def _notification(method, params):
    return {"jsonrpc": "2.0", "method": method, "params": params}


_REQUEST_METHODS = {"confirm": "ui.confirm", "input": "ui.request_input"}


def messages(screen):
    """The web client's notifications that draw ``screen`` on an empty page, in order."""
    snap = S.snapshot(screen.state)
    out = []
    for c in snap["components"]:
        params = {k: c[k] for k in ("component_id", "component_type", "data")}
        if c["metadata"]:
            params["metadata"] = c["metadata"]
        out.append(_notification("ui.render", params))
    for r in snap["requests"]:
        out.append(_notification(_REQUEST_METHODS.get(r["kind"], "ui.request_input"),
                                 r["params"]))
    surfaces = [m for surface in screen.state.surfaces.values()
                for m in surface.snapshot_messages()]
    if surfaces:  # the client loads its v0.9 renderer on the first a2ui.v09 message only
        out.append(_notification("a2ui.v09", {"messages": surfaces, "snapshot": True}))
    if any(snap["activity"].values()):
        out.append(_notification("ui.activity", {"kind": "snapshot", "data": snap["activity"]}))
    if screen.consent:
        out.append(_notification("a2ui.consent_required",
                                 {"consent_types": list(screen.consent)}))
    return out


def _label(kind, data):
    if kind in (Kind.COMPONENT_RENDERED, "component.rendered"):
        return f"shown: {data.get('component_type')} {data.get('component_id')}"
    if kind in (Kind.COMPONENT_UPDATED, "component.updated"):
        return f"updated: {data.get('component_id')}"
    if kind in (Kind.COMPONENT_REMOVED, "component.removed"):
        return f"removed: {data.get('component_id')}"
    if kind in (Kind.REQUEST_OPENED, "request.opened"):
        return f"asked ({data.get('kind')}): {(data.get('params') or {}).get('request_id')}"
    if kind in (Kind.REQUEST_CLOSED, "request.closed"):
        return f"request {data.get('status')}: {data.get('request_id')}"
    if kind in (Kind.SURFACE_BATCH, "surface.batch"):
        return f"v0.9 surface messages: {len(data.get('messages') or ())}"
    if kind == CONSENT_REQUIRED:
        return "consent asked"
    if kind == CONSENT_RECORDED:
        verb = "granted" if data.get("granted") else "refused"
        return f"consent {verb}: {data.get('consent_type')}"
    return str(kind)


def moments(events):
    """``[{"index", "kind", "label"}]``: the screen at moment ``index`` is
    ``replay(events, index)`` (after that many events); moment 0 is the empty screen."""
    out = [{"index": 0, "kind": "start", "label": "session start (empty screen)"}]
    for i, (kind, data) in enumerate(events, start=1):
        out.append({"index": i, "kind": str(kind), "label": _label(kind, data)})
    return out
