"""Idempotency keys of agent pushes: reading one, and what a push is for comparing. Sans-I/O.

Every agent push (seed 000's ``ui.*`` methods, ``agui.event``, ``a2ui.v09``, on the agent
socket, REST, the Python API and MCP) may carry an ``idempotency_key``: a string the agent
chooses, unique per push within the session. A retry with the same key is answered with the
original outcome and nothing is stored or shown twice (``a2ui.push.keys``).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, NamedTuple

from a2ui.core.errors import invalid_input

#: The parameter's name, in params (sockets), arguments (MCP) and keyword arguments (Python).
PARAM = "idempotency_key"
#: The REST header (the IETF httpapi draft's name).
HEADER = "Idempotency-Key"
MAX_KEY = 128


class Key(NamedTuple):
    """A key as the agent sent it, and where it sat (for errors: ``params.idempotency_key``)."""

    value: str
    path: str


def read(value: Any, path: str = f"params.{PARAM}") -> Key | None:
    """``value`` as a :class:`Key` (None when absent), or -32602 naming ``path``."""
    if value is None:
        return None
    if not isinstance(value, str) or not 0 < len(value) <= MAX_KEY or not value.isprintable():
        raise invalid_input(path, f"must be a string of 1 to {MAX_KEY} printable characters")
    return Key(value, path)


def pop(params: Any, path: str = "params") -> tuple[Any, Key | None]:
    """``(params without the key, the key or None)`` of a params object."""
    if not isinstance(params, dict) or PARAM not in params:
        return params, None
    params = dict(params)
    return params, read(params.pop(PARAM), f"{path}.{PARAM}")


def for_request(key: Key) -> Exception:
    """-32602: ``ui.request_input`` and ``ui.confirm`` take no key, their ``request_id`` is one
    (a retry with the same request_id is refused, and ``a2ui.pending`` hands the request over)."""
    return invalid_input(key.path, "not taken by requests: their request_id is their key "
                                    "(a2ui.pending takes a stored request over)")


def fingerprint(*parts: Any) -> str:
    """A hash of what is pushed: a retry must push the same thing under the same key."""
    try:
        text = json.dumps(parts, separators=(",", ":"), ensure_ascii=False, default=repr)
    except (TypeError, ValueError):
        text = repr(parts)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
