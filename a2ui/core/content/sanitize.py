"""Turn untrusted agent text into HTML-safe text, and vet URLs.

The rule (see docs/protocol-jsonrpc.md): every string an agent sends for display is run
through nh3 with **no tags allowed**. Script/style-like elements lose their content,
every other tag is dropped (its text kept), comments vanish, and ``<``, ``>`` and ``&``
come out as entities. The result contains no markup at all, so it is safe both when a
client inserts it as HTML and when it decodes the entities and assigns ``textContent``.
A client must never decode the entities *and then* insert the result as HTML.

URLs cannot go through nh3 (it would turn ``&`` into ``&amp;`` and change the URL), so
URL fields are instead checked by :func:`check_url` against the one URL policy
(:mod:`a2ui.core.content.urls`). Bidirectional controls (U+202A-U+202E, U+2066-U+2069, U+200E,
U+200F, U+061C) are removed from display text: ``"Invoice(1)\u202etrela:tpircsavaj exe.png"``
must not render reversed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

import nh3

from a2ui.core.content.jsonvalue import MAX_DEPTH, float_problem, int_problem
from a2ui.core.content.markdown import neutralize_links
from a2ui.core.content.urls import MAX_URL_LENGTH, is_safe_url, url_problem
from a2ui.core.errors import invalid_input

__all__ = [
    "MAX_DEPTH", "MAX_URL_LENGTH", "check_url", "clean_display_string", "clean_string",
    "clean_tree", "is_url_key", "sanitize_markdown", "sanitize_text", "sanitize_tree",
]

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

_MARKUP = re.compile(r"[<>&]")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
#: Control characters and bidirectional controls (embeddings, overrides, isolates, marks).
_CONTROL_OR_BIDI = re.compile(
    r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)
_SURROGATE = re.compile(r"[\ud800-\udfff]")


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


def clean_display_string(s: str) -> str:
    """:func:`clean_string` that also removes bidirectional controls: for strings that are
    shown (v0.9 messages, whose data-model strings are bound into the UI)."""
    return _CONTROL_OR_BIDI.sub("", _fix_surrogates(s))


def sanitize_text(s: str) -> str:
    """Return HTML-safe text: no tags, no comments; only entities such as ``&lt;``,
    ``&gt;``, ``&amp;``, ``&nbsp;`` may remain. Idempotent.

    Strings without ``<``, ``>`` or ``&`` are already HTML-safe and skip nh3 (most table
    cells), which keeps a 1 MB table render cheap.
    """
    s = clean_display_string(s)
    if not _MARKUP.search(s):
        return s
    return nh3.clean(s, tags=set(), clean_content_tags=set(CLEAN_CONTENT_TAGS))


def is_url_key(key: object, url_keys: Iterable[str] = URL_KEYS) -> bool:
    """Whether values under ``key`` are URLs (``url``, ``href``, ``src``, ``*_url``...)."""
    if not isinstance(key, str):
        return False
    return key in url_keys or key.endswith(URL_KEY_SUFFIXES)


def check_url(url: object, path: str, *, allow_relative: bool = True) -> str:
    """Return ``url`` unchanged if :func:`a2ui.core.content.urls.url_problem` accepts it: an
    http(s) URL with a host, or a relative URL (unless ``allow_relative`` is false).

    Rejected with -32602 (``data.path`` = ``path``, ``data.reason`` = the problem): other
    schemes (``javascript:``, ``data:``...), protocol-relative ``//host``, whitespace, control
    or format characters anywhere, entity-encoded schemes, quotes/angle brackets/backslashes,
    credentials, invalid (bracketed) hosts, URLs longer than 2048 characters.
    """
    problem = url_problem(url, allow_relative=allow_relative)
    if problem is not None:
        raise invalid_input(path, problem)
    return url  # type: ignore[return-value]


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
        raise invalid_input(path, f"nested deeper than {MAX_DEPTH} levels")
    if isinstance(obj, str):
        return text(obj)
    if obj is None or isinstance(obj, bool):
        return obj
    if isinstance(obj, int):
        problem = int_problem(obj)
        if problem is not None:
            raise invalid_input(path, problem)
        return obj
    if isinstance(obj, float):
        if float_problem(obj) is not None:
            raise invalid_input(path, "NaN and Infinity are not JSON numbers")
        return obj
    if isinstance(obj, dict):
        url_keys = frozenset(url_keys)
        out: dict[str, Any] = {}
        for key, value in obj.items():
            if not isinstance(key, str):
                raise invalid_input(path, "object keys must be strings")
            child = _join(path, key)
            # The key as it is stored decides ("url\x7f" is stored as "url": a URL field)
            name = text(key)
            if isinstance(value, str) and is_url_key(name, url_keys):
                out[name] = check_url(value, child)
            else:
                out[name] = sanitize_tree(value, url_keys, child, text=text, _depth=_depth + 1)
        return out
    if isinstance(obj, list | tuple):
        return [
            sanitize_tree(item, url_keys, f"{path}[{i}]", text=text, _depth=_depth + 1)
            for i, item in enumerate(obj)
        ]
    raise invalid_input(path, f"unsupported value of type {type(obj).__name__}")


def keys_as_stored(obj: Any, path: str = "", *, _depth: int = 0) -> Any:
    """``obj`` with every object key as :func:`sanitize_tree` stores it, values untouched: what
    a component's checks must see (``"x_axis\x7f"`` is stored as ``"x_axis"``, so it is
    checked as ``x_axis``). Of keys stored alike, the last wins, as in storage."""
    if _depth > MAX_DEPTH:
        raise invalid_input(path, f"nested deeper than {MAX_DEPTH} levels")
    if isinstance(obj, dict):
        return {sanitize_text(k) if isinstance(k, str) else k:
                keys_as_stored(v, _join(path, k), _depth=_depth + 1) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [keys_as_stored(v, f"{path}[{i}]", _depth=_depth + 1) for i, v in enumerate(obj)]
    return obj


def clean_tree(obj: Any, path: str = "") -> Any:
    """Like :func:`sanitize_tree` but without HTML processing or URL checks: for raw user
    data (``user.respond`` values) that agents must receive byte-for-byte."""
    return sanitize_tree(obj, (), path, text=clean_string)


def sanitize_markdown(s: str) -> str:
    """HTML-safe text (like :func:`sanitize_text`) whose markdown link, image, reference
    definition and autolink targets are also vetted by the URL policy: ``[x](javascript:...)``
    becomes ``[x](#)`` (see :mod:`a2ui.core.content.markdown`). Raw HTML inside markdown is
    stripped like any other markup; clients still render markdown with HTML disabled."""
    return neutralize_links(sanitize_text(s), is_safe_url)
