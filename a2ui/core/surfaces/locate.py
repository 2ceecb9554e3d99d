"""Where the A2UI common types sit inside a catalog's schemas.

jsonschema-rs says whether a component is valid; the graph rules and our own
policies (:mod:`a2ui.core.surfaces.dynamic`) also need to know *which* values are child
references, bindings, function calls or actions. This module reads that off
the schemas once per catalog, as a :data:`Plan`: the name of a common type
(``"ComponentId"``, ``"DynamicString"``, ...) or a :class:`Shape` saying where
below an object or array such values occur. It checks nothing itself.

It follows ``$ref``, ``allOf``/``anyOf``/``oneOf`` (merged), ``properties``,
``items`` and ``additionalProperties``. A common type reachable only through
another keyword (``patternProperties``, ``prefixItems``, ``if``, ...) would be
invisible to the graph rules, so such a catalog is refused with
:class:`~a2ui.core.surfaces.errors.CatalogError`.
"""

from __future__ import annotations

from typing import Any, Union
from urllib.parse import urljoin

from a2ui.core.surfaces.errors import CatalogError
from a2ui.core.surfaces.pointer import unescape_token

COMMON_DEFS = "https://a2ui.org/specification/v0_9/common_types.json#/$defs/"
KINDS = frozenset({
    "ComponentId", "ChildList", "DataBinding", "DynamicValue", "DynamicString",
    "DynamicNumber", "DynamicBoolean", "DynamicStringList", "FunctionCall", "Action",
})
_UNIONS = ("allOf", "anyOf", "oneOf")
_NOT_FOLLOWED = frozenset({
    "patternProperties", "prefixItems", "contains", "if", "then", "else", "not",
    "dependentSchemas", "propertyNames", "unevaluatedItems", "unevaluatedProperties",
    "additionalItems", "contentSchema", "dependencies",
})


class Shape:
    """Common types below an object (``props``, ``extra`` for other keys) or array (``items``)."""

    __slots__ = ("props", "items", "extra")

    def __init__(self) -> None:
        self.props: dict[str, Plan] = {}
        self.items: Plan = None
        self.extra: Plan = None

    def empty(self) -> bool:
        return not self.props and self.items is None and self.extra is None


Plan = Union[str, Shape, None]  # noqa: UP007 - a runtime alias


class Locator:
    """Computes plans over a fixed set of documents (absolute URI -> JSON)."""

    def __init__(self, documents: dict[str, Any]) -> None:
        self.documents = documents
        self._memo: dict[str, Plan] = {}

    def absolute(self, ref: str, base: str) -> str:
        doc, _, frag = ref.partition("#")
        return f"{urljoin(base, doc) if doc else base.partition('#')[0]}#{frag}"

    def resolve(self, key: str) -> Any:
        doc_uri, _, frag = key.partition("#")
        if doc_uri not in self.documents:
            raise CatalogError(f"Cannot resolve $ref to unknown document {doc_uri!r}.")
        node = self.documents[doc_uri]
        for token in frag.split("/")[1:] if frag else []:
            token = unescape_token(token)
            try:
                node = node[int(token)] if isinstance(node, list) else node[token]
            except (KeyError, IndexError, ValueError, TypeError):
                raise CatalogError(f"Cannot resolve $ref {key!r}.") from None
        return node

    def locate(self, schema: Any, base: str) -> Plan:
        if not isinstance(schema, dict):
            return None
        plans: list[Plan] = []
        if isinstance(schema.get("$ref"), str):
            plans.append(self._locate_ref(schema["$ref"], base))
        own = Shape()
        for name, sub in (schema.get("properties") or {}).items():
            plan = self.locate(sub, base)
            if plan is not None:
                own.props[name] = plan
        own.items = self.locate(schema.get("items"), base)
        own.extra = self.locate(schema.get("additionalProperties"), base)
        plans.append(None if own.empty() else own)
        for key in _UNIONS:
            for member in schema.get(key) or ():
                plans.append(self.locate(member, base))
        for key in _NOT_FOLLOWED & schema.keys():
            if self._mentions(schema[key], base, set()):
                raise CatalogError(f"A2UI common types under {key!r} are not supported "
                                   "(the graph rules could not see them).")
        return merge(plans)

    def _locate_ref(self, ref: str, base: str) -> Plan:
        key = self.absolute(ref, base)
        if key.startswith(COMMON_DEFS) and key[len(COMMON_DEFS):] in KINDS:
            return key[len(COMMON_DEFS):]
        if key in self._memo:
            return self._memo[key]
        shape = Shape()
        self._memo[key] = shape  # a recursive schema refers back to this shape
        plan = self.locate(self.resolve(key), key.partition("#")[0])
        if isinstance(plan, Shape):
            shape.props, shape.items, shape.extra = plan.props, plan.items, plan.extra
            return shape
        self._memo[key] = plan
        return plan

    def _mentions(self, node: Any, base: str, seen: set[str]) -> bool:
        """Does any $ref below ``node`` reach a common type?"""
        if isinstance(node, list):
            return any(self._mentions(x, base, seen) for x in node)
        if not isinstance(node, dict):
            return False
        ref = node.get("$ref")
        if isinstance(ref, str):
            key = self.absolute(ref, base)
            if key.startswith(COMMON_DEFS) and key[len(COMMON_DEFS):] in KINDS:
                return True
            if key not in seen:
                seen.add(key)
                if self._mentions(self.resolve(key), key.partition("#")[0], seen):
                    return True
        return any(self._mentions(v, base, seen) for k, v in node.items() if k != "$ref")


def merge(plans: list[Plan]) -> Plan:
    """One plan for a value that must satisfy (or may take) several schemas."""
    found = [p for p in plans if p is not None]
    if not found:
        return None
    if len(found) == 1:
        return found[0]
    kinds = {p for p in found if isinstance(p, str)}
    if kinds:
        if len(kinds) > 1 or any(isinstance(p, Shape) and not p.empty() for p in found):
            raise CatalogError("One value is described as several A2UI common types: "
                               + ", ".join(sorted(kinds)) + ".")
        return next(iter(kinds))
    shapes = [p for p in found if isinstance(p, Shape)]
    out = Shape()
    for shape in shapes:
        for name, plan in shape.props.items():
            out.props[name] = merge([out.props.get(name), plan])
    out.items = merge([s.items for s in shapes])
    out.extra = merge([s.extra for s in shapes])
    return out
