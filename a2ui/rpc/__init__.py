"""JSON-RPC 2.0, sans-I/O: framing (``jsonrpc``) and the A2UI error codes (``errors``),
shared by every protocol that speaks JSON-RPC (seed 000, MCP's agent tools, seed 003's rpc)."""
