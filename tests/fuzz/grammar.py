"""Hostile frames from a grammar of valid ones.

Every case starts from a valid message of the endpoint under test and mutates it the way a
hostile or broken peer would: wrong types, integers no transport carries (2**64, 10**30),
floats JSON has no value for (1e400, NaN), finite numbers no client can draw (1e308, -1e308 in
every numeric field, arrays of 20 000 points: issue 23), lone surrogates, NUL and bidi controls in ids,
methods, keys and values, bracketed-host and script URLs, deep nesting, oversized strings,
batches, duplicate keys, invalid UTF-8 and binary frames, unknown session ids.

A case is serialized by :func:`emit`, a small JSON writer that can also write what
``json.dumps`` refuses to (``Raw`` literals such as ``1e400`` or ``NaN``, duplicate keys, lone
surrogates unescaped). Everything is drawn from one ``random.Random``: a seed replays a run.
"""

from __future__ import annotations

import copy
import json
import random
import uuid
from dataclasses import dataclass


class Raw(str):
    """Text written into the frame verbatim (a literal json.dumps would not produce)."""


@dataclass(frozen=True)
class DupKeys:
    """An object written with repeated keys, in order: ``((key, value), ...)``."""

    pairs: tuple


@dataclass(frozen=True)
class Frame:
    """One frame: ``text`` (str) or ``data`` (bytes, a binary frame / raw HTTP body)."""

    label: str
    text: str | None = None
    data: bytes | None = None

    def as_bytes(self) -> bytes:
        if self.data is not None:
            return self.data
        return self.text.encode("utf-8", "surrogatepass")

    def short(self, limit=160) -> str:
        body = self.text if self.text is not None else repr(self.data)
        body = body if len(body) <= limit else body[:limit] + f"...(+{len(body) - limit})"
        return f"[{self.label}] {body.encode('unicode_escape').decode('ascii')}"


