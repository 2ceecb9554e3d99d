"""Catalogs: compile a catalog definition once into per-component checkers.

A catalog definition has the shape of the official basic catalog:
``{catalogId, components: {Name: schema}, functions: {name: schema},
$defs: {theme: schema, ...}}``; component schemas may ``$ref`` the official
common types (``https://a2ui.org/specification/v0_9/common_types.json``) and,
for reuse, the basic catalog. :class:`CatalogRegistry` maps catalogId to the
compiled form; the basic catalog is pre-registered.
"""

from __future__ import annotations

import json
import threading
from functools import cache, lru_cache
from importlib import resources
from typing import Any

from .compiler import Checker, Ctx, SchemaCompiler, check_any
from .dynamic import COMMON_URI, FunctionSpec, Natives, check_free
from .errors import CatalogError, Invalid
from .urls import url_problem

BASIC_CATALOG_ID = "https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"
_PLACEHOLDER_URI = "https://a2ui.org/specification/v0_9/catalog.json"
_URL_PROPS = ("url",)


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
    """One catalog, ready to check components, function calls and themes."""

    def __init__(self, definition: dict[str, Any], catalog_id: str | None = None) -> None:
        if not isinstance(definition, dict) or not isinstance(definition.get("components"), dict):
            raise CatalogError("A catalog needs a 'components' object.")
        self.catalog_id = catalog_id or definition.get("catalogId") or definition.get("$id")
        if not isinstance(self.catalog_id, str) or not self.catalog_id:
            raise CatalogError("A catalog needs a catalogId.")
        self.definition = definition
        self.functions: dict[str, FunctionSpec] = {}
        self.natives = Natives(self.functions)
        base = definition.get("$id") or f"urn:a2ui:catalog:{self.catalog_id}"
        compiler = SchemaCompiler(self._documents(definition, base), self.natives.by_uri())
        overrides: dict[str, Checker | None] = {"id": _check_id, "component": None}
        self.components: dict[str, Checker] = {
            name: compiler.compile(schema, base, overrides)
            for name, schema in definition["components"].items()
        }
        for name, schema in (definition.get("functions") or {}).items():
            self.functions[name] = _function_spec(compiler, name, schema, base)
        theme = (definition.get("$defs") or {}).get("theme")
        self.theme: Checker = compiler.compile(theme, base) if theme is not None else check_any

    @staticmethod
    def _documents(definition: dict[str, Any], base: str) -> dict[str, Any]:
        docs = {COMMON_URI: common_types_schema(), BASIC_CATALOG_ID: basic_catalog_definition()}
        docs[_PLACEHOLDER_URI] = definition
        docs[base] = definition
        return docs

    def check_component(self, comp: Any, ctx: Ctx) -> None:
        """Check one component object (dispatching on its ``component`` name)."""
        if type(comp) is not dict:
            raise Invalid("Expected a component object.")
        ctype = comp.get("component")
        if ctype is None:
            raise Invalid("Missing required property 'component'.")
        checker = self.components.get(ctype) if type(ctype) is str else None
        if checker is None:
            raise Invalid(f"Unknown component type {ctype!r} for this catalog.", ["component"])
        checker(comp, ctx)
        if ctx.check_urls:
            for prop in _URL_PROPS:
                url = comp.get(prop)
                problem = url_problem(url) if type(url) is str else None
                if problem is not None:
                    raise Invalid(f"Only http, https and relative URLs are allowed: {problem}.",
                                  [prop])


def _check_id(v: Any, ctx: Ctx) -> None:
    if type(v) is not str:
        raise Invalid("Expected a string.")
    if not v:
        raise Invalid("A component id must not be empty.")


def _function_spec(compiler: SchemaCompiler, name: str, schema: Any, base: str) -> FunctionSpec:
    """Compile one catalog function; note its declared return type and URI args."""
    if not isinstance(schema, dict):
        raise CatalogError(f"Function {name!r} must be described by a schema object.")
    props = schema.get("properties", {})
    returns = (props.get("returnType") or {}).get("const")
    args = (props.get("args") or {}).get("properties", {})
    url_args = tuple(k for k, s in args.items() if isinstance(s, dict) and s.get("format") == "uri")
    loose = {k for k, s in args.items() if s is True or (isinstance(s, dict) and not
             set(s) - {"description", "title"})}
    check = compiler.compile(schema, base)
    if loose:
        check = _with_loose_args(check, loose)
    return FunctionSpec(name=name, check=check, returns=returns, url_args=url_args)


def _with_loose_args(check: Checker, loose: set[str]) -> Checker:
    """Arguments typed 'anything' still get the depth limit."""

    def check_with_depth(v: Any, ctx: Ctx) -> None:
        check(v, ctx)
        args = v.get("args")
        if type(args) is dict:
            for k in loose:
                if k in args:
                    try:
                        check_free(args[k], ctx)
                    except Invalid as e:
                        e.parts.extend((k, "args"))
                        raise

    return check_with_depth


class CatalogRegistry:
    """catalogId -> :class:`CompiledCatalog`; the basic catalog is pre-registered.

    Compiling happens in :meth:`register`, so lookups on the hot path are a dict
    access. Registration is thread-safe; compiled catalogs are immutable.
    """

    def __init__(self, include_basic: bool = True) -> None:
        self._catalogs: dict[str, CompiledCatalog] = {}
        self._lock = threading.Lock()
        if include_basic:
            self._catalogs[BASIC_CATALOG_ID] = basic_catalog()

    def register(self, definition: dict[str, Any], catalog_id: str | None = None
                 ) -> CompiledCatalog:
        """Compile and register a catalog; raises CatalogError if it cannot be compiled."""
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
