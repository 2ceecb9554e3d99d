"""Server-to-client message envelopes, checked one message at a time.

This is the part of validation that needs no surface state: the envelope
(``version`` plus exactly one message kind, no unknown keys) and each kind's
body. Component bodies are delegated to the surface's catalog (jsonschema-rs).
Functions raise :class:`~a2ui.core.surfaces.errors.Invalid` with parts relative to the
message root (so the pointer is ``/updateComponents/components/0/text``).
"""

from __future__ import annotations

from typing import Any

from a2ui.core.surfaces.catalog import CatalogRegistry, CompiledCatalog
from a2ui.core.surfaces.dynamic import Ctx, check_depth
from a2ui.core.surfaces.errors import Invalid
from a2ui.core.surfaces.pointer import is_absolute_pointer, split_path
from a2ui.core.surfaces.urls import url_problem

#: The ``version`` values accepted on every message, both directions (v0.9.1's schemas take
#: both; we send ``"v0.9"``, ``errors.PROTOCOL_VERSION``, which both versions accept).
VERSIONS = frozenset({"v0.9", "v0.9.1"})
#: The keys of a client (or server) capabilities object, preferred first: v0.9.1 moved its
#: entry from ``"v0.9"`` to ``"v0.9.1"``; a client may send both side by side.
CAPABILITY_KEYS = ("v0.9.1", "v0.9")
SERVER_KINDS = ("createSurface", "updateComponents", "updateDataModel", "deleteSurface")
MAX_DATA_DEPTH = 48
_KIND_LIST = "createSurface, updateComponents, updateDataModel or deleteSurface"
_CREATE_KEYS = frozenset({"surfaceId", "catalogId", "theme", "sendDataModel"})

# (id, component, meta) where meta = (refs, template refs, uses relative paths)
Meta = tuple[tuple[str, ...], tuple[str, ...], bool]
Entry = tuple[str, dict, Meta]


def check_version(message: dict) -> None:
    if "version" not in message:
        raise Invalid("Missing required property 'version'.", ["version"])
    if type(message["version"]) is not str or message["version"] not in VERSIONS:
        raise Invalid("Unsupported version; expected \"v0.9\".", ["version"])


def split_server_message(message: Any) -> tuple[str, dict]:
    """Return (kind, body) of a server message or raise for a malformed envelope."""
    if type(message) is not dict:
        raise Invalid("A message must be a JSON object.")
    kind = None
    for key in message:
        if key in SERVER_KINDS:
            if kind is not None:
                raise Invalid(f"A message must contain exactly one of {_KIND_LIST}.", [key])
            kind = key
        elif key != "version":
            raise Invalid(f"Unknown property '{key}'.", [key])
    check_version(message)
    if kind is None:
        raise Invalid(f"A message must contain one of {_KIND_LIST}.")
    body = message[kind]
    if type(body) is not dict:
        raise Invalid("Expected an object.", [kind])
    return kind, body


def surface_id_of(message: Any) -> str | None:
    """Best-effort surfaceId for error reports, even from malformed messages."""
    if type(message) is dict:
        for kind in SERVER_KINDS:
            body = message.get(kind)
            if type(body) is dict and type(body.get("surfaceId")) is str:
                return body["surfaceId"]
    return None


def _check_keys(body: dict, allowed: frozenset[str] | tuple[str, ...]) -> None:
    for key in body:
        if key not in allowed:
            raise Invalid(f"Unknown property '{key}'.", [key])


def _check_surface_id(body: dict) -> str:
    sid = body.get("surfaceId")
    if sid is None:
        raise Invalid("Missing required property 'surfaceId'.")
    if type(sid) is not str:
        raise Invalid("Expected a string.", ["surfaceId"])
    if not sid:
        raise Invalid("A surfaceId must not be empty.", ["surfaceId"])
    return sid


def check_create(body: dict, registry: CatalogRegistry, check_urls: bool = True
                 ) -> CompiledCatalog:
    """createSurface body; returns the surface's catalog."""
    _check_keys(body, _CREATE_KEYS)
    _check_surface_id(body)
    catalog_id = body.get("catalogId")
    if catalog_id is None:
        raise Invalid("Missing required property 'catalogId'.")
    if type(catalog_id) is not str:
        raise Invalid("Expected a string.", ["catalogId"])
    catalog = registry.get(catalog_id)
    if catalog is None:
        raise Invalid(f"Unknown catalog '{catalog_id}'.", ["catalogId"])
    if "theme" in body:
        check_theme(body["theme"], catalog, check_urls)
    if "sendDataModel" in body and type(body["sendDataModel"]) is not bool:
        raise Invalid("Expected a boolean.", ["sendDataModel"])
    return catalog


def check_theme(theme: Any, catalog: CompiledCatalog, check_urls: bool) -> None:
    try:
        if type(theme) is not dict:
            raise Invalid("Expected an object.")
        catalog.check_theme(theme)
        icon = theme.get("iconUrl")
        problem = (url_problem(icon, allow_relative=False)
                   if check_urls and type(icon) is str else None)
        if problem is not None:
            raise Invalid(f"Only http and https URLs are allowed: {problem}.", ["iconUrl"])
    except Invalid as e:
        e.parts.append("theme")
        raise


def check_components(body: dict, catalog: CompiledCatalog, check_urls: bool = True
                     ) -> list[Entry]:
    """updateComponents body: each component against the catalog, ids unique."""
    _check_keys(body, ("surfaceId", "components"))
    _check_surface_id(body)
    components = body.get("components")
    if components is None:
        raise Invalid("Missing required property 'components'.")
    if type(components) is not list:
        raise Invalid("Expected an array.", ["components"])
    if not components:
        raise Invalid("Expected at least 1 component.", ["components"])
    entries: list[Entry] = []
    seen: set[str] = set()
    ctx = Ctx(check_urls)
    check = catalog.check_component
    for i, comp in enumerate(components):
        ctx.reset()
        try:
            check(comp, ctx)
        except Invalid as e:
            e.parts.extend((i, "components"))
            raise
        cid = comp.get("id")
        if type(cid) is not str:
            raise Invalid("Every component needs a string 'id'.", [i, "components"])
        if cid in seen:
            raise Invalid(f"Duplicate component id '{cid}' in this update.",
                          ["id", i, "components"])
        seen.add(cid)
        entries.append((cid, comp, (tuple(ctx.refs), tuple(ctx.tmpl), ctx.rel)))
    return entries


def check_data_model(body: dict) -> tuple[str, bool, Any]:
    """updateDataModel body; returns (path, has_value, value)."""
    _check_keys(body, ("surfaceId", "path", "value"))
    _check_surface_id(body)
    path = body.get("path", "/")
    if type(path) is not str:
        raise Invalid("Expected a string.", ["path"])
    if not is_absolute_pointer(path):
        raise Invalid("The path must be an absolute JSON Pointer such as '/user/name'.",
                      ["path"])
    if len(split_path(path)) > MAX_DATA_DEPTH:
        raise Invalid(f"The path is deeper than {MAX_DATA_DEPTH} levels.", ["path"])
    has_value = "value" in body
    if has_value:
        try:
            check_depth(body["value"], MAX_DATA_DEPTH)
        except Invalid as e:
            e.parts = ["value"]
            raise
    return path, has_value, body.get("value")


def check_delete(body: dict) -> None:
    _check_keys(body, ("surfaceId",))
    _check_surface_id(body)
