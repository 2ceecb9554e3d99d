"""AG-UI 1.0 over HTTP + SSE (``POST /api/v4/agui/run``): docs/protocol-agui.md.

``inputs`` (the RunAgentInput body), ``translate`` (a run's state and the core's session events
as AG-UI 1.0 events) and ``interrupts`` are sans-I/O; ``threads`` (thread id -> session),
``view`` (checks before the stream), ``stream`` (the SSE loop) and ``resume`` (a client back
at a run whose stream broke off: ``Last-Event-ID``) are the I/O; ``adapter`` is the
registration. The agent's side of a run is ``a2ui.runs.records``.
"""

#: The stream token a person's client of this protocol presents (``a2ui.tokens``: each type
#: signed with a salt of its own; the adapter declares it).
TOKEN_TYPE = "stream_agui"
