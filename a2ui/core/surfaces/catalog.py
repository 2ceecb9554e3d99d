"""Catalogs: build a catalog definition once into per-component validators.

A catalog definition has the shape of the official basic catalog:
``{catalogId, components: {Name: schema}, functions: {name: schema},
$defs: {theme: schema, ...}}``; component schemas may ``$ref`` the official
common types (``https://a2ui.org/specification/v0_9/common_types.json``) and,
for reuse, the basic catalog. Each component (and the theme) gets a
jsonschema-rs validator (:mod:`a2ui.core.surfaces.schema`) and a plan of where the common
types sit (:mod:`a2ui.core.surfaces.locate`) for the post-checks (:mod:`a2ui.core.surfaces.dynamic`).
:class:`CatalogRegistry` maps catalogId to the built form; the basic catalog is
pre-registered.
"""

from __future__ import annotations

import json
import threading
from functools import cache, lru_cache
from importlib import resources
from typing import Any

from a2ui.core.content.drawn import v09_component_problem
from a2ui.core.surfaces.dynamic import Check, Ctx, FunctionSpec, PostChecks, drawn_invalid
from a2ui.core.surfaces.errors import CatalogError, Invalid
from a2ui.core.surfaces.locate import Locator, Plan, Shape
from a2ui.core.surfaces.schema import BASIC_CATALOG_ID, CatalogSchemas, SchemaCheck
from a2ui.core.surfaces.urls import url_problem

__all__ = ["BASIC_CATALOG_ID", "CatalogRegistry", "CompiledCatalog", "basic_catalog",
           "basic_catalog_definition", "common_types_schema", "default_registry"]
_URL_PROPS = ("url",)
_OWN_KEYS = ("id", "component")  # the component's own id is no child reference


@cache
def load_json_resource(folder: str, name: str) -> Any:
    """Read a JSON file shipped inside this package (works when pip-installed)."""
    text = resources.files(__package__).joinpath(folder).joinpath(name).read_text(encoding="utf-8")
    return json.loads(text)


def basic_catalog_definition() -> dict[str, Any]:
    return load_json_resource("catalogs", "basic_catalog.json")


def common_types_schema() -> dict[str, Any]:
    return load_json_resource("schemas", "common_types.json")


class CompiledCatalog:
    """One catalog, ready to check components and themes (function calls inside them)."""

    def __init__(self, definition: dict[str, Any], catalog_id: str | None = None) -> None:
        if not isinstance(definition, dict) or not isinstance(definition.get("components"), dict):
            raise CatalogError("A catalog needs a 'components' object.")
        self.catalog_id = catalog_id or definition.get("catalogId") or definition.get("$id")
        if not isinstance(self.catalog_id, str) or not self.catalog_id:
            raise CatalogError("A catalog needs a catalogId.")
        functions = definition.get("functions") or {}
        if not isinstance(functions, dict):
            raise CatalogError("A catalog's 'functions' must be an object.")
        self.definition = definition
        base = definition.get("$id") or f"urn:a2ui:catalog:{self.catalog_id}"
        schemas = CatalogSchemas(definition, base, common_types_schema(),
                                 basic_catalog_definition())
        locator = Locator(schemas.documents)
        self.functions: dict[str, FunctionSpec] = {
            name: _function_spec(locator, name, schema, base) for name, schema in functions.items()
        }
        post = PostChecks(self.functions)
        self.components: dict[str, tuple[SchemaCheck, Check | None]] = {
            name: (schemas.check_for("components", name),
                   post.compile(_component_plan(locator, schema, base)))
            for name, schema in definition["components"].items()
        }
        theme = (definition.get("$defs") or {}).get("theme")
        self.theme: SchemaCheck | None = (schemas.check_for("$defs", "theme")
                                          if theme is not None else None)

    def check_component(self, comp: Any, ctx: Ctx) -> None:
        """Check one component object (dispatching on its ``component`` name)."""
        if type(comp) is not dict:
            raise Invalid("Expected a component object.")
        ctype = comp.get("component")
        if ctype is None:
            raise Invalid("Missing required property 'component'.")
        entry = self.components.get(ctype) if type(ctype) is str else None
        if entry is None:
            raise Invalid(f"Unknown component type {ctype!r} for this catalog.", ["component"])
        schema, post = entry
        try:
            valid = schema.is_valid(comp)
        except ValueError:  # not JSON data: check() words it
            valid = False
        if not valid:
            schema.check(comp)  # raises the chosen error
        if comp.get("id") == "":
            raise Invalid("A component id must not be empty.", ["id"])
        if post is not None:
            post(comp, ctx)
        found = v09_component_problem(comp)  # numbers the client draws (protocol/drawn.py)
        if found is not None:
            raise drawn_invalid(found)
        if ctx.check_urls:
            for prop in _URL_PROPS:
                url = comp.get(prop)
                problem = url_problem(url) if type(url) is str else None
                if problem is not None:
                    raise Invalid(f"Only http, https and relative URLs are allowed: {problem}.",
                                  [prop])

    def check_theme(self, theme: Any) -> None:
        """Check a createSurface theme against the catalog's ``$defs/theme``."""
        if self.theme is not None:
            self.theme.check(theme)


