"""What the person saw: a session's screen at any moment, rebuilt from its events. Sans-I/O.

``replay(events, upto)`` folds the first ``upto`` events of a session (``a2ui.core.events``
kinds, as ``a2ui.compliance.replay`` keeps them, oldest first) with the session reducer
(``a2ui.core.state``) and returns a :class:`Screen`: every component, open request, v0.9
surface and the activity as they stood, plus the consent prompt open at that moment.
How a protocol draws a screen is the protocol's: ``a2ui.jsonrpc.replay.messages(screen)``
gives the web client's notifications (the admin's replay frame draws them with the client's
own renderer and no connection).

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
