"""The toy wire, sans-I/O: a session event or snapshot as one line of JSON."""

import json

from a2ui.core.errors import DomainError, Fault
from a2ui.core.events import Kind

#: the session events a toy client is shown (``Adapter.kinds``)
KINDS = frozenset({Kind.COMPONENT_RENDERED, Kind.COMPONENT_UPDATED, Kind.COMPONENT_REMOVED,
                   Kind.NOTIFY})


def line(obj):
    return (json.dumps(obj, separators=(",", ":"), ensure_ascii=True) + "\n").encode()


def event(kind, data):
    return line({"type": str(kind), "data": data})


def snapshot(components):
    return line({"type": "snapshot", "components": [c["component_id"] for c in components]})


def wave(params, key, where):
    """``toy.wave``: the session event a wave is (a notification), or a refusal naming the field
    before anything is stored."""
    to = params.get("to")
    if not isinstance(to, str) or not 0 < len(to) <= 40 or not to.isprintable():
        path = f"{where}.to" if where else "to"
        raise DomainError(Fault.INVALID_INPUT, "to must be a short printable string",
                          data={"path": path})
    return [(Kind.NOTIFY, {"level": "info", "title": f"wave: {to}", "duration_ms": 5000})], ""