def _component_plan(locator: Locator, schema: Any, base: str) -> Plan:
    plan = locator.locate(schema, base)
    if isinstance(plan, Shape):
        own = Shape()
        own.props = {k: v for k, v in plan.props.items() if k not in _OWN_KEYS}
        own.items, own.extra = plan.items, plan.extra
        return None if own.empty() else own
    return plan


def _function_spec(locator: Locator, name: str, schema: Any, base: str) -> FunctionSpec:
    """Note where a catalog function's args hold common types, its return type, URI args."""
    if not isinstance(schema, dict):
        raise CatalogError(f"Function {name!r} must be described by a schema object.")
    props = schema.get("properties") or {}
    returns = (props.get("returnType") or {}).get("const")
    args = (props.get("args") or {}).get("properties") or {}
    url_args = tuple(k for k, s in args.items() if isinstance(s, dict) and s.get("format") == "uri")
    plan = locator.locate(schema, base)
    arg_plan = plan.props.get("args") if isinstance(plan, Shape) else None
    return FunctionSpec(name=name, args=dict(arg_plan.props) if isinstance(arg_plan, Shape)
                        else {}, returns=returns, url_args=url_args)


class CatalogRegistry:
    """catalogId -> :class:`CompiledCatalog`; the basic catalog is pre-registered.

    Building validators happens in :meth:`register`, so lookups on the hot path are a dict
    access. Registration is thread-safe; compiled catalogs are immutable.
    """

    def __init__(self, include_basic: bool = True) -> None:
        self._catalogs: dict[str, CompiledCatalog] = {}
        self._lock = threading.Lock()
        if include_basic:
            self._catalogs[BASIC_CATALOG_ID] = basic_catalog()

    def register(self, definition: dict[str, Any], catalog_id: str | None = None
                 ) -> CompiledCatalog:
        """Build and register a catalog; raises CatalogError if it cannot be built."""
        compiled = CompiledCatalog(definition, catalog_id)
        with self._lock:
            self._catalogs = {**self._catalogs, compiled.catalog_id: compiled}
        return compiled

    def unregister(self, catalog_id: str) -> None:
        with self._lock:
            self._catalogs = {k: v for k, v in self._catalogs.items() if k != catalog_id}

    def get(self, catalog_id: str) -> CompiledCatalog | None:
        return self._catalogs.get(catalog_id)

    def __contains__(self, catalog_id: object) -> bool:
        return catalog_id in self._catalogs

    def ids(self) -> list[str]:
        return list(self._catalogs)


@lru_cache(maxsize=1)
def basic_catalog() -> CompiledCatalog:
    """The basic catalog, compiled once per process."""
    return CompiledCatalog(basic_catalog_definition(), BASIC_CATALOG_ID)


@lru_cache(maxsize=1)
def default_registry() -> CatalogRegistry:
    """A shared registry holding only the basic catalog (callers may register more)."""
    return CatalogRegistry()
