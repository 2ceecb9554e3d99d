"""What one v0.9 client socket has been sent (sans-I/O: no Django, no network).

Used by every socket or stream that forwards a session's surfaces (/ws/v09, the JSON-RPC user
socket, SSE); re-exported by ``a2ui.surfaces``.
"""

from a2ui.core.surfaces.errors import PROTOCOL_VERSION


def snapshot_messages(states, catalogs=None):
    """createSurface, updateComponents (reachable from root), updateDataModel for each state.

    ``catalogs``: ids the client supports; surfaces of other catalogs are left out.
    """
    return [
        message
        for state in states
        if catalogs is None or state.catalog_id in catalogs
        for message in state.snapshot_messages()
    ]


class Tracker:
    """What one client socket has been sent: the last sequence number and its surfaces.

    ``accept(event)`` returns the messages to send: [] for a stale event, or None when a gap
    shows that something was lost (the caller resyncs with ``resync``).
    """

    def __init__(self, catalogs=None):
        self.seq = 0
        self.surfaces = {}  # surface id -> catalog id, as the client knows them
        self.catalogs = catalogs

    def _wanted(self, message):
        if self.catalogs is None:
            return True
        create = message.get("createSurface")
        if create is not None:
            return create["catalogId"] in self.catalogs
        body = next(iter(v for k, v in message.items() if k != "version"), None)
        return isinstance(body, dict) and body.get("surfaceId") in self.surfaces

    def _track(self, message):
        if "createSurface" in message:
            body = message["createSurface"]
            self.surfaces[body["surfaceId"]] = body["catalogId"]
        elif "deleteSurface" in message:
            self.surfaces.pop(message["deleteSurface"]["surfaceId"], None)

    def accept(self, event):
        numbered = self.accept_numbered(event)
        return None if numbered is None else [message for _, message in numbered]

    def accept_numbered(self, event):
        """Like ``accept``, with each message's sequence number: [(seq, message)]."""
        first, messages = event["seq"], event["messages"]
        last = first + len(messages) - 1
        if last <= self.seq:
            return []
        if first > self.seq + 1:
            return None
        out = []
        for i, message in enumerate(messages):
            if first + i <= self.seq or not self._wanted(message):
                continue
            self._track(message)
            out.append((first + i, message))
        self.seq = last
        return out

    def resync(self, seq, states):
        """Messages taking the client from what it has to ``states``: delete, then snapshot."""
        out = [{"version": PROTOCOL_VERSION, "deleteSurface": {"surfaceId": sid}}
               for sid in self.surfaces]
        self.surfaces = {}
        snap = snapshot_messages(states, self.catalogs)
        for message in snap:
            self._track(message)
        self.seq = seq
        return out + snap

