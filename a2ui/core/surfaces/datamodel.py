"""Pure updates of a surface's data model (JSON) at a JSON Pointer.

Updates copy only the containers along the path ("path copying"), so an old
model is never mutated: a batch can be validated against a working copy and
thrown away if a later message fails, at the cost of O(depth), not O(size).

Semantics (those of the v0.9 renderers): empty path segments are ignored, so
``/`` and ``""`` mean the whole model; a missing intermediate object is
created; on arrays a segment must be an index <= length (length or ``-``
appends); deleting an array element removes it.
"""

from __future__ import annotations

from typing import Any

from a2ui.core.surfaces.pointer import split_path

_MISSING = object()


class DataModelError(ValueError):
    """The path cannot address the model (bad array index)."""


def upsert(model: Any, path: str, value: Any) -> Any:
    """New model with ``value`` stored at ``path``."""
    return _set(model, split_path(path), 0, value)


def remove(model: Any, path: str) -> Any:
    """New model without the key at ``path`` (the whole model becomes ``{}``)."""
    segments = split_path(path)
    if not segments:
        return {}
    return _delete(model, segments, 0)


def get(model: Any, path: str, default: Any = None) -> Any:
    node = model
    for seg in split_path(path):
        if type(node) is dict and seg in node:
            node = node[seg]
        elif type(node) is list and seg.isdigit() and int(seg) < len(node):
            node = node[int(seg)]
        else:
            return default
    return node


def _index(seg: str, length: int) -> int:
    if seg == "-":
        return length
    if not seg.isdigit() or (len(seg) > 1 and seg[0] == "0") or int(seg) > length:
        raise DataModelError(f"'{seg}' is not a valid index into an array of {length} items.")
    return int(seg)


def _set(node: Any, segs: list[str], i: int, value: Any) -> Any:
    if i == len(segs):
        return value
    seg = segs[i]
    if type(node) is list:
        idx = _index(seg, len(node))
        new_list = list(node)
        if idx == len(new_list):
            new_list.append(_set(None, segs, i + 1, value))
        else:
            new_list[idx] = _set(new_list[idx], segs, i + 1, value)
        return new_list
    new_dict = dict(node) if type(node) is dict else {}
    new_dict[seg] = _set(new_dict.get(seg), segs, i + 1, value)
    return new_dict


def _delete(node: Any, segs: list[str], i: int) -> Any:
    seg = segs[i]
    last = i == len(segs) - 1
    if type(node) is dict:
        if seg not in node:
            return node
        new_dict = dict(node)
        if last:
            del new_dict[seg]
        else:
            new_dict[seg] = _delete(node[seg], segs, i + 1)
        return new_dict
    if type(node) is list and seg.isdigit() and int(seg) < len(node):
        idx = int(seg)
        new_list = list(node)
        if last:
            del new_list[idx]
        else:
            new_list[idx] = _delete(node[idx], segs, i + 1)
        return new_list
    return node
