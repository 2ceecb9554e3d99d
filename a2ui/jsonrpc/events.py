"""Seed 000's words for the core's session events (``a2ui.core.events``), both ways. Sans-I/O.

Agents speak methods (``ui.render``, ``ui.request_input`` ...): :func:`to_event` turns a
validated agent-to-UI message into the event the core stores and delivers. People's sockets
get events back as JSON-RPC notifications: :func:`encode` builds the text once per event (the
consumers share it through :func:`encode_cached`, so a push to N sockets of a process is encoded
once, not N times). ``surface.batch`` is not here: what a JSON-RPC client is sent of a batch
depends on the catalogs it declared (``a2ui.core.surfaces.tracker``).
"""

from a2ui.core import presence
from a2ui.core.content.methods import REQUEST_KIND_BY_METHOD
from a2ui.core.events import Kind
from a2ui.rpc import jsonrpc

METHOD_BY_REQUEST_KIND = {kind: method for method, kind in REQUEST_KIND_BY_METHOD.items()}

#: Kinds sent as a notification whose params are the event's data, unchanged.
METHOD_BY_KIND = {
    Kind.COMPONENT_RENDERED: "ui.render",
    Kind.COMPONENT_UPDATED: "ui.update",
    Kind.COMPONENT_REMOVED: "ui.remove",  # expired (ttl_seconds) or withdrawn: the client drops it
    Kind.PROGRESS: "ui.progress",
    Kind.NAVIGATE: "ui.navigate",
    Kind.NOTIFY: "ui.notify",
    Kind.REQUEST_CLOSED: "a2ui.request_closed",
    Kind.CONSENT_REQUIRED: "a2ui.consent_required",
}


#: The activity kinds (``a2ui.core.activity``): one ``ui.activity`` notification each.
ACTIVITY_KINDS = frozenset({Kind.MESSAGE, Kind.MESSAGE_BATCH, Kind.TOOL_CALL, Kind.STATE_DELTA,
                            Kind.PLAN, Kind.RESOURCES, Kind.ROSTER, Kind.ARTIFACT})


def notification(kind, data):
    """The JSON-RPC notification for an event, or None for a kind seed 000 does not show."""
    if kind in ACTIVITY_KINDS:
        return jsonrpc.notification("ui.activity", {"kind": str(kind), "data": data})
    method = METHOD_BY_KIND.get(kind)
    if method is not None:
        return jsonrpc.notification(method, data)
    if kind == Kind.REQUEST_OPENED:
        return jsonrpc.notification(METHOD_BY_REQUEST_KIND[data["kind"]], data["params"])
    return None


def encode(kind, data):
    """The notification's text, or None (not shown, or not encodable as JSON)."""
    message = notification(kind, data)
    if message is None:
        return None
    try:
        return jsonrpc.encode(message)
    except (ValueError, TypeError):
        return None


_MAX_CACHED = 2048
_cache = {}


def encode_cached(session_hex, message):
    """:func:`encode` of a channel-layer event message, once per (session, epoch, seq)."""
    seq = message.get("seq")
    if seq is None:
        return encode(message["kind"], message["data"])
    key = (session_hex, message.get("epoch"), seq)
    text = _cache.get(key, False)
    if text is False:
        text = encode(message["kind"], message["data"])
        if len(_cache) >= _MAX_CACHED:
            for old in list(_cache)[: _MAX_CACHED // 4]:
                del _cache[old]
        _cache[key] = text
    return text


def clear_cache():
    """Forget every cached text (``a2ui.infra.memory`` does so once sockets have closed)."""
    _cache.clear()


def agent_status(status):
    """``a2ui.agent_status``: the session's agent came online or went offline
    (``a2ui.core.presence``; the initial state is ``a2ui.init``'s ``agent_status``)."""
    if status not in presence.STATUSES:
        raise ValueError(f"unknown agent status {status!r}")
    return jsonrpc.notification("a2ui.agent_status", {"status": status})
