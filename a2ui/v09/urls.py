"""URL scheme policy for values that reach ``src``/``href`` in the renderer.

The official renderer passes media URLs straight to ``src`` and had a
``javascript:`` hole in ``openUrl``; the server must refuse anything that is not
http(s) or relative. Browsers ignore ASCII whitespace and control characters in
schemes (``java\\tscript:``), so those are stripped before looking.
"""

from __future__ import annotations

import re

ALLOWED_SCHEMES = frozenset({"http", "https"})
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
_IGNORED = re.compile(r"[\x00-\x20\x7f]")


def url_scheme(url: str) -> str | None:
    """The lower-cased scheme the browser would see, or None for a relative URL."""
    match = _SCHEME.match(_IGNORED.sub("", url))
    return match.group(1).lower() if match else None


def is_safe_url(url: str, *, allow_relative: bool = True) -> bool:
    """http/https always; relative URLs only where ``allow_relative``."""
    scheme = url_scheme(url)
    if scheme is None:
        return allow_relative and not url.lstrip().startswith("\\")
    return scheme in ALLOWED_SCHEMES
