"""Stateless, single-message validation (what the official JSON Schemas check, and more).

For streams use :func:`a2ui.core.surfaces.session.validate_batch`, which also knows the
surfaces. This module answers "is this one message well formed?" — e.g. for
the official test vectors, or to check an agent's output before sending:
envelope, catalog components/functions/theme, duplicate ids, and the graph
rules that can be judged inside one message (self references, cycles, depth).
"""

from __future__ import annotations

from typing import Any

from a2ui.core.surfaces.catalog import BASIC_CATALOG_ID, CatalogRegistry, default_registry
from a2ui.core.surfaces.envelope import (
    check_components,
    check_create,
    check_data_model,
    check_delete,
    split_server_message,
    surface_id_of,
)
from a2ui.core.surfaces.errors import Invalid, ValidationFailed
from a2ui.core.surfaces.graph import GraphError, check_graph, graph_invalid


def validate_server_message(message: Any, registry: CatalogRegistry | None = None, *,
                            catalog_id: str = BASIC_CATALOG_ID, check_urls: bool = True,
                            strict: bool = False) -> str:
    """Validate one server message; returns its kind or raises ValidationFailed.

    updateComponents is checked against ``catalog_id`` (default: basic);
    ``strict`` also requires a complete tree in that one update.
    """
    registry = registry or default_registry()
    try:
        kind, body = split_server_message(message)
        try:
            _check_body(kind, body, registry, catalog_id, check_urls, strict)
        except Invalid as e:
            e.parts.append(kind)
            raise
    except Invalid as e:
        raise ValidationFailed(e.message, e.pointer(), surface_id_of(message)) from None
    return kind


def _check_body(kind: str, body: dict, registry: CatalogRegistry, catalog_id: str,
                check_urls: bool, strict: bool) -> None:
    if kind == "createSurface":
        check_create(body, registry, check_urls)
    elif kind == "updateComponents":
        catalog = registry.get(catalog_id)
        if catalog is None:
            raise Invalid(f"Unknown catalog '{catalog_id}'.")
        entries = check_components(body, catalog, check_urls)
        try:
            check_graph({e[0]: e[1] for e in entries}, {e[0]: e[2] for e in entries}, strict)
        except GraphError as e:
            raise graph_invalid(e, entries) from None
    elif kind == "updateDataModel":
        check_data_model(body)
    else:
        check_delete(body)
