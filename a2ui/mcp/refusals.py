"""An MCP tool's invalid arguments, as every tool of /mcp refuses them (-32602, counted)."""

from mcp.shared.exceptions import MCPError

from a2ui.infra import prom
from a2ui.rpc.errors import ErrorCode


def invalid(path, reason):
    if prom.ON:
        prom.refused("mcp", int(ErrorCode.INVALID_PARAMS))
    return MCPError(int(ErrorCode.INVALID_PARAMS), f"Invalid params: {path} {reason}",
                    {"path": path, "reason": reason})
