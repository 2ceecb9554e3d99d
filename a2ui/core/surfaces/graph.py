"""Component-graph rules JSON Schema cannot express.

Run on the whole surface after an update is merged, using the per-component
metadata the catalog checkers collected (child refs, template refs, relative
paths), so no component body is walked twice:

* no component references itself, and references never form a cycle;
* the tree below ``root`` is at most 50 levels deep;
* relative data paths only in components reached through a ChildList template;
* strict (snapshot) mode only: ``root`` exists, every reference resolves, and
  every component is reachable from ``root`` (no orphans). Incremental streams
  may reference components that arrive later and keep unlinked ones for now.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from a2ui.core.surfaces.envelope import Entry, Meta
from a2ui.core.surfaces.errors import Invalid

ROOT_ID = "root"
MAX_TREE_DEPTH = 50


class GraphError(Exception):
    """A graph rule failed. ``component_id``/``ref`` locate it; ``relative`` marks scope errors."""

    def __init__(self, message: str, component_id: str | None = None, ref: str | None = None,
                 relative: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.component_id = component_id
        self.ref = ref
        self.relative = relative


def check_graph(components: Mapping[str, Any], meta: Mapping[str, Meta],
                strict: bool = False) -> None:
    """Raise :class:`GraphError` for the first broken rule."""
    for cid, (refs, _tmpl, _rel) in meta.items():
        if cid in refs:
            raise GraphError(f"Component '{cid}' references itself.", cid, cid)
    if strict:
        _check_complete(components, meta)
    heights = _heights_without_cycles(components, meta)
    if ROOT_ID in components:
        _check_depth(components, meta, heights)
        reachable = _check_scope(components, meta)
        if strict:
            for cid in components:
                if cid not in reachable:
                    raise GraphError(f"Component '{cid}' is not reachable from 'root'.", cid)


def _check_complete(components: Mapping[str, Any], meta: Mapping[str, Meta]) -> None:
    if ROOT_ID not in components:
        raise GraphError("The surface has no component with id 'root'.")
    for cid, (refs, _tmpl, _rel) in meta.items():
        for ref in refs:
            if ref not in components:
                raise GraphError(f"Component '{cid}' references unknown component '{ref}'.",
                                 cid, ref)


def _heights_without_cycles(components: Mapping[str, Any], meta: Mapping[str, Meta]
                            ) -> dict[str, int]:
    """Longest downward path per component; raises on the first cycle found."""
    heights: dict[str, int] = {}
    for start in components:
        if start in heights:
            continue
        path = [start]
        on_path = {start}
        stack = [iter(meta[start][0])]
        while stack:
            node = path[-1]
            for child in stack[-1]:
                if child not in components or child in heights:
                    continue
                if child in on_path:
                    cycle = path[path.index(child):] + [child]
                    raise GraphError("Components form a cycle: " + " -> ".join(cycle) + ".",
                                     node, child)
                path.append(child)
                on_path.add(child)
                stack.append(iter(meta[child][0]))
                break
            else:
                stack.pop()
                path.pop()
                on_path.discard(node)
                heights[node] = 1 + max((heights[c] for c in meta[node][0] if c in components),
                                        default=0)
    return heights


def _check_depth(components: Mapping[str, Any], meta: Mapping[str, Meta],
                 heights: dict[str, int]) -> None:
    if heights[ROOT_ID] <= MAX_TREE_DEPTH:
        return
    node = ROOT_ID
    for _ in range(MAX_TREE_DEPTH):
        node = max((c for c in meta[node][0] if c in components), key=heights.__getitem__)
    raise GraphError(f"The component tree is deeper than {MAX_TREE_DEPTH} levels.", node)


def _check_scope(components: Mapping[str, Any], meta: Mapping[str, Meta]) -> set[str]:
    """Walk from root; relative paths need a template ancestor. Returns reachable ids."""
    seen: set[tuple[str, bool]] = set()
    reachable: set[str] = set()
    stack = [(ROOT_ID, False)]
    while stack:
        item = stack.pop()
        if item in seen:
            continue
        seen.add(item)
        node, in_template = item
        reachable.add(node)
        refs, tmpl, rel = meta[node]
        if rel and not in_template:
            raise GraphError(f"Component '{node}' uses a relative path outside a ChildList "
                             "template.", node, relative=True)
        for child in refs:
            if child in components:
                stack.append((child, in_template or child in tmpl))
    return reachable


def reachable_in_order(meta: Mapping[str, Meta], components: Mapping[str, Any]) -> list[str]:
    """Ids reachable from root, root first, in depth-first pre-order (stable output)."""
    if ROOT_ID not in components:
        return []
    order: list[str] = []
    seen = {ROOT_ID}
    stack = [ROOT_ID]
    while stack:
        node = stack.pop()
        order.append(node)
        for child in reversed(meta[node][0]):
            if child in components and child not in seen:
                seen.add(child)
                stack.append(child)
    return order


def locate_field(component: Any, ref: str | None = None, relative: bool = False
                 ) -> list[Any]:
    """Reference tokens (root first) of the field behind a graph error, if any."""
    found = _find(component, ref, relative, [], top=True)
    return found or []


def _find(node: Any, ref: str | None, relative: bool, parts: list[Any], top: bool
          ) -> list[Any] | None:
    if type(node) is dict:
        if relative and type(node.get("path")) is str and node["path"][:1] not in ("", "/"):
            return parts + ["path"]
        if ref is not None and node.get("componentId") == ref:
            return parts + ["componentId"]
        items = node.items()
    elif type(node) is list:
        items = enumerate(node)
    else:
        return parts if ref is not None and node == ref and not top else None
    for key, value in items:
        if top and key in ("id", "component"):
            continue
        hit = _find(value, ref, relative, parts + [key], top=False)
        if hit is not None:
            return hit
    return None


def graph_invalid(error: GraphError, entries: list[Entry]) -> Invalid:
    """Point a graph error at the offending component of this update when it is in it."""
    for i, (cid, comp, _meta) in enumerate(entries):
        if cid == error.component_id:
            field_parts = locate_field(comp, error.ref, error.relative)
            return Invalid(error.message, field_parts[::-1] + [i, "components"])
    return Invalid(error.message, ["components"])
