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


class CloseCode(IntEnum):
    """WebSocket close codes (4000-4999 is the application range of RFC 6455).

    The -320xx error codes map to ``4000 + abs(code) - 32000`` so a client that only
    sees the close frame can still tell which error ended the connection.
    TERMINATED and REVOKED have no JSON-RPC error: they are operator actions.
    """

    SESSION_NOT_FOUND = 4000
    RATE_LIMITED = 4001
    PAYLOAD_TOO_LARGE = 4002
    COMPONENT_NOT_FOUND = 4003
    REQUEST_TIMEOUT = 4004
    SESSION_EXPIRED = 4005
    AUTH_FAILED = 4006
    MAX_SESSIONS = 4007
    TERMINATED = 4010
    REVOKED = 4011


#: Close reasons for the two operator-initiated closes (sent as the close frame's reason).
CLOSE_REASONS: dict[CloseCode, str] = {
    CloseCode.TERMINATED: "Session terminated by an operator",
    CloseCode.REVOKED: "Credential revoked",
}


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


class ProtocolError(Exception):
    """A failure that must be reported to the peer as a JSON-RPC error object.

    ``request_id`` is the id of the offending request when it could be read, else None
    (JSON-RPC 2.0 §5: the response id is null when the request id is unknown).
    """

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
        self.message = message if message is not None else default_message(code)
        self.data = data
        self.request_id = request_id
        super().__init__(f"{int(code)} {self.message}")

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
        """The full JSON-RPC error response, ready for :func:`a2ui.protocol.jsonrpc.encode`."""
        return {"jsonrpc": "2.0", "id": self.request_id, "error": self.error_object()}


def invalid_params(path: str, reason: str) -> ProtocolError:
    """-32602 pointing at one field: every validator reports errors this way."""
    return ProtocolError(ErrorCode.INVALID_PARAMS, data={"path": path, "reason": reason})
