"""A2UI v0.9 for people: the WebSocket /ws/v09/a2ui (``consumer``), the SSE stream of a
session's surfaces (``stream``) and its registration (``adapter``). The surface model it
serves (validation, state, catalogs) is the core's: ``a2ui.core.surfaces``."""

#: The stream token a person's client of this protocol presents (``a2ui.tokens``: each type
#: signed with a salt of its own; the adapter declares it).
TOKEN_TYPE = "stream_a2ui"
