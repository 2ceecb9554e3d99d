"""Turn untrusted agent text into HTML-safe text, and vet URLs.

The rule (see docs/protocol-jsonrpc.md): every string an agent sends for display is run
through nh3 with **no tags allowed**. Script/style-like elements lose their content,
every other tag is dropped (its text kept), comments vanish, and ``<``, ``>`` and ``&``
come out as entities. The result contains no markup at all, so it is safe both when a
client inserts it as HTML and when it decodes the entities and assigns ``textContent``.
A client must never decode the entities *and then* insert the result as HTML.

URLs cannot go through nh3 (it would turn ``&`` into ``&amp;`` and change the URL), so
URL fields are instead checked against an allow-list by :func:`check_url`.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import urlsplit

import nh3

from .errors import ProtocolError, invalid_params

#: Elements removed together with their content (nh3's default is script and style only).
CLEAN_CONTENT_TAGS = frozenset(
    {
        "script",
        "style",
        "template",
        "iframe",
        "noscript",
        "noembed",
        "noframes",
        "object",
        "svg",
        "math",
    }
)

#: Keys whose string values are URLs: checked by :func:`check_url`, never HTML-sanitized.
URL_KEYS = frozenset({"url", "href", "src"})
#: Key suffixes that also mark a URL field (``thumbnail_url``, ``next_href``...).
URL_KEY_SUFFIXES = ("_url", "_href")

MAX_URL_LENGTH = 2048
#: Deepest nesting of objects/arrays accepted in params; stops recursion bombs.
MAX_DEPTH = 32

_ALLOWED_SCHEMES = frozenset({"http", "https"})
_MARKUP = re.compile(r"[<>&]")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*):")
# Characters that would let a URL break out of an HTML attribute, or that browsers
# rewrite (backslash becomes "/" for http(s), making "/\evil" protocol-relative).
_URL_FORBIDDEN = frozenset("\"'<>`\\")


def _fix_surrogates(s: str) -> str:
    """JSON ``"\\ud800"`` escapes yield lone surrogates, which cannot be UTF-8 encoded
    (nh3 and the WebSocket send would both fail). Re-pair valid pairs; replace the rest."""
    if not _SURROGATE.search(s):
        return s
    return s.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def clean_string(s: str) -> str:
    """Make a string safely encodable: fix surrogates, drop C0/C1 control characters
    (tab, LF and CR are kept). No HTML processing; used for raw user data."""
    return _CONTROL.sub("", _fix_surrogates(s))


def sanitize_text(s: str) -> str:
    """Return HTML-safe text: no tags, no comments; only entities such as ``&lt;``,
    ``&gt;``, ``&amp;``, ``&nbsp;`` may remain. Idempotent.

    Strings without ``<``, ``>`` or ``&`` are already HTML-safe and skip nh3 (most table
    cells), which keeps a 1 MB table render cheap.
    """
    s = clean_string(s)
    if not _MARKUP.search(s):
        return s
    return nh3.clean(s, tags=set(), clean_content_tags=set(CLEAN_CONTENT_TAGS))


def is_url_key(key: object, url_keys: Iterable[str] = URL_KEYS) -> bool:
    """Whether values under ``key`` are URLs (``url``, ``href``, ``src``, ``*_url``...)."""
    if not isinstance(key, str):
        return False
    return key in url_keys or key.endswith(URL_KEY_SUFFIXES)


def _url_problem(url: str) -> str | None:
    """Why ``url`` is unsafe, or None. Checked on the raw string and on its HTML-decoded
    form, because a client that puts it in an attribute gets the decoded one."""
    for ch in url:
        if ch in _URL_FORBIDDEN:
            return f"character {ch!r} is not allowed in a URL (percent-encode it)"
        if ch.isspace() or unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Zl", "Zp", "Zs"):
            return "whitespace and control characters are not allowed in a URL"
    if url.startswith("//"):
        return "protocol-relative URLs are not allowed"
    match = _SCHEME.match(url)
    if match is None:
        return None  # relative: path, ?query or #fragment on the page's own origin
    if match.group(1).lower() not in _ALLOWED_SCHEMES:
        return f"URL scheme {match.group(1)!r} is not allowed (only http and https)"
    parts = urlsplit(url)
    if not url[match.end() :].startswith("//") or not parts.hostname:
        return "absolute URLs must have the form http(s)://host/..."
    if "@" in parts.netloc:
        return "credentials in URLs are not allowed"
    return None


def check_url(url: object, path: str) -> str:
    """Return ``url`` unchanged if it is an http(s) URL with a host or a relative URL.

    Rejected with -32602 (``data.path`` = ``path``): other schemes (``javascript:``,
    ``data:``, ``vbscript:``, ``file:``...), protocol-relative ``//host``, whitespace or
    control characters anywhere (``"java\\tscript:"``, leading spaces), entity-encoded
    schemes (``javascript&colon;``), quotes/angle brackets/backslashes, credentials, and
    URLs longer than 2048 characters.
    """
    if not isinstance(url, str):
        raise invalid_params(path, "must be a string URL")
    if not url:
        raise invalid_params(path, "URL must not be empty")
    if len(url) > MAX_URL_LENGTH:
        raise invalid_params(path, f"URL longer than {MAX_URL_LENGTH} characters")
    candidate = url
    for _ in range(3):  # entities can be nested: &amp;colon; -> &colon; -> :
        problem = _url_problem(candidate)
        if problem is not None:
            raise invalid_params(path, problem)
        decoded = html.unescape(candidate)
        if decoded == candidate:
            return url
        candidate = decoded
    raise invalid_params(path, "URL is entity-encoded too deeply")


def _join(path: str, key: object) -> str:
    return f"{path}.{key}" if path else str(key)


def sanitize_tree(
    obj: Any,
    url_keys: Iterable[str] = URL_KEYS,
    path: str = "",
    *,
    text: Callable[[str], str] = sanitize_text,
    _depth: int = 0,
) -> Any:
    """Return a copy of a JSON value with every string sanitized, URL fields checked.

    Dict keys are sanitized too (a table header ``key`` and the row keys it addresses
    must stay equal). Values under URL keys go through :func:`check_url` instead. Only
    JSON types are accepted; nesting deeper than :data:`MAX_DEPTH` is -32602.
    """
    if _depth > MAX_DEPTH:
        raise invalid_params(path, f"nested deeper than {MAX_DEPTH} levels")
    if isinstance(obj, str):
        return text(obj)
    if obj is None or isinstance(obj, bool | int):
        return obj
    if isinstance(obj, float):
        if obj != obj or obj in (float("inf"), float("-inf")):
            raise invalid_params(path, "NaN and Infinity are not JSON numbers")
        return obj
    if isinstance(obj, dict):
        url_keys = frozenset(url_keys)
        out: dict[str, Any] = {}
        for key, value in obj.items():
            if not isinstance(key, str):
                raise invalid_params(path, "object keys must be strings")
            child = _join(path, key)
            if isinstance(value, str) and is_url_key(key, url_keys):
                out[text(key)] = check_url(value, child)
            else:
                out[text(key)] = sanitize_tree(value, url_keys, child, text=text, _depth=_depth + 1)
        return out
    if isinstance(obj, list | tuple):
        return [
            sanitize_tree(item, url_keys, f"{path}[{i}]", text=text, _depth=_depth + 1)
            for i, item in enumerate(obj)
        ]
    raise invalid_params(path, f"unsupported value of type {type(obj).__name__}")


def clean_tree(obj: Any, path: str = "") -> Any:
    """Like :func:`sanitize_tree` but without HTML processing or URL checks: for raw user
    data (``user.respond`` values) that agents must receive byte-for-byte."""
    return sanitize_tree(obj, (), path, text=clean_string)


# CommonMark link destinations may contain balanced parentheses: "(a(b)c)".
_MD_INLINE_LINK = re.compile(r"(\]\(\s*<?)([^()\s>]*(?:\([^()\s]*\)[^()\s>]*)*)")
_MD_REF_DEF = re.compile(r"^( {0,3}\[[^\]]+\]:\s*<?)(\S*?)(>?(?:\s|$))", re.MULTILINE)


def _safe_or_hash(url: str) -> str:
    """``url`` (still entity-encoded) if its decoded form passes :func:`check_url`, else ``#``."""
    try:
        check_url(html.unescape(url), "")
    except ProtocolError:
        return "#"
    return url


def sanitize_markdown(s: str) -> str:
    """HTML-safe text (like :func:`sanitize_text`) whose markdown link and image targets
    are also vetted: ``[x](javascript:...)`` becomes ``[x](#)``. Raw HTML inside markdown
    is stripped like any other markup; clients still render markdown with HTML disabled."""
    s = sanitize_text(s)
    s = _MD_INLINE_LINK.sub(lambda m: m.group(1) + _safe_or_hash(m.group(2)), s)
    return _MD_REF_DEF.sub(lambda m: m.group(1) + _safe_or_hash(m.group(2)) + m.group(3), s)