def emit(value, ensure_ascii=True) -> str:
    """JSON text for ``value``; ``Raw`` and ``DupKeys`` as described above."""
    if isinstance(value, Raw):
        return str(value)
    if isinstance(value, DupKeys):
        return "{" + ",".join(f"{emit(k, ensure_ascii)}:{emit(v, ensure_ascii)}"
                              for k, v in value.pairs) + "}"
    if isinstance(value, dict):
        return "{" + ",".join(f"{emit(str(k), ensure_ascii)}:{emit(v, ensure_ascii)}"
                              for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(emit(v, ensure_ascii) for v in value) + "]"
    return json.dumps(value, ensure_ascii=ensure_ascii, allow_nan=True)


# Hostile leaves ------------------------------------------------------------------------------

BIG_INTS = [2**63 - 1, 2**63, 2**64, 2**64 + 1, -(2**63) - 1, -(2**64), 10**20, 10**30,
            -(10**30), 2**53 + 1, -1, 0]
NUMBER_LITERALS = [Raw(t) for t in (
    "1e400", "-1e400", "1E-400", "NaN", "Infinity", "-Infinity", "-0", "1.7976931348623157e309",
    "123456789012345678901234567890123456789", "1" + "0" * 5000, "0.1e-99999",
)]
#: Finite numbers the JSON value policy lets through that no client can draw (issue 23: a pie of
#: [1e308, -1e308] froze the tab): the ends of the double range, beyond the drawn bound (1e15,
#: a2ui/core/content/drawn.py), negative (a pie's slice, a size, a weight), the smallest subnormals.
DRAWN_NUMBERS = [1e308, -1e308, 1.7976931348623157e308, -1.7976931348623157e308, 1e16, -1e16,
                 1e15 + 1, -1e15 - 1, 2**53 - 1, -(2**53 - 1), 5e-324, -5e-324, -1, 1001]
SURROGATES = ["\ud800", "x\udfff", "\udc00\ud800", "a\ud83d", "\ud83d\ude00"[0] + "b"]
CONTROLS = ["\x00", "a\x00b", "\u202e", "Invoice(1)\u202etrela:tpircsavaj exe.png",
            "\u2066x\u2069", "\u200f", "\ufeff", "\x1b[31m", "\r\n", "\x7f"]
URLS = ["http://[x", "http://[::1", "https://[::1]:99999/x", "http://[x]/", "[x](http://[x)",
        "[x](javascript:alert(1))", "javascript:alert(1)", "java\tscript:alert(1)",
        "JaVaScRiPt:alert(1)", "data:text/html,<script>alert(1)</script>", "//evil.example/x.png",
        "/\\evil.com/x", "https://user:pw@host/x", "vbscript:x", "http://\ud800/", "http://\x00/",
        "[a](<javascript:alert(1)>)", "![x](http://[::1)"]
STRINGS = ["", " ", "x", "<script>alert(1)</script>", "<img src=x onerror=alert(1)>",
           "💥" * 50, "../../etc/passwd", "%00", "\\", '"', "ui.render", "a2ui.init",
           "00000000-0000-0000-0000-000000000000", "[a" * 200, "*" * 300, "`" * 300]
TYPES = [None, True, False, [], {}, [None], {"": None}, 1.5, -0.0, 1e308]


def _deep(rng):
    depth = rng.choice([64, 200, 1000, 5000, 100_000])
    opener, closer = rng.choice([("[", "]"), ('{"a":', "}")])
    return Raw(opener * depth + "0" + closer * depth)


class Fuzzer:
    """Draws hostile values and mutations from one seeded generator."""

    def __init__(self, seed):
        self.rng = random.Random(seed)

    def choice(self, seq):
        return self.rng.choice(seq)

    def leaf(self):
        """One hostile JSON value."""
        rng = self.rng
        kind = rng.randrange(12)
        if kind == 11:
            return self.drawn()
        if kind == 0:
            return rng.choice(BIG_INTS)
        if kind == 1:
            return rng.choice(NUMBER_LITERALS)
        if kind == 2:
            return rng.choice(SURROGATES)
        if kind == 3:
            return rng.choice(CONTROLS)
        if kind == 4:
            return rng.choice(URLS)
        if kind == 5:
            return rng.choice(STRINGS)
        if kind == 6:  # a copy: mutations change what they inserted, and TYPES is shared
            return copy.deepcopy(rng.choice(TYPES))
        if kind == 7:
            return _deep(rng) if rng.random() < 0.5 else self.nested(rng.randint(20, 120))
        if kind == 8:
            return "x" * rng.choice([129, 1000, 70_000]) + rng.choice(["", "\ud800"])
        if kind == 9:
            return {rng.choice(SURROGATES + CONTROLS + ["", "__proto__", "constructor"]):
                    rng.choice(SURROGATES + [1, None])}
        return str(uuid.UUID(int=rng.getrandbits(128)))

    def drawn(self):
        """A number no client can draw, or more of them than any chart draws."""
        if self.rng.random() < 0.8:
            return self.rng.choice(DRAWN_NUMBERS)
        return huge_array(self.rng.choice(DRAWN_NUMBERS + [1, None]), self.rng.choice([1001, 20_000]))

    def nested(self, depth):
        value = self.rng.choice([1, "x", None])
        for _ in range(depth):
            value = [value] if self.rng.random() < 0.5 else {"a": value}
        return value

    # Mutations of a valid message ----------------------------------------------------------

    def _paths(self, value, path=()):
        yield path
        if isinstance(value, dict):
            for k, v in value.items():
                yield from self._paths(v, (*path, k))
        elif isinstance(value, list):
            for i, v in enumerate(value):
                yield from self._paths(v, (*path, i))

    def mutate(self, message):
        """A copy of ``message`` with one to three hostile changes."""
        message = copy.deepcopy(message)
        for _ in range(self.rng.choice([1, 1, 1, 2, 3])):
            message = self._mutate_once(message)
        return message

    def _mutate_once(self, message):
        paths = [p for p in self._paths(message) if p]
        if not paths or not isinstance(message, dict | list):
            return self.leaf()
        path = self.rng.choice(paths)
        parent = message
        for step in path[:-1]:
            parent = parent[step]
        key = path[-1]
        action = self.rng.randrange(10)
        if _is_number(parent[key]) and self.rng.random() < 0.5:
            parent[key] = self.drawn()  # numeric fields get the numbers no client draws
        elif action == 0 and isinstance(parent, dict):
            del parent[key]
        elif action == 1 and isinstance(parent, dict):
            parent[self.rng.choice(SURROGATES + CONTROLS + ["extra", "__proto__"])] = self.leaf()
        elif action == 2 and isinstance(parent, dict) and isinstance(key, str):
            value = parent.pop(key)
            parent[key + self.rng.choice(SURROGATES + CONTROLS)] = value
        else:
            parent[key] = self.leaf()
        return message

    def envelope(self, message):
        """Hostile JSON-RPC envelope members: id, method, jsonrpc, params."""
        message = copy.deepcopy(message)
        target = self.rng.choice(["id", "method", "jsonrpc", "params"])
        if target == "method" and self.rng.random() < 0.6:
            message["method"] = message.get("method", "x") + self.rng.choice(SURROGATES + CONTROLS)
        else:
            message[target] = self.leaf()
        return message

    # Frames --------------------------------------------------------------------------------

    def frame(self, valid, label, *, jsonrpc=True, oversized_ok=False):
        """One hostile frame derived from ``valid`` (a dict)."""
        rng = self.rng
        kind = rng.randrange(13 if oversized_ok else 12)
        ascii_ = rng.random() < 0.5
        if kind <= 4:
            return Frame(f"{label}:value", emit(self.mutate(valid), ascii_))
        if kind == 5:
            body = self.envelope(valid) if jsonrpc else self.mutate(valid)
            return Frame(f"{label}:envelope", emit(body, ascii_))
        if kind == 6:
            items = [self.mutate(valid) if rng.random() < 0.5 else valid
                     for _ in range(rng.choice([0, 1, 2, 5]))]
            return Frame(f"{label}:batch", emit(items, ascii_))
        if kind == 7 and isinstance(valid, dict):
            key = rng.choice(list(valid))
            pairs = [*valid.items(), (key, self.leaf())]
            return Frame(f"{label}:dupkey", emit(DupKeys(tuple(pairs)), ascii_))
        if kind == 8:
            data = emit(valid).encode()
            bad = rng.choice([b"\xff", b"\xc0\xaf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\x80"])
            at = rng.randrange(len(data))
            return Frame(f"{label}:utf8", data=data[:at] + bad + data[at:])
        if kind == 9:
            text = emit(self.mutate(valid), ascii_)
            return Frame(f"{label}:binary", data=text.encode("utf-8", "surrogatepass"))
        if kind == 10:
            text = emit(valid)
            return Frame(f"{label}:cut", text[: rng.randrange(len(text))])
        if kind == 11:
            return Frame(f"{label}:top", emit(self.leaf(), ascii_))
        if kind == 7:
            return Frame(f"{label}:value", emit(self.mutate(valid), ascii_))
        pad = "x" * (1_048_576 + rng.choice([1, 100]))
        body = self.mutate(valid)
        if isinstance(body, dict):
            body["pad"] = pad
        else:
            body = [*body, pad] if isinstance(body, list) else [body, pad]
        return Frame(f"{label}:oversized", emit(body, ascii_))


def huge_array(item, n):
    """``[item, item, ...]`` as a ``Raw`` literal: mutations do not walk its items."""
    return Raw("[" + ",".join([emit(item)] * n) + "]")


def _is_number(value):
    return isinstance(value, int | float) and not isinstance(value, bool)


GENERIC_FIXED = 11  # the first frames of fixed_frames() do not depend on ``valid``


def fixed_frames(valid, label, max_paths=8):
    """Frames every run sends, whatever the seed: the known killers."""
    frames = [
        Frame(f"{label}:fixed", '{"jsonrpc":"1.0","id":"\\ud800"}'),
        Frame(f"{label}:fixed", '{"jsonrpc":"2.0","id":"\\ud800","method":"x\\ud800"}'),
        Frame(f"{label}:fixed", '{"jsonrpc":"2.0","id":1,"method":"x\\ud800","params":{}}'),
        Frame(f"{label}:fixed", '{"jsonrpc":"2.0","id":1e400,"method":"a"}'),
        Frame(f"{label}:fixed", '{"jsonrpc":"2.0","id":' + str(10**30) + ',"method":"a"}'),
        Frame(f"{label}:fixed", "[" * 100_000),
        Frame(f"{label}:fixed", "NaN"),
        Frame(f"{label}:fixed", ""),
        Frame(f"{label}:fixed", data=b"\xff\xfe\x00"),
        Frame(f"{label}:fixed", data=emit(valid).encode()),
        Frame(f"{label}:fixed", "x" * (1_048_577)),
    ]
    walker = Fuzzer(0)
    paths = [p for p in walker._paths(valid) if 2 <= len(p) <= 3][:max_paths]
    for path in paths:
        for leaf in ("\ud800", 10**30, Raw("1e400"), Raw("NaN"), "\x00", "http://[x"):
            body = copy.deepcopy(valid)
            parent = body
            for step in path[:-1]:
                parent = parent[step]
            parent[path[-1]] = leaf
            frames.append(Frame(f"{label}:fixed", emit(body)))
    return frames + nul_frames(valid, label) + drawn_frames(valid, label)


def drawn_frames(valid, label, max_paths=40):
    """Every numeric member at any depth set to each end of the double range, and every array
    of numbers grown past any chart's bound: one frame each (issue 23)."""
    frames = []
    for path in [p for p in Fuzzer(0)._paths(valid) if len(p) >= 2][:max_paths * 4]:
        parent = valid
        for step in path[:-1]:
            parent = parent[step]
        value = parent[path[-1]]
        if _is_number(value):
            leaves = (1e308, -1e308, -1)
        elif isinstance(value, list) and value and all(_is_number(v) for v in value):
            leaves = (huge_array(value[0], 20_000),)
        else:
            continue
        for leaf in leaves:
            body = copy.deepcopy(valid)
            target = body
            for step in path[:-1]:
                target = target[step]
            target[path[-1]] = leaf
            frames.append(Frame(f"{label}:drawn", emit(body)))
        if len(frames) >= max_paths:
            break
    return frames


def nul_frames(valid, label, max_paths=40):
    """NUL in every member at any depth (PostgreSQL's jsonb and text refuse it where SQLite
    stores it): ``valid`` with one value replaced by ``"a\x00b"``, one frame per path."""
    frames = []
    for path in [p for p in Fuzzer(0)._paths(valid) if p][:max_paths]:
        body = copy.deepcopy(valid)
        parent = body
        for step in path[:-1]:
            parent = parent[step]
        parent[path[-1]] = "a\x00b"
        frames.append(Frame(f"{label}:nul", emit(body)))
    return frames
