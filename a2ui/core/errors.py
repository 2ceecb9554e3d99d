"""Domain errors: what went wrong, in no protocol's words. Sans-I/O.

Services raise :class:`DomainError` with a :class:`Fault`; each adapter maps faults to its own
codes (seed 000: ``a2ui.rpc.errors.ProtocolError.of``; v0.9 frames; HTTP statuses in
``a2ui.api.exceptions``; MCP and AG-UI their own). ``data`` is JSON detail for the peer
(``path`` and ``reason`` for bad input).
"""

from enum import StrEnum


class Fault(StrEnum):
    PARSE = "parse"  # not readable as a message at all
    INVALID_REQUEST = "invalid_request"  # readable, but not an acceptable request here
    UNKNOWN_OPERATION = "unknown_operation"
    INVALID_INPUT = "invalid_input"  # a field is wrong: data has path and reason
    INTERNAL = "internal"
    SESSION_NOT_FOUND = "session_not_found"
    RATE_LIMITED = "rate_limited"
    PAYLOAD_TOO_LARGE = "payload_too_large"
    COMPONENT_NOT_FOUND = "component_not_found"
    REQUEST_TIMEOUT = "request_timeout"
    SESSION_EXPIRED = "session_expired"
    AUTH_FAILED = "auth_failed"
    MAX_SESSIONS = "max_sessions"
    CONSENT_REQUIRED = "consent_required"
    REQUEST_TAKEN_OVER = "request_taken_over"
    #: The database connection was lost while a push was being stored: it may or may not
    #: have been (a retry with the same idempotency key is safe and tells).
    OUTCOME_UNKNOWN = "outcome_unknown"


class DomainError(Exception):
    """A refusal or failure the peer must be told about, whatever protocol it speaks."""

    fault = Fault.INTERNAL

    def __init__(self, fault, message=None, data=None):
        self.fault = Fault(fault)
        self.message = message
        self.data = data
        super().__init__(f"{self.fault}: {message or ''}")


def invalid_input(path, reason):
    """One field is wrong (``path`` as the protocol reads it, e.g. ``params.messages``)."""
    return DomainError(Fault.INVALID_INPUT, data={"path": path, "reason": reason})
