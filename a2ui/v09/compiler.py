"""Compile the JSON Schema subset used by A2UI catalogs into plain Python checkers.

Why not call jsonschema: a catalog is fixed for the life of the process, so we
pay the interpretation cost once. Each schema becomes a closure
``check(value, ctx) -> None`` that raises :class:`~a2ui.v09.errors.Invalid` on the
first problem. ``ctx`` (:class:`Ctx`) collects what the graph rules need
(component references, template references, relative paths) in the same pass.

Supported keywords: type, enum, const, properties, required,
additionalProperties, unevaluatedProperties (false/true), min/maxProperties,
items, min/maxItems, uniqueItems, pattern, min/maxLength, minimum, maximum,
exclusiveMinimum/Maximum, multipleOf, format, allOf, anyOf, oneOf, not,
if/then/else, $ref (local or to known documents). Anything else raises
:class:`~a2ui.v09.errors.CatalogError` at compile time, so a custom catalog
never silently loses a constraint.

``unevaluatedProperties: false`` is handled by flattening ``allOf`` members into
one closed object shape; properties declared in ``anyOf``/``oneOf`` branches of
such a shape count as evaluated (slightly more permissive than the spec when a
branch fails, which the A2UI catalogs never rely on).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import urljoin

from .errors import CatalogError, Invalid
from .formats import FORMATS
from .pointer import unescape_token

Checker = Callable[[Any, "Ctx"], None]

ANNOTATIONS = frozenset({
    "$schema", "$id", "$comment", "title", "description", "default", "examples",
    "deprecated", "readOnly", "writeOnly", "$defs", "definitions", "discriminator",
    "contentMediaType", "contentEncoding",
})
_OBJECT_KEYS = frozenset({
    "properties", "required", "additionalProperties", "unevaluatedProperties",
    "minProperties", "maxProperties",
})
_NUM = (int, float)
_TYPE_TESTS: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: type(v) is str,
    "number": lambda v: type(v) in _NUM,
    "integer": lambda v: type(v) is int or (type(v) is float and v.is_integer()),
    "boolean": lambda v: type(v) is bool,
    "object": lambda v: type(v) is dict,
    "array": lambda v: type(v) is list,
    "null": lambda v: v is None,
}
_ARTICLE = {"object": "an object", "array": "an array", "integer": "an integer"}


class Ctx:
    """Per-component scratch pad filled while checking.

    refs: ids referenced as children; tmpl: ids used as ChildList templates;
    rel: a relative data path was used; fdepth: current FunctionCall nesting;
    check_urls: apply the URL scheme policy to literal URLs.
    """

    __slots__ = ("refs", "tmpl", "rel", "fdepth", "check_urls")

    def __init__(self, check_urls: bool = True) -> None:
        self.refs: list[str] = []
        self.tmpl: list[str] = []
        self.rel = False
        self.fdepth = 0
        self.check_urls = check_urls

    def reset(self) -> None:
        self.refs = []
        self.tmpl = []
        self.rel = False
        self.fdepth = 0

    def mark(self) -> tuple[int, int, bool]:
        return len(self.refs), len(self.tmpl), self.rel

    def rollback(self, mark: tuple[int, int, bool]) -> None:
        del self.refs[mark[0]:]
        del self.tmpl[mark[1]:]
        self.rel = mark[2]


def type_phrase(name: str) -> str:
    return _ARTICLE.get(name, "a " + name)


def json_equal(a: Any, b: Any) -> bool:
    """JSON equality: unlike Python, ``true`` is not ``1``."""
    if type(a) is bool or type(b) is bool:
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def check_any(value: Any, ctx: Ctx) -> None:
    """The ``true`` schema."""


def chain(checks: list[Checker]) -> Checker:
    """One checker running several in order (specialised for 0-2 for speed)."""
    if not checks:
        return check_any
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        first, second = checks

        def check_two(v: Any, ctx: Ctx) -> None:
            first(v, ctx)
            second(v, ctx)

        return check_two
    frozen = tuple(checks)

    def check_all(v: Any, ctx: Ctx) -> None:
        for c in frozen:
            c(v, ctx)

    return check_all


def best_error(errors: list[Invalid]) -> Invalid:
    """Of several failing alternatives, report the one that got deepest."""
    return max(errors, key=lambda e: len(e.parts))


class SchemaCompiler:
    """Compiles schemas found in a set of documents, with native overrides.

    documents: absolute URI -> JSON document; natives: absolute "uri#pointer"
    -> hand-written checker used instead of compiling that definition.
    """

    def __init__(self, documents: dict[str, Any], natives: dict[str, Checker]) -> None:
        self.documents = documents
        self.natives = natives
        self._memo: dict[str, Checker] = {}

    # -- references -----------------------------------------------------
    def absolute(self, ref: str, base: str) -> str:
        doc, _, frag = ref.partition("#")
        doc_uri = urljoin(base, doc) if doc else base.partition("#")[0]
        return f"{doc_uri}#{frag}"

    def resolve(self, key: str) -> Any:
        doc_uri, _, frag = key.partition("#")
        if doc_uri not in self.documents:
            raise CatalogError(f"Cannot resolve $ref to unknown document {doc_uri!r}.")
        node = self.documents[doc_uri]
        for token in frag.split("/")[1:] if frag else []:
            token = unescape_token(token)
            try:
                node = node[int(token)] if isinstance(node, list) else node[token]
            except (KeyError, IndexError, ValueError):
                raise CatalogError(f"Cannot resolve $ref {key!r}.") from None
        return node

    def compile_ref(self, ref: str, base: str) -> Checker:
        key = self.absolute(ref, base)
        if key in self.natives:
            return self.natives[key]
        if key in self._memo:
            return self._memo[key]
        cell: list[Checker] = []

        def forward(v: Any, ctx: Ctx) -> None:
            cell[0](v, ctx)

        self._memo[key] = forward
        real = self.compile(self.resolve(key), key.partition("#")[0])
        cell.append(real)
        self._memo[key] = real
        return real

    def deref(self, schema: Any, base: str) -> tuple[Any, str, bool]:
        """Follow a bare ``{"$ref": ...}``; returns (schema, base, is_native)."""
        while isinstance(schema, dict) and "$ref" in schema and \
                set(schema) - ANNOTATIONS == {"$ref"}:
            key = self.absolute(schema["$ref"], base)
            if key in self.natives:
                return schema, base, True
            schema, base = self.resolve(key), key.partition("#")[0]
        return schema, base, False

    # -- schemas --------------------------------------------------------
    def compile(self, schema: Any, base: str,
                overrides: dict[str, Checker | None] | None = None) -> Checker:
        """Compile one schema. ``overrides`` replaces property checkers (None = skip)."""
        if schema is True:
            return check_any
        if schema is False:
            return _fail_check("No value is allowed here.")
        if not isinstance(schema, dict):
            raise CatalogError(f"A schema must be an object or boolean, got {schema!r}.")
        if overrides is not None:
            schema, base, _native = self.deref(schema, base)
        if overrides is not None or schema.get("unevaluatedProperties") is False:
            return self._compile_shape(schema, base, overrides or {})
        checks: list[Checker] = []
        if "$ref" in schema:
            checks.append(self.compile_ref(schema["$ref"], base))
        if "type" in schema:
            checks.append(_type_check(schema["type"]))
        for key in schema:
            if key in ANNOTATIONS or key in _OBJECT_KEYS or key in ("$ref", "type"):
                continue
            builder = _KEYWORDS.get(key)
            if builder is None:
                if key in ("then", "else"):
                    continue
                raise CatalogError(f"Unsupported schema keyword {key!r}.")
            checks.append(builder(self, schema, base))
        if _OBJECT_KEYS & schema.keys():
            checks.append(self._object_check(schema, base, {}))
        return chain(checks)

    def _object_check(self, schema: dict, base: str,
                      overrides: dict[str, Checker | None]) -> Checker:
        props = {k: self.compile(s, base) for k, s in schema.get("properties", {}).items()}
        for k, c in overrides.items():
            props[k] = c
        addl = schema.get("additionalProperties", True)
        if schema.get("unevaluatedProperties", True) is not False and \
                schema.get("unevaluatedProperties", True) is not True:
            raise CatalogError("unevaluatedProperties must be a boolean.")
        return object_checker(
            props=props,
            required=tuple(schema.get("required", ())),
            closed=addl is False,
            additional=None if addl in (True, False) else self.compile(addl, base),
            min_props=schema.get("minProperties"),
            max_props=schema.get("maxProperties"),
        )

    def _compile_shape(self, schema: dict, base: str,
                       overrides: dict[str, Checker | None]) -> Checker:
        """Flatten allOf into one object shape (for unevaluatedProperties: false)."""
        shape = _Shape()
        self._gather(schema, base, shape, top=True)
        props: dict[str, Checker | None] = {}
        for name, schemas in shape.props.items():
            props[name] = chain([self.compile(s, b) for s, b in schemas])
        for name in shape.evaluated:
            props.setdefault(name, check_any)
        props.update(overrides)
        checks: list[Checker] = []
        if shape.types:
            checks.extend(_type_check(t) for t in shape.types)
        checks.append(object_checker(
            props={k: v for k, v in props.items() if v is not None},
            required=tuple(dict.fromkeys(shape.required)),
            closed=shape.closed,
            additional=None,
            skip=frozenset(k for k, v in props.items() if v is None),
            min_props=shape.min_props,
            max_props=shape.max_props,
        ))
        checks.extend(self.compile(s, b) for s, b in shape.others)
        return chain(checks)

    def _gather(self, schema: dict, base: str, shape: _Shape, top: bool) -> None:
        for key, value in schema.items():
            if key in ANNOTATIONS:
                continue
            if key == "properties":
                for name, sub in value.items():
                    shape.props.setdefault(name, []).append((sub, base))
            elif key == "required":
                shape.required.extend(value)
            elif key == "type":
                shape.types.append(value)
            elif key == "unevaluatedProperties":
                shape.closed = shape.closed or (top and value is False)
            elif key == "additionalProperties" and top:
                shape.closed = shape.closed or value is False
                if value not in (True, False):
                    raise CatalogError("additionalProperties schemas cannot be combined "
                                       "with unevaluatedProperties.")
            elif key in ("minProperties", "maxProperties"):
                setattr(shape, "min_props" if key[1] == "i" else "max_props", value)
            elif key == "$ref":
                self._gather_member({"$ref": value}, base, shape)
            elif key == "allOf":
                for member in value:
                    self._gather_member(member, base, shape)
            elif key in ("anyOf", "oneOf"):
                shape.others.append(({key: value}, base))
                for branch in value:
                    target, _, _ = self.deref(branch, base)
                    if isinstance(target, dict):
                        shape.evaluated.update(target.get("properties", {}))
            else:
                shape.others.append(({key: value}, base))

    def _gather_member(self, member: Any, base: str, shape: _Shape) -> None:
        target, target_base, native = self.deref(member, base)
        mergeable = (not native and isinstance(target, dict)
                     and "additionalProperties" not in target
                     and "unevaluatedProperties" not in target)
        if mergeable:
            self._gather(target, target_base, shape, top=False)
        else:
            shape.others.append((member, base))


class _Shape:
    """Accumulator for a flattened object shape."""

    def __init__(self) -> None:
        self.props: dict[str, list[tuple[Any, str]]] = {}
        self.required: list[str] = []
        self.types: list[Any] = []
        self.others: list[tuple[Any, str]] = []
        self.evaluated: set[str] = set()
        self.closed = False
        self.min_props: int | None = None
        self.max_props: int | None = None


def object_checker(props: dict[str, Checker], required: tuple[str, ...], closed: bool,
                   additional: Checker | None, skip: frozenset[str] = frozenset(),
                   min_props: int | None = None, max_props: int | None = None) -> Checker:
    """Checker for an object: required keys, per-property checkers, closedness."""
    get = props.get

    def check_object(v: Any, ctx: Ctx) -> None:
        if type(v) is not dict:
            return
        for k in required:
            if k not in v:
                raise Invalid(f"Missing required property '{k}'.")
        for k, x in v.items():
            c = get(k)
            if c is None:
                if k in skip:
                    continue
                if closed:
                    raise Invalid(f"Unknown property '{k}'.", [k])
                if additional is None:
                    continue
                c = additional
            try:
                c(x, ctx)
            except Invalid as e:
                e.parts.append(k)
                raise
        if min_props is not None and len(v) < min_props:
            raise Invalid(f"Expected at least {min_props} properties.")
        if max_props is not None and len(v) > max_props:
            raise Invalid(f"Expected at most {max_props} properties.")

    return check_object


def _fail_check(message: str) -> Checker:
    def check_fail(v: Any, ctx: Ctx) -> None:
        raise Invalid(message)

    return check_fail


def _type_check(spec: Any) -> Checker:
    names = [spec] if isinstance(spec, str) else list(spec)
    for n in names:
        if n not in _TYPE_TESTS:
            raise CatalogError(f"Unknown type {n!r}.")
    if len(names) == 1 and names[0] in ("string", "object", "array", "boolean"):
        exact = {"string": str, "object": dict, "array": list, "boolean": bool}[names[0]]
        message = f"Expected {type_phrase(names[0])}."

        def check_exact(v: Any, ctx: Ctx) -> None:
            if type(v) is not exact:
                raise Invalid(message)

        return check_exact
    tests = [_TYPE_TESTS[n] for n in names]
    message = "Expected " + " or ".join(type_phrase(n) for n in names) + "."

    def check_type(v: Any, ctx: Ctx) -> None:
        for t in tests:
            if t(v):
                return
        raise Invalid(message)

    return check_type


def _enum(comp: SchemaCompiler, schema: dict, base: str) -> Checker:
    values = schema["enum"]
    shown = ", ".join(json.dumps(v) for v in values[:12]) + (", ..." if len(values) > 12 else "")
    message = f"Must be one of {shown}."
    if all(type(v) is str for v in values):
        allowed = frozenset(values)

        def check_str_enum(v: Any, ctx: Ctx) -> None:
            if type(v) is not str or v not in allowed:
                raise Invalid(message)

        return check_str_enum

    def check_enum(v: Any, ctx: Ctx) -> None:
        if not any(json_equal(v, e) for e in values):
            raise Invalid(message)

    return check_enum


def _const(comp: SchemaCompiler, schema: dict, base: str) -> Checker:
    expected = schema["const"]
    message = f"Must be {json.dumps(expected)}."

    def check_const(v: Any, ctx: Ctx) -> None:
        if not json_equal(v, expected):
            raise Invalid(message)

    return check_const


def _string_keyword(comp: SchemaCompiler, schema: dict, base: str, key: str) -> Checker:
    if key == "pattern":
        regex = re.compile(schema["pattern"])
        message = f"Must match the pattern {schema['pattern']}."

        def test(s: str) -> bool:
            return regex.search(s) is not None
    elif key == "format":
        name = schema["format"]
        if name not in FORMATS:
            return check_any  # unknown formats are annotations
        test = FORMATS[name]
        message = f"Must be a valid {name}."
    else:
        limit = schema[key]
        if key == "minLength":
            message = f"Must be at least {limit} characters long."

            def test(s: str) -> bool:
                return len(s) >= limit
        else:
            message = f"Must be at most {limit} characters long."

            def test(s: str) -> bool:
                return len(s) <= limit

    def check_string(v: Any, ctx: Ctx) -> None:
        if type(v) is str and not test(v):
            raise Invalid(message)

    return check_string


def _number_keyword(comp: SchemaCompiler, schema: dict, base: str, key: str) -> Checker:
    limit = schema[key]
    tests = {
        "minimum": (lambda n: n >= limit, f"Must be at least {limit}."),
        "maximum": (lambda n: n <= limit, f"Must be at most {limit}."),
        "exclusiveMinimum": (lambda n: n > limit, f"Must be greater than {limit}."),
        "exclusiveMaximum": (lambda n: n < limit, f"Must be less than {limit}."),
        "multipleOf": (lambda n: (n / limit).is_integer(), f"Must be a multiple of {limit}."),
    }
    test, message = tests[key]

    def check_number(v: Any, ctx: Ctx) -> None:
        if type(v) in _NUM and not test(v):
            raise Invalid(message)

    return check_number


def _array_keyword(comp: SchemaCompiler, schema: dict, base: str, key: str) -> Checker:
    if key == "items":
        item = comp.compile(schema["items"], base)

        def check_items(v: Any, ctx: Ctx) -> None:
            if type(v) is not list:
                return
            for i, x in enumerate(v):
                try:
                    item(x, ctx)
                except Invalid as e:
                    e.parts.append(i)
                    raise

        return check_items
    if key == "uniqueItems":
        if not schema[key]:
            return check_any

        def check_unique(v: Any, ctx: Ctx) -> None:
            if type(v) is list:
                for i, x in enumerate(v):
                    if any(json_equal(x, y) for y in v[:i]):
                        raise Invalid("Array items must be unique.", [i])

        return check_unique
    limit = schema[key]
    if key == "minItems":
        message = f"Expected at least {limit} item{'s' if limit != 1 else ''}."

        def check_min(v: Any, ctx: Ctx) -> None:
            if type(v) is list and len(v) < limit:
                raise Invalid(message)

        return check_min
    message = f"Expected at most {limit} item{'s' if limit != 1 else ''}."

    def check_max(v: Any, ctx: Ctx) -> None:
        if type(v) is list and len(v) > limit:
            raise Invalid(message)

    return check_max


def _all_of(comp: SchemaCompiler, schema: dict, base: str) -> Checker:
    return chain([comp.compile(s, base) for s in schema["allOf"]])


def _any_of(comp: SchemaCompiler, schema: dict, base: str) -> Checker:
    branches = [comp.compile(s, base) for s in schema["anyOf"]]
    names = [s["required"] for s in schema["anyOf"] if isinstance(s, dict) and set(s) == {
        "required"}]
    summary = None
    if len(names) == len(branches) and all(len(n) == 1 for n in names):
        summary = "Needs at least one of " + ", ".join(f"'{n[0]}'" for n in names) + "."

    def check_any_of(v: Any, ctx: Ctx) -> None:
        errors = []
        for b in branches:
            mark = ctx.mark()
            try:
                b(v, ctx)
                return
            except Invalid as e:
                ctx.rollback(mark)
                errors.append(e)
        if summary is not None:
            raise Invalid(summary)
        raise best_error(errors)

    return check_any_of


def _one_of(comp: SchemaCompiler, schema: dict, base: str) -> Checker:
    branches = [comp.compile(s, base) for s in schema["oneOf"]]

    def check_one_of(v: Any, ctx: Ctx) -> None:
        errors = []
        matched = 0
        for b in branches:
            mark = ctx.mark()
            try:
                b(v, ctx)
                matched += 1
                if matched > 1:
                    ctx.rollback(mark)
            except Invalid as e:
                ctx.rollback(mark)
                errors.append(e)
        if matched == 1:
            return
        if matched > 1:
            raise Invalid("Matches more than one of the allowed forms.")
        raise best_error(errors)

    return check_one_of


def _not(comp: SchemaCompiler, schema: dict, base: str) -> Checker:
    inner = comp.compile(schema["not"], base)

    def check_not(v: Any, ctx: Ctx) -> None:
        try:
            inner(v, Ctx(check_urls=False))
        except Invalid:
            return
        raise Invalid("Matches a form that is not allowed here.")

    return check_not


def _if(comp: SchemaCompiler, schema: dict, base: str) -> Checker:
    cond = comp.compile(schema["if"], base)
    then = comp.compile(schema["then"], base) if "then" in schema else check_any
    other = comp.compile(schema["else"], base) if "else" in schema else check_any

    def check_if(v: Any, ctx: Ctx) -> None:
        try:
            cond(v, Ctx(check_urls=False))
        except Invalid:
            other(v, ctx)
            return
        then(v, ctx)

    return check_if


def _keyword(fn: Callable[..., Checker], key: str) -> Callable[..., Checker]:
    return lambda comp, schema, base: fn(comp, schema, base, key)


_KEYWORDS: dict[str, Callable[[SchemaCompiler, dict, str], Checker]] = {
    "enum": _enum,
    "const": _const,
    "allOf": _all_of,
    "anyOf": _any_of,
    "oneOf": _one_of,
    "not": _not,
    "if": _if,
    **{k: _keyword(_string_keyword, k) for k in ("pattern", "format", "minLength", "maxLength")},
    **{k: _keyword(_number_keyword, k) for k in (
        "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")},
    **{k: _keyword(_array_keyword, k) for k in ("items", "minItems", "maxItems", "uniqueItems")},
}
