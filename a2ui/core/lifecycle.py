"""The lifecycle of a session socket, as a pure transition table. Sans-I/O.

Every listener of a session (the JSON-RPC, v0.9 and AG-UI sockets, the SSE streams, the MCP
watcher: ``a2ui.consumers``) holds one :class:`Lifecycle` and asks it, not flags of its own,
whether it may still handshake, show events, resync or close. Like h11's state machine, it does
no I/O: the consumer fires an event when something happened and reads the state.

States:

* ``CONNECTED``: the transport is open, no session is attached yet;
* ``HANDSHAKING``: the client's handshake (``a2ui.init``, the v0.9 capabilities message) is
  being handled: the session is being opened or resumed (the handshake deadline lets it finish);
* ``STREAMING``: a session is attached: the socket is counted and in the session's group, its
  events are shown;
* ``CLOSING``: the server closes the socket because the session ended, was revoked, expired, or
  the client was refused: nothing more is shown, the socket does not uncount itself (the
  session's close did, or it never counted);
* ``CLOSED``: the transport is gone, or the stream ended by itself (``FINISHED``: an AG-UI 1.0
  run that ended; the session goes on, so the socket uncounts itself).

Events: ``HANDSHAKE_RECEIVED``, ``HANDSHAKE_FAILED`` (back to ``CONNECTED``: the client may send
it again), ``SESSION_OPENED`` (from ``HANDSHAKING``, or from ``CONNECTED`` for a transport whose
connection is its handshake: the AG-UI socket, the SSE streams, the MCP watcher),
``CLOSE_REQUESTED``, ``FINISHED``, ``DISCONNECTED``. Anything else raises
:class:`IllegalTransition`; ``can`` asks first.
"""

import enum


class State(enum.Enum):
    CONNECTED = "connected"
    HANDSHAKING = "handshaking"
    STREAMING = "streaming"
    CLOSING = "closing"
    CLOSED = "closed"


class Event(enum.Enum):
    HANDSHAKE_RECEIVED = "handshake received"
    HANDSHAKE_FAILED = "handshake failed"
    SESSION_OPENED = "session opened"
    CLOSE_REQUESTED = "close requested"
    FINISHED = "finished"
    DISCONNECTED = "disconnected"


S, E = State, Event

#: ``(state, event) -> next state``: every legal transition, and only those.
TRANSITIONS = {
    (S.CONNECTED, E.HANDSHAKE_RECEIVED): S.HANDSHAKING,
    (S.CONNECTED, E.SESSION_OPENED): S.STREAMING,
    (S.CONNECTED, E.CLOSE_REQUESTED): S.CLOSING,
    (S.CONNECTED, E.DISCONNECTED): S.CLOSED,
    (S.HANDSHAKING, E.HANDSHAKE_FAILED): S.CONNECTED,
    (S.HANDSHAKING, E.SESSION_OPENED): S.STREAMING,
    (S.HANDSHAKING, E.CLOSE_REQUESTED): S.CLOSING,
    (S.HANDSHAKING, E.DISCONNECTED): S.CLOSED,
    (S.STREAMING, E.CLOSE_REQUESTED): S.CLOSING,
    (S.STREAMING, E.FINISHED): S.CLOSED,
    (S.STREAMING, E.DISCONNECTED): S.CLOSED,
    (S.CLOSING, E.DISCONNECTED): S.CLOSED,
}


class IllegalTransition(Exception):
    def __init__(self, state, event):
        super().__init__(f"{event.value!r} is not possible while {state.value}")
        self.state, self.event = state, event


class Lifecycle:
    """One socket's state; ``fire(event)`` moves it along :data:`TRANSITIONS`."""

    __slots__ = ("state",)

    def __init__(self, state=State.CONNECTED):
        self.state = state

    def can(self, event):
        return (self.state, event) in TRANSITIONS

    def fire(self, event):
        """Take ``event``; returns the new state, or raises :class:`IllegalTransition`."""
        try:
            self.state = TRANSITIONS[self.state, event]
        except KeyError:
            raise IllegalTransition(self.state, event) from None
        return self.state

    def fire_if(self, event):
        """``fire`` when legal; returns whether it was."""
        key = (self.state, event)
        if key not in TRANSITIONS:
            return False
        self.state = TRANSITIONS[key]
        return True

    # What consumers ask -------------------------------------------------------------------

    @property
    def handshaking(self):
        return self.state is State.HANDSHAKING

    @property
    def streaming(self):
        return self.state is State.STREAMING

    @property
    def ending(self):
        """Closing or closed: nothing more is shown, no close announced again."""
        return self.state is State.CLOSING or self.state is State.CLOSED

    @property
    def keeps_count(self):
        """The socket must not uncount itself: the session's close did (or it never counted)."""
        return self.state is State.CLOSING

    def __repr__(self):
        return f"<Lifecycle {self.state.value}>"
