"""URL policy for values that reach ``src``/``href`` in the renderer.

The official renderer passes media URLs straight to ``src`` and had a
``javascript:`` hole in ``openUrl``; the server must refuse anything that is not
http(s) or relative. The policy is the one of the whole app,
:func:`a2ui.core.content.urls.url_problem` (the same as seed-000's ``check_url``): no
whitespace or control characters anywhere, no protocol-relative ``//host``, no
backslashes, no credentials, valid hosts only, entity-encoded schemes decoded first.
"""

from __future__ import annotations

import re

from a2ui.core.content.urls import ALLOWED_SCHEMES, is_safe_url, url_problem

__all__ = ["ALLOWED_SCHEMES", "is_safe_url", "url_problem", "url_scheme"]

_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
_IGNORED = re.compile(r"[\x00-\x20\x7f]")


def url_scheme(url: str) -> str | None:
    """The lower-cased scheme the browser would see, or None for a relative URL."""
    match = _SCHEME.match(_IGNORED.sub("", url))
    return match.group(1).lower() if match else None
