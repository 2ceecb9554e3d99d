"""The one URL policy (seed-000 ``check_url``, v0.9 ``is_safe_url``, markdown links): sans-I/O.

:func:`url_problem` returns why a URL is refused, or None. The rules, in order (the test
vectors are tests/protocol/url_cases.json; the web client passes the same file):

1. a non-empty string of at most :data:`MAX_URL_LENGTH` characters;
2. no whitespace, control, format (bidi, zero-width), separator or surrogate characters
   anywhere, and none of ``" ' < > ` \\`` (percent-encode them; browsers read ``\\`` as ``/``);
3. not protocol-relative (``//host``);
4. with a scheme (``name:`` before any ``/ ? #``): only ``http``/``https`` (any case), followed by
   ``//``, a host that parses (a bracketed host must be a valid IPv6 address, no zone id), a
   port within 0..65535, no credentials (``user@``);
5. without a scheme: a relative URL, only where ``allow_relative``; its first segment (before
   any ``/ ? #``) must not contain ``:`` (RFC 3986 "path-noscheme", so ``[x](javascript:..)``
   is not a "relative" URL);
6. the same again after HTML entity decoding (``javascript&colon;``, ``&#106;avascript:``),
   up to three rounds, because a client that puts the URL in an attribute gets the decoded form.
"""

from __future__ import annotations

import html
import ipaddress
import re
import unicodedata
from urllib.parse import urlsplit

MAX_URL_LENGTH = 2048
ALLOWED_SCHEMES = frozenset({"http", "https"})

_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
_FORBIDDEN = frozenset("\"'<>`\\")
_REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp", "Zs"})
_FIRST_SEGMENT = re.compile(r"[^/?#]*")
_ENTITY_ROUNDS = 3


def _character_problem(url: str) -> str | None:
    if url.isascii() and url.isprintable():  # fast path: printable ASCII has no refused category
        bad = next((ch for ch in url if ch in _FORBIDDEN or ch == " "), None)
    else:
        bad = next((ch for ch in url if ch in _FORBIDDEN or ch.isspace()
                    or unicodedata.category(ch) in _REFUSED_CATEGORIES), None)
    if bad is None:
        return None
    if bad in _FORBIDDEN:
        return f"character {bad!r} is not allowed in a URL (percent-encode it)"
    return "whitespace and control characters are not allowed in a URL"


def _one_round(url: str, allow_relative: bool) -> str | None:
    problem = _character_problem(url)
    if problem is not None:
        return problem
    if url.startswith("//"):
        return "protocol-relative URLs are not allowed"
    match = _SCHEME.match(url)
    if match is None:
        if not allow_relative:
            return "only absolute http(s) URLs are allowed here"
        if ":" in _FIRST_SEGMENT.match(url).group():
            return "a relative URL must not have ':' before the first '/', '?' or '#'"
        return None
    if match.group(1).lower() not in ALLOWED_SCHEMES:
        return f"URL scheme {match.group(1)[:32]!r} is not allowed (only http and https)"
    if not url[match.end():].startswith("//"):
        return "absolute URLs must have the form http(s)://host/..."
    try:
        parts = urlsplit(url)
        host = parts.hostname
        parts.port  # noqa: B018 - raises ValueError for a port outside 0..65535
        if "[" in parts.netloc or "]" in parts.netloc:
            if "%" in (host or ""):
                raise ValueError("zone ids are not allowed")
            ipaddress.IPv6Address(host or "")  # no IPvFuture
    except ValueError:
        return "the URL's host or port is not valid (a bracketed host must be an IPv6 address)"
    if not host:
        return "absolute URLs must have the form http(s)://host/..."
    if "@" in parts.netloc:
        return "credentials in URLs are not allowed"
    return None


def url_problem(url: object, *, allow_relative: bool = True) -> str | None:
    """Why ``url`` is refused, or None if it is safe to put in ``href``/``src``."""
    if not isinstance(url, str):
        return "must be a string URL"
    if not url:
        return "URL must not be empty"
    if len(url) > MAX_URL_LENGTH:
        return f"URL longer than {MAX_URL_LENGTH} characters"
    candidate = url
    for _ in range(_ENTITY_ROUNDS):
        problem = _one_round(candidate, allow_relative)
        if problem is not None:
            return problem
        decoded = html.unescape(candidate)
        if decoded == candidate:
            return None
        candidate = decoded
    return "URL is entity-encoded too deeply"


def is_safe_url(url: object, *, allow_relative: bool = True) -> bool:
    return url_problem(url, allow_relative=allow_relative) is None
