"""Field checkers shared by the component and method validators.

Each checker reads one key of a dict, raises -32602 with the exact JSON path on a bad
value, and returns the value (or a default). Keeping them tiny and uniform is what lets
every validator report ``{"path": "params.data.rows[2].name", "reason": ...}``.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any

from a2ui.core.errors import invalid_input

_MISSING = object()
ID_PATTERN = re.compile(r"[A-Za-z0-9._:\-]{1,128}")
#: A name (an action type, a component id of the AG-UI side): at most this many characters.
MAX_NAME = 256
_NOT_IN_NAME = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


def join(path: str, key: str) -> str:
    """``join("params", "data") == "params.data"``."""
    return f"{path}.{key}" if path else key


def index(path: str, i: int) -> str:
    """``index("params.data.rows", 2) == "params.data.rows[2]"``."""
    return f"{path}[{i}]"


def get(d: dict[str, Any], key: str, path: str, required: bool) -> Any:
    """The value at ``key``; ``_MISSING`` when optional and absent or null."""
    value = d.get(key, _MISSING)
    if value is _MISSING or (value is None and not required):
        if required:
            raise invalid_input(join(path, key), "is required")
        return _MISSING
    return value


def is_missing(value: Any) -> bool:
    return value is _MISSING


def obj(value: Any, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise invalid_input(path, "must be an object")
    return value


def string(
    d: dict[str, Any],
    key: str,
    path: str,
    *,
    required: bool = False,
    non_empty: bool = False,
    max_length: int | None = None,
) -> Any:
    value = get(d, key, path, required)
    if is_missing(value):
        return value
    if not isinstance(value, str):
        raise invalid_input(join(path, key), "must be a string")
    if non_empty and not value.strip():
        raise invalid_input(join(path, key), "must not be empty")
    if max_length is not None and len(value) > max_length:
        raise invalid_input(join(path, key), f"longer than {max_length} characters")
    return value


def identifier(d: dict[str, Any], key: str, path: str, *, required: bool = True) -> Any:
    """component_id / request_id / task_id: 1-128 chars of ``[A-Za-z0-9._:-]``.

    Seed §10 uses ids like "c1" and "r1", so UUIDs are allowed but not required. The
    alphabet keeps ids safe in channel group names, CSS selectors and log lines.
    """
    value = get(d, key, path, required)
    if is_missing(value):
        return value
    if not isinstance(value, str) or not ID_PATTERN.fullmatch(value):
        raise invalid_input(join(path, key), "must be 1-128 characters of [A-Za-z0-9._:-]")
    return value


def name_reason(value: Any, max_length: int = MAX_NAME) -> str | None:
    """Why ``value`` is not a name (an action type, a component id a person's action names, a
    catalog id), or None: a name is one line of text (no control characters, NUL included,
    which no database stores, and no lone surrogates; 1 to ``max_length`` characters)."""
    if not isinstance(value, str):
        return "must be a string"
    if not value or len(value) > max_length:
        return f"must be 1 to {max_length} characters"
    if _NOT_IN_NAME.search(value):
        return "must not contain control characters"
    return None


def name(d: dict[str, Any], key: str, path: str, *, required: bool = True) -> Any:
    """A name (:func:`name_reason`) at ``key``; -32602 naming it otherwise."""
    value = get(d, key, path, required)
    if is_missing(value):
        return value
    reason = name_reason(value)
    if reason:
        raise invalid_input(join(path, key), reason)
    return value


def enum(
    d: dict[str, Any],
    key: str,
    choices: Collection[str],
    path: str,
    *,
    required: bool = False,
    default: Any = _MISSING,
) -> Any:
    value = get(d, key, path, required)
    if is_missing(value):
        return default
    if not isinstance(value, str) or value not in choices:
        raise invalid_input(join(path, key), f"must be one of {', '.join(choices)}")
    return value


def integer(
    d: dict[str, Any],
    key: str,
    path: str,
    *,
    required: bool = False,
    default: Any = _MISSING,
    minimum: int | None = None,
    maximum: int | None = None,
) -> Any:
    value = get(d, key, path, required)
    if is_missing(value):
        return default
    if isinstance(value, float) and value.is_integer():
        value = int(value)  # 30.0 from a JS client is 30
    if not isinstance(value, int) or isinstance(value, bool):
        raise invalid_input(join(path, key), "must be an integer")
    _bounds(value, join(path, key), minimum, maximum)
    return value


def number(
    d: dict[str, Any],
    key: str,
    path: str,
    *,
    required: bool = False,
    minimum: float | None = None,
    maximum: float | None = None,
) -> Any:
    value = get(d, key, path, required)
    if is_missing(value):
        return value
    if not is_number(value):
        raise invalid_input(join(path, key), "must be a number")
    _bounds(value, join(path, key), minimum, maximum)
    return value


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _bounds(value: float, path: str, minimum: float | None, maximum: float | None) -> None:
    if minimum is not None and value < minimum:
        raise invalid_input(path, f"must be >= {minimum}")
    if maximum is not None and value > maximum:
        raise invalid_input(path, f"must be <= {maximum}")


def boolean(
    d: dict[str, Any], key: str, path: str, *, required: bool = False, default: Any = _MISSING
) -> Any:
    value = get(d, key, path, required)
    if is_missing(value):
        return default
    if not isinstance(value, bool):
        raise invalid_input(join(path, key), "must be a boolean")
    return value


def array(
    d: dict[str, Any], key: str, path: str, *, required: bool = False, non_empty: bool = False
) -> Any:
    value = get(d, key, path, required)
    if is_missing(value):
        return value
    if not isinstance(value, list):
        raise invalid_input(join(path, key), "must be an array")
    if non_empty and not value:
        raise invalid_input(join(path, key), "must not be empty")
    return value


def objects(d: dict[str, Any], key: str, path: str, *, required: bool = False) -> Any:
    """An array whose items are all objects; yields nothing when optional and absent."""
    items = array(d, key, path, required=required)
    if is_missing(items):
        return []
    for i, item in enumerate(items):
        obj(item, index(join(path, key), i))
    return items


def strings(d: dict[str, Any], key: str, path: str, *, required: bool = False) -> Any:
    """An array of strings."""
    items = array(d, key, path, required=required)
    if is_missing(items):
        return items
    for i, item in enumerate(items):
        if not isinstance(item, str):
            raise invalid_input(index(join(path, key), i), "must be a string")
    return items


def set_default(out: dict[str, Any], key: str, value: Any) -> None:
    """Store a checked value unless it is the missing marker (keeps output minimal)."""
    if not is_missing(value):
        out[key] = value
