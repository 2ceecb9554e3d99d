"""Seed 000, the A2UI JSON-RPC 2.0 WebSocket protocol: the person's socket
(/ws/v4/a2ui, ``consumer``), the agent's socket (/ws/v4/a2ui/agent, ``agent``), its words for
session events (``events``), ``a2ui.init``'s capabilities, and its registration (``adapter``)."""

#: The stream token a person's client of this protocol presents (``a2ui.tokens``: each type
#: signed with a salt of its own; the adapter declares it).
TOKEN_TYPE = "stream_a2ui"
