"""The one JSON value policy of every edge (sockets, REST, Python API): sans-I/O.

JSON allows values that the transports behind the edge cannot carry or that browsers read
differently, so they are refused where they come in, before any state changes
(docs/protocol-jsonrpc.md, "JSON values"):

* integers outside the I-JSON range (RFC 7493 §2.2), ``-(2**53-1)..2**53-1``: browsers lose
  precision beyond it and msgpack (the channel layer) refuses ``>= 2**64``;
* ``NaN``/``Infinity`` literals and numbers that overflow a double (``1e400`` would be ``inf``);
* lone UTF-16 surrogates (``"\\ud800"``), which I-JSON forbids and UTF-8 cannot encode;
* NUL (U+0000) in object keys, which PostgreSQL's jsonb refuses (and which would make
  ``"k\\u0000"`` and ``"k"`` the same key once cleaned). In string values it is one of the
  control characters the cleaners remove;
* nesting deeper than :data:`MAX_DEPTH` below the field that holds a free-form value
  (checked by the cleaners, which walk the values anyway).

:func:`loads` parses text under the policy. Frames that cannot hold a bad value (no run of 16
digits, no 3-digit exponent, no ``\\ud8..``-``\\udf..`` or ``\\u0000`` escape: a few C-speed passes
over the text, see ``bench/bench_jsonvalue.py``) are parsed by the C decoder alone. Text that
could hold a refused number is parsed with checking hooks; the document is walked, so that the
error names the path of the offending value, only when a hook refused something or the text
holds a surrogate or NUL escape.
"""

from __future__ import annotations

import json
import re
from typing import Any

#: I-JSON's safe integer range (RFC 7493 §2.2; JavaScript's Number.MAX_SAFE_INTEGER).
MAX_SAFE_INTEGER = 2**53 - 1
#: The one nesting limit for free-form JSON values (seed-000 params, v0.9 messages).
MAX_DEPTH = 32

_SURROGATE = re.compile(r"[\ud800-\udfff]")
_ESCAPE = re.compile(r"\\u(?:[dD][89a-fA-F]|0000)")
# What a bad number needs in the raw text: 16+ digits in a row (an integer beyond 2**53-1, or a
# double with more digits than it can hold) or a digit, "e" and a 3-digit exponent (overflow;
# "+" is deleted, "1e-400" is only 0.0). One translate() maps digits to "0", e/E to "e",
# everything else to " ", then two substring searches (bench/bench_jsonvalue.py).
_MARKS = bytes(48 if 48 <= b <= 57 else 101 if b in (69, 101) else 32 for b in range(256))
_DIGITS16 = b"0" * 16
_BIG_EXPONENT = b"0e000"


class JSONValueError(ValueError):
    """A value the policy refuses. ``path`` is a tuple of keys and indexes from the root;
    ``document`` is the parsed document when there is one (to read a request id from)."""

    def __init__(self, reason: str, path: tuple = (), document: Any = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.path = path
        self.document = document

    @property
    def dotted(self) -> str:
        """The path as the JSON-RPC side writes it: ``params.items[2].value``."""
        return dotted(self.path)

    @property
    def pointer(self) -> str:
        """The path as an RFC 6901 JSON Pointer (the v0.9 side): ``/0/updateDataModel``."""
        return pointer(self.path)


_UNSHOWABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]")
_MAX_KEY_SHOWN = 64


def _shown(key: object) -> str:
    """A key as an error path may echo it: encodable (no surrogates or controls), short."""
    text = _UNSHOWABLE.sub("\ufffd", str(key))
    return text if len(text) <= _MAX_KEY_SHOWN else text[:_MAX_KEY_SHOWN] + "\u2026"


def dotted(path: tuple) -> str:
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out = f"{out}.{_shown(part)}" if out else _shown(part)
    return out


def pointer(path: tuple) -> str:
    return "".join("/" + _shown(p).replace("~", "~0").replace("/", "~1") for p in path)


