"""The lifecycles of what the database keeps (sessions, pending requests, runs), as pure
transition tables. Sans-I/O.

Like the socket's (``a2ui.core.lifecycle``) and h11's, each is a table of ``(state, event) ->
next state``; unlike a socket's, the state lives in a row that several processes may change at
once, so every change is a conditional UPDATE derived from the table: ``WHERE state IN
sources(event)`` then ``SET state = target(event)``. Of two writers racing, one changes the
row and the other changes nothing and learns it lost. Each domain package writes its own rows
through its table (``a2ui.sessions``, ``a2ui.requests``, ``a2ui.runs``); the models' choices
hold the same values.
"""


class IllegalTransition(Exception):
    def __init__(self, table, state, event):
        super().__init__(f"{table}: {event!r} is not possible while {state!r}")
        self.state, self.event = state, event


class Table:
    """One lifecycle: ``transitions`` maps ``(state, event)`` to the next state. An event
    leads to one state whatever the state it leaves (so a row's UPDATE needs no CASE)."""

    def __init__(self, name, initial, transitions):
        self.name, self.initial = name, initial
        self.transitions = dict(transitions)
        self._targets = {}
        for (_, event), target in self.transitions.items():
            if self._targets.setdefault(event, target) != target:
                raise ValueError(f"{name}: {event!r} leads to two states")
        self._into = {target: event for event, target in self._targets.items()}
        if len(self._into) != len(self._targets):
            raise ValueError(f"{name}: two events lead to one state")
        #: the states something can still happen to (a live session, an open request, a
        #: running run): those with a way out
        self.live = tuple(dict.fromkeys(s for s, _ in self.transitions))
        self.states = tuple(dict.fromkeys(
            [initial, *self.live, *self.transitions.values()]))
        self.final = tuple(s for s in self.states if s not in self.live)

    def next(self, state, event):
        try:
            return self.transitions[(state, event)]
        except KeyError:
            raise IllegalTransition(self.name, state, event) from None

    def can(self, state, event):
        return (state, event) in self.transitions

    def sources(self, event):
        """The states ``event`` may leave: the UPDATE's ``WHERE state IN (...)``."""
        if event not in self._targets:
            raise IllegalTransition(self.name, None, event)
        return tuple(s for (s, e) in self.transitions if e == event)

    def target(self, event):
        """The state ``event`` leads to: the UPDATE's ``SET state = ...``."""
        try:
            return self._targets[event]
        except KeyError:
            raise IllegalTransition(self.name, None, event) from None

    def into(self, state):
        """The event that leads to ``state`` (a caller that names the outcome it records)."""
        try:
            return self._into[state]
        except KeyError:
            raise IllegalTransition(self.name, None, f"into {state!r}") from None


# Sessions (``A2UISessionLog.state``) -----------------------------------------------------------

CONNECTED, INITIALIZED, ACTIVE = "connected", "initialized", "active"
CLOSED, REJECTED, TIMED_OUT = "closed", "rejected", "timed_out"

#: A session is opened by its client's handshake (``initialized``: ``a2ui.sessions.admission``
#: creates it so), becomes ``active`` at the agent's first push (the counters' flush), and ends
#: closed (by a person, an agent, an operator, the sweep past the resume window), timed out
#: (idle) or rejected. Ended is final.
SESSIONS = Table("session", INITIALIZED, {
    (CONNECTED, "initialize"): INITIALIZED,
    (INITIALIZED, "first_push"): ACTIVE,
    **{(s, "close"): CLOSED for s in (CONNECTED, INITIALIZED, ACTIVE)},
    **{(s, "time_out"): TIMED_OUT for s in (CONNECTED, INITIALIZED, ACTIVE)},
    **{(s, "reject"): REJECTED for s in (CONNECTED, INITIALIZED, ACTIVE)},
})

# Pending requests (``PendingRequest.status``) --------------------------------------------------

PENDING, ANSWERED, CANCELLED = "pending", "answered", "cancelled"

#: A request waits (``pending``) for one outcome: the person's answer, its deadline, or a
#: cancel (its session ended, the agent withdrew it). Whichever UPDATE comes first wins.
REQUESTS = Table("request", PENDING, {
    (PENDING, "answer"): ANSWERED,
    (PENDING, "time_out"): TIMED_OUT,
    (PENDING, "cancel"): CANCELLED,
})

# Runs (``AgentRun.status``) ----------------------------------------------------------------

RUNNING, FINISHED, ERROR, INTERRUPTED = "running", "finished", "error", "interrupted"

#: A run of the agent (an AG-UI 1.0 run against this server) runs until the agent finishes or
#: fails it, its stream is interrupted for good, it times out or is cancelled.
RUNS = Table("run", RUNNING, {
    (RUNNING, "finish"): FINISHED,
    (RUNNING, "fail"): ERROR,
    (RUNNING, "interrupt"): INTERRUPTED,
    (RUNNING, "time_out"): TIMED_OUT,
    (RUNNING, "cancel"): CANCELLED,
})
