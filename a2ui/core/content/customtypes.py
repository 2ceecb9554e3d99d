"""Component types a host project adds to the nine of seed 000 (``A2UI['COMPONENT_TYPES']``).

Each is a name and the JSON Schema (Draft 2020-12, ``format`` enforced, no remote ``$ref``) of
its ``data``. A custom component is validated like a built-in one: its data must be an object
that the schema accepts (a refusal is -32602 with ``data.path`` naming the field, e.g.
``params.data.stars``), then it is sanitized the same way (strings made HTML-safe text, keys
named like URLs checked by the URL policy), and an update is checked again after it is
applied. The web client draws it with the renderer the host registered
(``window.a2ui.registerComponent``, docs/client.md).

Sans-I/O: the settings are read by ``a2ui.surfaces.componenttypes``, which calls
:func:`install`; this module keeps the compiled validators.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

import jsonschema_rs

from a2ui.core.content import fields as f
from a2ui.core.errors import invalid_input
from a2ui.core.surfaces.errors import CatalogError
from a2ui.core.surfaces.schema_errors import to_invalid

#: A custom type's name: lowercase, starts with a letter, at most 64 characters.
NAME = re.compile(r"[a-z][a-z0-9_-]{0,63}")

_validators: dict[str, Callable[[Any, str], None]] = {}


def _no_retrieval(uri: str) -> Any:
    raise CatalogError(f"Cannot resolve $ref to a remote document {uri!r}.")


class DefinitionError(ValueError):
    """A custom type's definition is unusable (the system check says which and why)."""


def compile_types(types: Mapping[str, Any], builtin: tuple[str, ...]) -> dict[str, Callable]:
    """``{name: check(data, path)}`` for ``{name: {"schema": {...}}}``; DefinitionError if bad."""
    if not isinstance(types, Mapping):
        raise DefinitionError("must be a dict of {name: {\"schema\": {...}}}")
    compiled = {}
    for name, spec in types.items():
        if not isinstance(name, str) or not NAME.fullmatch(name):
            raise DefinitionError(f"{name!r}: a name is lowercase letters, digits, - or _, "
                             "starting with a letter, at most 64 characters")
        if name in builtin:
            raise DefinitionError(f"{name!r} is a built-in component type")
        schema = spec.get("schema") if isinstance(spec, Mapping) else None
        if not isinstance(schema, Mapping):
            raise DefinitionError(f"{name!r}: needs a \"schema\" (the JSON Schema of its data)")
        try:
            validator = jsonschema_rs.Draft202012Validator(
                dict(schema), validate_formats=True, retriever=_no_retrieval)
        except (ValueError, CatalogError, jsonschema_rs.ReferencingError) as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise DefinitionError(f"{name!r}: the schema does not compile: {first}") from None
        compiled[name] = _checker(validator)
    return compiled


def _checker(validator: Any) -> Callable[[Any, str], None]:
    def check(data: Any, path: str) -> None:
        try:
            if validator.is_valid(data):
                return
            errors = list(validator.iter_errors(data))
        except ValueError as exc:
            raise invalid_input(path, f"not a JSON value: {exc}") from None
        problem = to_invalid(errors, data)
        where = path
        for part in problem.parts[::-1]:
            where = f.index(where, part) if isinstance(part, int) else f.join(where, str(part))
        raise invalid_input(where, problem.message)

    return check


def install(compiled: Mapping[str, Callable[[Any, str], None]]) -> None:
    """Make these the custom types (replacing any installed before)."""
    _validators.clear()
    _validators.update(compiled)


def names() -> tuple[str, ...]:
    return tuple(_validators)


def is_custom(component_type: Any) -> bool:
    return isinstance(component_type, str) and component_type in _validators


def check(component_type: str, data: Any, path: str) -> None:
    """-32602 unless ``data`` is what ``component_type``'s schema accepts."""
    _validators[component_type](data, path)
