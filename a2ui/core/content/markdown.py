"""Neutralize unsafe link targets in markdown that :func:`~a2ui.core.content.sanitize.sanitize_text`
has already made HTML-safe: sans-I/O.

A regex cannot follow CommonMark's link destinations (balanced parentheses, backslash escapes,
``<...>`` destinations, a destination on the next line), so this scans them the way CommonMark
reads them, on the text the client's markdown parser will see once it decodes the entities
(after nh3 only ``&lt;``, ``&gt;``, ``&amp;`` and ``&nbsp;`` remain; nh3 decodes every other
entity, so ``&#40;`` is already ``(``). Every destination that follows ``](`` (inline links and
images), ``]:`` (reference definitions, also inside lists and block quotes) or ``&lt;`` +
scheme (autolinks) is judged by the URL policy once backslash escapes are removed; an unsafe
one becomes ``#``. A ``](`` that is not really a link (inside a code span, in prose) is judged
too: at worst an unsafe URL-like word there becomes ``#``.
"""

from __future__ import annotations

import re
from collections.abc import Callable

_START = re.compile(r"\]\(|\]:|&lt;(?=[A-Za-z][A-Za-z0-9+.\-]{1,31}:)")
_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
_LT, _GT = "&lt;", "&gt;"


def _skip_space(s: str, i: int) -> int:
    """Skip spaces and tabs and at most one line ending (CommonMark's link whitespace)."""
    n = len(s)
    while i < n and s[i] in " \t":
        i += 1
    if i < n and s[i] in "\r\n":
        i += 2 if s.startswith("\r\n", i) else 1
        while i < n and s[i] in " \t":
            i += 1
    return i


def _pointy(s: str, i: int) -> int | None:
    """End of a ``&lt;...&gt;`` destination whose content starts at ``i``, or None."""
    n = len(s)
    while i < n:
        if s[i] == "\\":
            i += 2
        elif s[i] in "\r\n" or s.startswith(_LT, i):
            return None
        elif s.startswith(_GT, i):
            return i
        else:
            i += 1
    return None


def _plain(s: str, i: int) -> int:
    """End of a plain destination starting at ``i``: no whitespace, balanced parentheses."""
    n, depth = len(s), 0
    while i < n:
        ch = s[i]
        if ch == "\\":
            i += 2
            continue
        if ch.isspace() or ch < " ":
            break
        if ch == "(":
            depth += 1
        elif ch == ")":
            if depth == 0:
                break
            depth -= 1
        i += 1
    return min(i, n)


def _destination(s: str, i: int, autolink: bool) -> tuple[int, int]:
    """(start, end) of the destination read from ``i``."""
    if autolink:
        end = _pointy(s, i)
        return (i, end if end is not None else _plain(s, i))
    i = _skip_space(s, i)
    if s.startswith(_LT, i):
        end = _pointy(s, i + len(_LT))
        if end is not None:
            return i + len(_LT), end
    return i, _plain(s, i)


def neutralize_links(s: str, is_safe: Callable[[str], bool]) -> str:
    """``s`` with every link destination that ``is_safe`` refuses replaced by ``#``."""
    out: list[str] = []
    pos = 0
    for match in _START.finditer(s):
        if match.start() < pos:
            continue  # inside a destination already handled
        autolink = match.group().startswith(_LT)
        start, end = _destination(s, match.end(), autolink)
        target = _ESCAPE.sub(r"\1", s[start:end])
        if target and not is_safe(target):
            out.append(s[pos:start])
            out.append("#")
            pos = end
        elif end > pos:
            out.append(s[pos:end])
            pos = end
    out.append(s[pos:])
    return "".join(out)
