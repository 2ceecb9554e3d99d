"""Why a person's connections to a session are closed, as WebSocket close codes. Sans-I/O.

Every WebSocket protocol of the app closes with these (RFC 6455's application range
4000-4999); seed 000 defines them (``4000 + abs(code) - 32000`` for its -320xx errors), and the
other adapters reuse them so a client of any protocol can tell why its socket ended.
TERMINATED and REVOKED are operator actions (``a2ui.push.revocation``).
"""

from enum import IntEnum


class CloseCode(IntEnum):

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
