"""MCP at /mcp (seeds 004 and 002): docs/protocol-mcp.md. Registered by ``a2ui.mcp.adapter``."""

#: The stream token a person's client of this protocol presents (``a2ui.tokens``: each type
#: signed with a salt of its own; the adapter declares it).
TOKEN_TYPE = "stream_mcp"
