"""MCP at /mcp (seeds 004 and 002): docs/protocol-mcp.md. Registered by ``a2ui.mcp.adapter``."""
