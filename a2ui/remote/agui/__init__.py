"""The AG-UI 1.0 client of remote agents: ``RunAgentInput`` out (``inputs``), the SSE stream
of AG-UI events in (``sse``, ``mapping``: sans-I/O), over HTTP or to an app in this process
(``client``, ``inprocess``)."""
