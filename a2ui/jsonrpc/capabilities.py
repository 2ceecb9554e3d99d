"""What the server tells a client in the ``a2ui.init`` result (seed 000 §4.2)."""

from __future__ import annotations

from typing import Any

from a2ui.core.content.components import all_types
from a2ui.rpc.jsonrpc import DEFAULT_MAX_SIZE

DEFAULT_RATE_LIMIT_PER_MINUTE = 60


def server_capabilities(
    max_payload_size: int = DEFAULT_MAX_SIZE,
    rate_limit_per_minute: int = DEFAULT_RATE_LIMIT_PER_MINUTE,
    **extra: Any,
) -> dict[str, Any]:
    """``server_capabilities`` in the order of the seed example, then any ``extra`` keys
    (e.g. ``protocol_versions``) so deployments can advertise more without a new API."""
    caps: dict[str, Any] = {
        "max_payload_size": max_payload_size,
        "supported_components": list(all_types()),
        "rate_limit_per_minute": rate_limit_per_minute,
    }
    caps.update(extra)
    return caps


def init_result(session_id: Any, capabilities: dict[str, Any]) -> dict[str, Any]:
    """The ``result`` of ``a2ui.init``: ``{session_id, server_capabilities}``."""
    return {"session_id": str(session_id), "server_capabilities": capabilities}
