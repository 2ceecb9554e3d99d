"""The JSON Schema layer: jsonschema-rs validators, built once per catalog.

A catalog's component, function and theme schemas are compiled by
`jsonschema-rs <https://pypi.org/project/jsonschema-rs/>`_ (Draft 2020-12,
``format`` enforced) against a registry that holds the official
``common_types.json``, the basic catalog and the catalog itself (also under the
``catalog.json`` placeholder the common types point to). Nothing is fetched
from the network: a ``$ref`` to any other document is a
:class:`~a2ui.core.surfaces.errors.CatalogError` when the catalog is registered.

On the hot path :meth:`SchemaCheck.check` calls ``is_valid``; only a refused
value pays for ``iter_errors`` and for :func:`~a2ui.core.surfaces.schema_errors.to_invalid`,
which turns the library's errors into one :class:`~a2ui.core.surfaces.errors.Invalid`
(JSON Pointer + one sentence).
"""

from __future__ import annotations

import copy
from typing import Any

import jsonschema_rs

from a2ui.core.surfaces.errors import CatalogError, Invalid, escape_token
from a2ui.core.surfaces.schema_errors import to_invalid

COMMON_URI = "https://a2ui.org/specification/v0_9/common_types.json"
BASIC_CATALOG_ID = "https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"
PLACEHOLDER_URI = "https://a2ui.org/specification/v0_9/catalog.json"


def _no_retrieval(uri: str) -> Any:
    raise CatalogError(f"Cannot resolve $ref to unknown document {uri!r}.")


class SchemaCheck:
    """One compiled schema; :meth:`check` raises Invalid for the first problem."""

    __slots__ = ("_validator", "is_valid")

    def __init__(self, validator: Any) -> None:
        self._validator = validator
        self.is_valid = validator.is_valid

    def check(self, value: Any) -> None:
        try:
            if self.is_valid(value):
                return
            errors = list(self._validator.iter_errors(value))
        except ValueError as e:  # a value jsonschema-rs cannot read (not JSON data)
            raise Invalid(f"Not a JSON value: {e}.") from None
        raise to_invalid(errors, value)


class CatalogSchemas:
    """The documents of one catalog and validators for its definitions.

    ``documents`` maps absolute URIs to JSON documents (also used to locate the
    common types, see :mod:`a2ui.core.surfaces.locate`); ``base`` is the catalog's own URI.
    """

    def __init__(self, definition: dict[str, Any], base: str, common: dict[str, Any],
                 basic: dict[str, Any]) -> None:
        self.base = base
        self.documents: dict[str, Any] = {COMMON_URI: common, BASIC_CATALOG_ID: basic,
                                          PLACEHOLDER_URI: _placeholder(definition),
                                          base: definition}
        try:
            self._registry = jsonschema_rs.Registry(
                [(uri, _with_id(doc, uri)) for uri, doc in self.documents.items()],
                draft=jsonschema_rs.Draft202012, retriever=_no_retrieval)
        except (ValueError, CatalogError, jsonschema_rs.ReferencingError) as e:
            raise CatalogError(f"Invalid catalog schema: {_first_line(e)}") from None

    def check_for(self, *pointer: str) -> SchemaCheck:
        """A validator for the definition at ``pointer`` inside the catalog."""
        ref = self.base + "#" + "".join("/" + escape_token(p) for p in pointer)
        try:
            validator = jsonschema_rs.Draft202012Validator(
                {"$ref": ref}, registry=self._registry, validate_formats=True,
                retriever=_no_retrieval)
        except (ValueError, CatalogError, jsonschema_rs.ReferencingError) as e:
            raise CatalogError(f"Cannot compile {ref!r}: {_first_line(e)}") from None
        return SchemaCheck(validator)


def _placeholder(definition: dict[str, Any]) -> dict[str, Any]:
    """The catalog as ``catalog.json``; ``$defs/anyFunction`` made from its functions."""
    doc = dict(definition)
    defs = dict(doc.get("$defs") or {})
    if "anyFunction" not in defs:
        names = list(doc.get("functions") or {})
        defs["anyFunction"] = ({"oneOf": [{"$ref": "#/functions/" + escape_token(n)}
                                          for n in names]} if names else False)
    doc["$defs"] = defs
    return doc


def _with_id(doc: Any, uri: str) -> Any:
    """Register each document under its own URI only (drop a different ``$id``)."""
    if isinstance(doc, dict) and doc.get("$id") not in (None, uri):
        doc = copy.copy(doc)
        doc["$id"] = uri
    return doc


def _first_line(error: Exception) -> str:
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
