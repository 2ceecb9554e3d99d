"""W3C Trace Context (``traceparent`` / ``tracestate``), sans-I/O.

Read from HTTP headers (REST, SSE, the WebSocket handshake), from MCP ``_meta`` (SEP-414: the
``traceparent`` and ``tracestate`` keys) and from JSON-RPC ``params._meta``. A value that is not
a valid trace context is ignored (``None``), never an error: tracing must not refuse a push.
"""

import re
from typing import NamedTuple

_TRACEPARENT = re.compile(r"^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$")
_MAX_LEN = 512  # tracestate may be 32 members of up to 256 chars; 512 is plenty for traceparent
MAX_TRACESTATE = 512


class TraceParent(NamedTuple):
    trace_id: str  # 32 lowercase hex
    span_id: str  # 16 lowercase hex
    flags: int  # bit 0: sampled

    @property
    def sampled(self):
        return bool(self.flags & 1)


def parse(value):
    """A ``traceparent`` value as a :class:`TraceParent`, or None if it is not one."""
    if not isinstance(value, str) or len(value) > _MAX_LEN:
        return None
    match = _TRACEPARENT.match(value.strip())
    if match is None:
        return None
    version, trace_id, span_id, flags, rest = match.groups()
    if version == "ff" or (version == "00" and rest):
        return None  # ff is forbidden; version 00 has exactly four fields
    if trace_id == "0" * 32 or span_id == "0" * 16:
        return None
    return TraceParent(trace_id, span_id, int(flags, 16))


def format(parent):  # noqa: A001 - the W3C verb
    """The ``traceparent`` value of a :class:`TraceParent`."""
    return f"00-{parent.trace_id}-{parent.span_id}-{parent.flags & 0xff:02x}"


def clean_tracestate(value):
    """``tracestate`` as given when it is a short printable string, else None."""
    if not isinstance(value, str) or not value or len(value) > MAX_TRACESTATE:
        return None
    if not value.isprintable():
        return None
    return value


def from_headers(headers):
    """``(traceparent, tracestate)`` from ASGI headers (``[(b"name", b"value"), ...]``) or a
    mapping of lowercase names; invalid or absent values are None."""
    items = headers.items() if hasattr(headers, "items") else headers
    parent = state = None
    for name, value in items or ():
        if isinstance(name, bytes):
            name = name.decode("latin-1")
        if isinstance(value, bytes):
            value = value.decode("latin-1")
        name = name.lower()
        if name == "traceparent" and parent is None:
            parent = value
        elif name == "tracestate" and state is None:
            state = value
    return _pair(parent, state)


def from_meta(meta):
    """``(traceparent, tracestate)`` from an MCP / JSON-RPC ``_meta`` object (SEP-414)."""
    if not isinstance(meta, dict):
        return None, None
    return _pair(meta.get("traceparent"), meta.get("tracestate"))


def _pair(parent, state):
    if parse(parent) is None:
        return None, None
    return parent.strip(), clean_tracestate(state)
