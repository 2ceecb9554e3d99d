"""The seed-003 AG-UI WebSocket event protocol (``/ws/agui``): docs/protocol-agui.md.

``protocol`` (envelope, the 14 event types, errors) and ``mapping`` (the core's session events
in AG-UI words) are sans-I/O; ``consumer`` is the socket and ``adapter`` its registration.
"""

PROTOCOL_VERSION = "0.1.0"

#: The stream token a person's client of this protocol presents (``a2ui.tokens``: each type
#: signed with a salt of its own; the adapter declares it).
TOKEN_TYPE = "stream_agui"
