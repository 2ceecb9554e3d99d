"""``ui.update`` operations applied to a component's stored data.

The service loads the component (it knows its type and current data), calls
:func:`apply_update`, and stores/pushes the result. The result is always re-validated
as the component's type, so no sequence of updates can produce a component that a
``ui.render`` would have refused.
"""

from __future__ import annotations

import json
from typing import Any

from a2ui.core.content import fields as f
from a2ui.core.content.components import validate_component
from a2ui.core.errors import DomainError, Fault, invalid_input

OPERATIONS = ("replace", "merge", "append")
P = "params.data"


def _replace(current: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """The patch is the complete new data."""
    return dict(patch)


def _merge(current: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """Shallow merge: top-level keys of the patch win; a ``null`` value removes the key
    (like RFC 7386 at the top level), so optional fields can be cleared."""
    merged = {**current, **patch}
    return {k: v for k, v in merged.items() if v is not None}


def _append(current: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """Extend lists: ``{"rows": [...]}`` adds rows. Both sides must already be lists; an
    absent target is refused too, so a typo ("row") cannot silently create a new key."""
    out = dict(current)
    for key, items in patch.items():
        if not isinstance(items, list):
            raise invalid_input(f.join(P, key), "append values must be arrays")
        if not isinstance(current.get(key), list):
            raise invalid_input(f.join(P, key), "the component has no array at this key")
        out[key] = [*current[key], *items]
    return out


_OPERATIONS = {"replace": _replace, "merge": _merge, "append": _append}


def apply_update(
    component_type: str,
    current: dict[str, Any],
    operation: str,
    patch: dict[str, Any],
    *,
    max_size: int | None = None,
) -> dict[str, Any]:
    """Return the component's new data: ``operation`` applied, validated, sanitized.

    ``max_size`` (bytes of the encoded result) bounds what repeated appends can grow a
    component to; beyond it the update is -32002.
    """
    apply = _OPERATIONS.get(operation)
    if apply is None:
        raise invalid_input("params.operation", f"must be one of {', '.join(OPERATIONS)}")
    f.obj(patch, P)
    updated = validate_component(component_type, apply(current, patch), P)
    if max_size is not None:
        size = len(json.dumps(updated, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))
        if size > max_size:
            raise DomainError(
                Fault.PAYLOAD_TOO_LARGE, None,
                data={"path": P, "reason": f"component data would be {size} bytes"},
            )
    return updated