class _Bad:
    """What the parse hooks put in place of a refused number, found by :func:`find`."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason


def int_problem(value: int) -> str | None:
    if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
        return None
    return f"integers must be within ±{MAX_SAFE_INTEGER} (2**53-1, I-JSON)"


def float_problem(value: float) -> str | None:
    if value - value == 0.0:  # false for inf, -inf and nan
        return None
    return "NaN, Infinity and numbers beyond the double range are not accepted"


def string_problem(value: str, key: bool = False) -> str | None:
    if _SURROGATE.search(value):
        return "lone UTF-16 surrogates (\\ud800-\\udfff) are not accepted"
    if key and "\x00" in value:
        return "NUL (\\u0000) is not accepted in object keys"
    return None


class _Hooks:
    """parse_int/parse_float that put a :class:`_Bad` in place of a refused number."""

    __slots__ = ("bad",)

    def __init__(self) -> None:
        self.bad = False

    def parse_int(self, text: str) -> int | _Bad:
        if len(text) - text.startswith("-") <= 15:  # fewer digits than 2**53-1 has: in range
            return int(text)
        value = int(text) if len(text) <= 17 else None
        problem = int_problem(2**53) if value is None else int_problem(value)
        if problem is None:
            return value  # type: ignore[return-value]
        self.bad = True
        return _Bad(problem)

    def parse_float(self, text: str) -> float | _Bad:
        value = float(text)
        problem = float_problem(value)
        if problem is None:
            return value
        self.bad = True
        return _Bad(problem)


def depth_ok(value: Any, limit: int) -> bool:
    """Whether ``value`` (parsed JSON) nests at most ``limit`` levels of objects and arrays:
    a walk with a stack of its own, so a value nested far deeper than Python's recursion limit
    is answered, not a RecursionError."""
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return False
        if type(item) is dict:
            stack.extend((v, depth + 1) for v in item.values())
        elif type(item) is list:
            stack.extend((v, depth + 1) for v in item)
    return True


def _parse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def find(obj: Any) -> tuple[str, tuple] | None:
    """The first refused value in a decoded document: ``(reason, path)``, or None.

    Iterative (no recursion limit); checks numbers, strings and keys, not depth.
    """
    stack: list[tuple[Any, tuple]] = [(obj, ())]
    while stack:
        value, path = stack.pop()
        kind = type(value)
        if kind is str:
            problem = string_problem(value)
        elif kind is dict:
            problem = None
            for key, item in value.items():
                if type(key) is not str:
                    return "object keys must be strings", path
                key_problem = string_problem(key, key=True)
                if key_problem is not None:
                    return key_problem, (*path, key)
                stack.append((item, (*path, key)))
        elif kind is list or kind is tuple:
            problem = None
            stack.extend((item, (*path, i)) for i, item in enumerate(value))
        elif kind is _Bad:
            problem = value.reason
        elif kind is int:
            problem = int_problem(value)
        elif kind is float:
            problem = float_problem(value)
        elif value is None or kind is bool:
            problem = None
        else:
            problem = f"unsupported value of type {kind.__name__}"
        if problem is not None:
            return problem, path
    return None


def check(obj: Any) -> Any:
    """Return ``obj`` if the policy accepts it, else raise :class:`JSONValueError`.

    For values that did not come through :func:`loads` (the in-process Python API).
    """
    found = find(obj)
    if found is not None:
        raise JSONValueError(found[0], found[1], obj)
    return obj


def find_nul(obj: Any) -> tuple | None:
    """The path of the first string value holding NUL, or None. For documents an edge stores
    as they came (PostgreSQL's text and jsonb refuse NUL) rather than cleans; iterative."""
    stack: list[tuple[Any, tuple]] = [(obj, ())]
    while stack:
        value, path = stack.pop()
        kind = type(value)
        if kind is str:
            if "\x00" in value:
                return path
        elif kind is dict:
            stack.extend((item, (*path, key)) for key, item in reversed(value.items()))
        elif kind is list or kind is tuple:
            stack.extend((item, (*path, i)) for i, item in reversed(list(enumerate(value))))
    return None


def loads(text: str) -> Any:
    """Parse JSON text under the policy.

    Raises ``ValueError`` (``json.JSONDecodeError`` included) or ``RecursionError`` for text
    that is not JSON, :class:`JSONValueError` (a ``ValueError`` too) for refused values.

    Fast path: text that cannot hold a refused value goes to the C decoder alone. Text that
    could hold a refused number is parsed with checking hooks; the document is walked (to
    name the path) only when a hook refused a number or the text holds a surrogate or NUL
    escape (or a raw surrogate).
    """
    try:
        raw = text.encode("utf-8")
    except UnicodeEncodeError:  # a raw lone surrogate: only a str from Python code has one
        raw, walk = b"", True
    else:
        walk = b"\\u" in raw and _ESCAPE.search(text) is not None
    marks = raw.translate(_MARKS, b"+")
    if _DIGITS16 in marks or _BIG_EXPONENT in marks or not raw:
        hooks = _Hooks()
        document = json.loads(text, parse_constant=_parse_constant,
                              parse_int=hooks.parse_int, parse_float=hooks.parse_float)
        walk = walk or hooks.bad
    else:
        document = json.loads(text, parse_constant=_parse_constant)
    if walk:
        found = find(document)
        if found is not None:
            raise JSONValueError(found[0], found[1], document)
    return document
