"""JSON-RPC error codes, the exception that carries them, and WebSocket close codes.

Everything that can go wrong while reading or validating a message is a
:class:`ProtocolError`. Carrying the JSON-RPC code, message, data and the request id on
one object lets each adapter (WebSocket consumer, REST view, Python API) turn a failure
into the same wire answer with :meth:`ProtocolError.to_response`, without knowing where
in the parse/validate pipeline it happened.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any

from a2ui.core.closes import CLOSE_REASONS, CloseCode  # noqa: F401 (re-exported)
from a2ui.core.errors import DomainError, Fault


class ErrorCode(IntEnum):
    """Seed 000 §9. The -32700..-32603 block is JSON-RPC 2.0's; -32000..-32007 are A2UI's."""

    PARSE_ERROR = -32700
    INVALID_REQUEST = -32600
    METHOD_NOT_FOUND = -32601
    INVALID_PARAMS = -32602
    INTERNAL_ERROR = -32603
    SESSION_NOT_FOUND = -32000
    RATE_LIMITED = -32001
    PAYLOAD_TOO_LARGE = -32002
    COMPONENT_NOT_FOUND = -32003
    REQUEST_TIMEOUT = -32004
    SESSION_EXPIRED = -32005
    AUTH_FAILED = -32006
    MAX_SESSIONS = -32007
    #: Not in seed 000: the session lacks a consent the request needs (docs/compliance.md).
    #: ``data`` is ``{"consent_types": [...]}``, the missing types.
    CONSENT_REQUIRED = -32010


#: Not in seed 000 (and not an :class:`ErrorCode`: no close code, never ends a socket): a
#: waiter's ``ui.request_input`` / ``ui.confirm`` was taken over by another socket or call of
#: the same agent (``a2ui.pending``), which got the outcome instead. ``data`` is
#: ``{"session_id", "request_id"}`` (docs/agents.md).
REQUEST_TAKEN_OVER = -32011

#: Not in seed 000 (and not an :class:`ErrorCode`): the database connection was lost while a
#: push was being stored, so whether it was stored is unknown. Nothing was sent to the
#: person's clients; if it was stored they show it when they resync. A retry with the same
#: ``idempotency_key`` is safe: it is stored and shown once. ``data`` is ``{"session_id",
#: "idempotency_key"?}`` (docs/agents.md, "Retrying pushes").
OUTCOME_UNKNOWN = -32012

#: Not in seed 000 (and not an :class:`ErrorCode`): the person cancelled the request the
#: waiter's ``ui.request_input`` asked (an AG-UI 1.0 ``resume`` entry ``cancelled``); the
#: session goes on. ``data`` is ``{"session_id", "request_id", "cancelled_by": "person"}``
#: (docs/agents.md). A request cancelled because its session closed is -32000 as before.
REQUEST_CANCELLED = -32013

#: The human-readable message for each code, verbatim from seed 000 §9.
MESSAGES: dict[ErrorCode, str] = {
    ErrorCode.PARSE_ERROR: "Parse error",
    ErrorCode.INVALID_REQUEST: "Invalid request",
    ErrorCode.METHOD_NOT_FOUND: "Method not found",
    ErrorCode.INVALID_PARAMS: "Invalid params",
    ErrorCode.INTERNAL_ERROR: "Internal error",
    ErrorCode.SESSION_NOT_FOUND: "Session not found",
    ErrorCode.RATE_LIMITED: "Rate limit exceeded",
    ErrorCode.PAYLOAD_TOO_LARGE: "Payload too large",
    ErrorCode.COMPONENT_NOT_FOUND: "Component not found",
    ErrorCode.REQUEST_TIMEOUT: "Request timeout",
    ErrorCode.SESSION_EXPIRED: "Session expired",
    ErrorCode.AUTH_FAILED: "Auth failed",
    ErrorCode.MAX_SESSIONS: "Max sessions exceeded",
    ErrorCode.CONSENT_REQUIRED: "Consent required",
}


def default_message(code: int) -> str:
    """The §9 message for ``code``; codes we do not define fall back to "Server error"."""
    try:
        return MESSAGES[ErrorCode(code)]
    except ValueError:
        return "Server error"


class _CloseCodeTable(dict):
    """A dict ``{ErrorCode: close code}`` that also exposes every :class:`CloseCode` as an
    attribute, so both ``CLOSE_CODES[ErrorCode.AUTH_FAILED]`` and ``CLOSE_CODES.TERMINATED``
    read naturally at call sites."""

    def __getattr__(self, name: str) -> CloseCode:
        try:
            return CloseCode[name]
        except KeyError:
            raise AttributeError(name) from None


def _close_code(code: ErrorCode) -> CloseCode:
    return CloseCode(4000 + abs(int(code)) - 32000)


#: WebSocket close code for each -320xx error, plus ``.TERMINATED`` (4010) and ``.REVOKED`` (4011).
CLOSE_CODES: _CloseCodeTable = _CloseCodeTable(
    {code: _close_code(code) for code in ErrorCode if -32007 <= code <= -32000}
)


#: Seed 000's code for each domain fault (``a2ui.core.errors``).
CODE_BY_FAULT: dict[Fault, int] = {
    Fault.PARSE: ErrorCode.PARSE_ERROR,
    Fault.INVALID_REQUEST: ErrorCode.INVALID_REQUEST,
    Fault.UNKNOWN_OPERATION: ErrorCode.METHOD_NOT_FOUND,
    Fault.INVALID_INPUT: ErrorCode.INVALID_PARAMS,
    Fault.INTERNAL: ErrorCode.INTERNAL_ERROR,
    Fault.SESSION_NOT_FOUND: ErrorCode.SESSION_NOT_FOUND,
    Fault.RATE_LIMITED: ErrorCode.RATE_LIMITED,
    Fault.PAYLOAD_TOO_LARGE: ErrorCode.PAYLOAD_TOO_LARGE,
    Fault.COMPONENT_NOT_FOUND: ErrorCode.COMPONENT_NOT_FOUND,
    Fault.REQUEST_TIMEOUT: ErrorCode.REQUEST_TIMEOUT,
    Fault.SESSION_EXPIRED: ErrorCode.SESSION_EXPIRED,
    Fault.AUTH_FAILED: ErrorCode.AUTH_FAILED,
    Fault.MAX_SESSIONS: ErrorCode.MAX_SESSIONS,
    Fault.CONSENT_REQUIRED: ErrorCode.CONSENT_REQUIRED,
    Fault.REQUEST_TAKEN_OVER: REQUEST_TAKEN_OVER,
    Fault.OUTCOME_UNKNOWN: OUTCOME_UNKNOWN,
}
FAULT_BY_CODE: dict[int, Fault] = {int(code): fault for fault, code in CODE_BY_FAULT.items()}


class ProtocolError(DomainError):
    """A failure that must be reported to the peer as a JSON-RPC error object.

    ``request_id`` is the id of the offending request when it could be read, else None
    (JSON-RPC 2.0 §5: the response id is null when the request id is unknown). It is also a
    :class:`~a2ui.core.errors.DomainError` (its ``fault`` follows from the code), so the
    sans-I/O validators of seed 000 and the services' domain errors are caught as one.
    """

    @classmethod
    def of(cls, exc: DomainError) -> ProtocolError:
        """``exc`` in seed 000's words (itself if it already is a ProtocolError)."""
        if isinstance(exc, ProtocolError):
            return exc
        return cls(CODE_BY_FAULT.get(exc.fault, ErrorCode.INTERNAL_ERROR), exc.message, exc.data)

    def __init__(
        self,
        code: int,
        message: str | None = None,
        data: Any = None,
        request_id: str | int | None = None,
    ) -> None:
        try:
            code = ErrorCode(code)
        except ValueError:
            code = int(code)
        self.code = code
        self.fault = FAULT_BY_CODE.get(int(code), Fault.INTERNAL)
        self.message = message if message is not None else default_message(code)
        self.data = data
        self.request_id = request_id
        Exception.__init__(self, f"{int(code)} {self.message}")

    def __repr__(self) -> str:
        return (
            f"ProtocolError(code={int(self.code)}, message={self.message!r}, "
            f"data={self.data!r}, request_id={self.request_id!r})"
        )

    def with_request_id(self, request_id: str | int | None) -> ProtocolError:
        """Attach the request id once the caller knows it; validation runs on params alone."""
        self.request_id = request_id
        return self

    @property
    def close_code(self) -> int | None:
        """The WebSocket close code if this error is one an adapter may close on, else None."""
        return CLOSE_CODES.get(self.code)

    def error_object(self) -> dict[str, Any]:
        """The JSON-RPC ``error`` member: ``{code, message[, data]}``."""
        error: dict[str, Any] = {"code": int(self.code), "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error

    def to_response(self) -> dict[str, Any]:
        """The full JSON-RPC error response, ready for :func:`a2ui.rpc.jsonrpc.encode`."""
        return {"jsonrpc": "2.0", "id": self.request_id, "error": self.error_object()}


def invalid_params(path: str, reason: str) -> ProtocolError:
    """-32602 pointing at one field: every validator reports errors this way."""
    return ProtocolError(ErrorCode.INVALID_PARAMS, data={"path": path, "reason": reason})
