"""Turn jsonschema-rs errors into one :class:`~a2ui.core.surfaces.errors.Invalid` (pointer + sentence).

jsonschema-rs reports every failing keyword, with ``instance_path`` relative to
the validated value. We report exactly one, chosen deterministically:

1. Each error is *explained*: its pointer and one sentence. ``additionalProperties``
   and ``unevaluatedProperties`` point at the first unknown key (in the value's
   own key order). A failed ``oneOf``/``anyOf`` is explained by its best branch
   (rule 3) or, when no branch fits, by the keyword itself, with a sentence
   naming the expected forms (the A2UI common types), ``Unknown function 'x'``
   when every branch refused the ``call`` name, or ``Needs at least one of ...``.
2. ``unevaluatedProperties`` errors count only when nothing else failed (a
   failing property makes every declared key look unevaluated). Of the rest, the
   error with the deepest pointer wins; among equally deep ones, the one first
   in the message (object keys in their order, array items by index); for one
   value failing several keywords, the first jsonschema-rs reports.
3. A ``oneOf``/``anyOf`` branch is *another form* when it failed on ``type`` or
   ``const`` at the value itself, or on ``const`` of the discriminator: the key
   most branches refuse by ``const`` (``call`` for function calls). It *fits
   partly* when it misses a required key of the value. Of the fitting branches
   the one whose explanation (rule 2) is deepest wins, the first on ties; with
   none, a single partly fitting branch explains the error; otherwise the
   union itself does (rule 1).
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema_rs

from a2ui.core.surfaces.errors import Invalid

_KINDS = jsonschema_rs.ValidationErrorKind
_COMMON = "https://a2ui.org/specification/v0_9/common_types.json#/$defs/"
_DYNAMIC = 'a {"path": ...} binding or a function call.'
FORMS = {
    "DynamicString": "Expected a string, " + _DYNAMIC,
    "DynamicNumber": "Expected a number, " + _DYNAMIC,
    "DynamicBoolean": "Expected a boolean, " + _DYNAMIC,
    "DynamicStringList": "Expected an array of strings, " + _DYNAMIC,
    "DynamicValue": "Expected a string, number, boolean, array, " + _DYNAMIC,
    "ChildList": "Expected an array of component ids or a {componentId, path} template.",
    "Action": "An action needs exactly one of 'event' or 'functionCall'.",
}
_ARTICLE = {"object": "an object", "array": "an array", "integer": "an integer"}
_UNKNOWN_KEYS = ("additionalProperties", "unevaluatedProperties")

Explained = tuple[list[Any], str]  # (instance path, root first; message)


def to_invalid(errors: list[Any], root: Any) -> Invalid:
    path, message = pick(errors, root)
    return Invalid(message, path[::-1])


def pick(errors: list[Any], root: Any) -> Explained:
    """Rule 2: the deepest explained error, then the first in document order."""
    main = [e for e in errors if e.kind.name != "unevaluatedProperties"] or errors
    best: Explained | None = None
    best_key: tuple[int, list[int]] = (0, [])
    for error in main:
        explained = explain(error, root)
        key = (-len(explained[0]), _positions(root, explained[0]))
        if best is None or key < best_key:
            best, best_key = explained, key
    return best if best is not None else ([], "Invalid value.")


def _positions(root: Any, path: list[Any]) -> list[int]:
    """Where each step of ``path`` sits in the value (key order of objects, array index)."""
    out = []
    node = root
    for token in path:
        if isinstance(node, dict):
            out.append(list(node).index(token) if token in node else len(node))
            node = node.get(token)
        elif isinstance(node, list) and isinstance(token, int) and token < len(node):
            out.append(token)
            node = node[token]
        else:
            out.append(0)
            node = None
    return out


def explain(error: Any, root: Any) -> Explained:
    kind = error.kind
    name = kind.name
    path = list(error.instance_path)
    if isinstance(kind, (_KINDS.OneOfNotValid, _KINDS.AnyOf)):
        return _explain_union(error, path, root)
    if name in _UNKNOWN_KEYS:
        unexpected = set(kind.unexpected)
        instance = error.instance
        key = next((k for k in instance if k in unexpected), None) \
            if isinstance(instance, dict) else None
        key = key if key is not None else sorted(unexpected)[0]
        return path + [key], f"Unknown property '{key}'."
    return path, _sentence(error)


def _sentence(error: Any) -> str:
    kind = error.kind
    name = kind.name
    if name == "required":
        return f"Missing required property '{kind.property}'."
    if name == "type":
        types = kind.types if isinstance(kind.types, list) else [kind.types]
        return "Expected " + " or ".join(_ARTICLE.get(t, "a " + t) for t in types) + "."
    if name == "enum":
        shown = ", ".join(json.dumps(v) for v in kind.options[:12])
        return f"Must be one of {shown}{', ...' if len(kind.options) > 12 else ''}."
    if name == "const":
        return f"Must be {json.dumps(kind.expected_value)}."
    if name == "format":
        return f"Must be a valid {kind.format}."
    if name == "pattern":
        return f"Must match the pattern {kind.pattern}."
    if isinstance(kind, _KINDS.OneOfMultipleValid):
        return "Matches more than one of the allowed forms."
    if name == "falseSchema":
        return "No value is allowed here."
    if name == "not":
        return "Matches a form that is not allowed here."
    limits = {
        "minLength": "Must be at least {} characters long.",
        "maxLength": "Must be at most {} characters long.",
        "minItems": "Expected at least {} item(s).",
        "maxItems": "Expected at most {} item(s).",
        "minProperties": "Expected at least {} properties.",
        "maxProperties": "Expected at most {} properties.",
        "minimum": "Must be at least {}.",
        "maximum": "Must be at most {}.",
        "exclusiveMinimum": "Must be greater than {}.",
        "exclusiveMaximum": "Must be less than {}.",
        "multipleOf": "Must be a multiple of {}.",
    }
    if name in limits:
        limit = kind.as_dict().get("limit", kind.as_dict().get("multiple_of"))
        return limits[name].format(json.dumps(limit))
    if name == "uniqueItems":
        return "Array items must be unique."
    return error.message.strip().splitlines()[0]


def _explain_union(error: Any, path: list[Any], root: Any) -> Explained:
    """Rule 3 for a failed oneOf/anyOf at ``path``."""
    branches = [list(b) for b in error.kind.context]
    disc, refused = _discriminator(branches, len(path))
    best: Explained | None = None
    partial: list[list[Any]] = []
    for branch in branches:
        if _other_form(branch, len(path), disc):
            continue
        if any(e.kind.name == "required" and len(e.instance_path) == len(path) for e in branch):
            partial.append(branch)
            continue
        explained = pick(branch, root)
        if best is None or len(explained[0]) > len(best[0]):
            best = explained  # the first branch on ties
    if best is not None:
        return best
    if len(partial) == 1:
        return pick(partial[0], root)
    location = error.absolute_keyword_location or ""
    if location.startswith(_COMMON):
        form = location[len(_COMMON):].partition("/")[0]
        if form in FORMS:
            return path, FORMS[form]
    if disc is not None and refused == len(branches):
        value = error.instance.get(disc) if isinstance(error.instance, dict) else None
        if disc == "call":
            shown = f"'{value}'" if isinstance(value, str) else json.dumps(value)
            return path + [disc], f"Unknown function {shown}."
        return path + [disc], f"Unknown value {json.dumps(value)} for '{disc}'."
    needs = [b[0].kind.property for b in branches
             if len(b) == 1 and b[0].kind.name == "required"]
    if needs and len(needs) == len(branches):
        return path, "Needs at least one of " + ", ".join(f"'{n}'" for n in needs) + "."
    return path, "Does not match any of the allowed forms."


def _discriminator(branches: list[list[Any]], depth: int) -> tuple[Any, int]:
    """The key most branches refused by ``const`` (first seen on ties), and how many did."""
    counts: dict[Any, int] = {}
    for branch in branches:
        for key in {e.instance_path[-1] for e in branch
                    if e.kind.name == "const" and len(e.instance_path) == depth + 1}:
            counts[key] = counts.get(key, 0) + 1
    if not counts:
        return None, 0
    key = max(counts, key=lambda k: counts[k])  # max keeps the first of equal counts
    return key, counts[key]


def _other_form(branch: list[Any], depth: int, disc: Any) -> bool:
    """The branch describes a different shape (see rule 3)."""
    for e in branch:
        name = e.kind.name
        at = e.instance_path
        if len(at) == depth and name in ("type", "const"):
            return True
        if name == "const" and len(at) == depth + 1 and at[-1] == disc:
            return True
    return False
