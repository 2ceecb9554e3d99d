"""RFC 6901 JSON Pointer syntax and A2UI path handling.

A2UI bindings use JSON Pointers; relative paths (no leading ``/``) are only
meaningful inside a ChildList template, so syntax and "is relative" are
separate questions. Data-model paths follow the renderers' convention: empty
segments are ignored, so ``/`` and ``""`` both mean the whole model.
"""

from __future__ import annotations

import re

_ABSOLUTE = re.compile(r"(?:/(?:[^~/]|~[01])*)*")
_RELATIVE = re.compile(r"(?:[^~/]|~[01])+(?:/(?:[^~/]|~[01])*)*")


def is_valid_path(path: str) -> bool:
    """True if ``path`` is an absolute JSON Pointer or a relative one."""
    if "~" not in path:  # only '~' escapes can be malformed
        return True
    return bool(_ABSOLUTE.fullmatch(path) or _RELATIVE.fullmatch(path))


def is_absolute_pointer(path: str) -> bool:
    """True for RFC 6901 pointers: empty or starting with ``/``, escapes well formed."""
    if path and path[0] != "/":
        return False
    return "~" not in path or bool(_ABSOLUTE.fullmatch(path))


def is_relative(path: str) -> bool:
    """A non-empty path without a leading slash is resolved against a template item."""
    return bool(path) and path[0] != "/"


def unescape_token(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def split_path(path: str) -> list[str]:
    """Reference tokens of a data-model path, empty segments dropped."""
    return [unescape_token(t) for t in path.split("/") if t]
