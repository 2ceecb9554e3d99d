"""Hand-written checkers for the A2UI common types (common_types.json).

These are the hot spots of every component (DynamicString, bindings, function
calls, child lists, actions), so they are native instead of compiled: a
literal string is accepted with one ``type()`` test, and each failure names the
shape that was expected rather than "does not match oneOf".

They also feed :class:`~a2ui.v09.compiler.Ctx`: child and template references,
relative paths, FunctionCall nesting depth, and the URL policy for ``uri`` args.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..protocol.jsonvalue import MAX_DEPTH
from .compiler import Checker, Ctx
from .errors import Invalid
from .pointer import is_valid_path
from .urls import url_problem

COMMON_URI = "https://a2ui.org/specification/v0_9/common_types.json"
MAX_FUNC_DEPTH = 5
MAX_VALUE_DEPTH = MAX_DEPTH  # the one free-form JSON limit (a2ui.protocol.jsonvalue)
RETURN_TYPES = ("string", "number", "boolean", "array", "object", "any", "void")
_RETURN_SET = frozenset(RETURN_TYPES)
_NUM = (int, float)


@dataclass
class FunctionSpec:
    """A compiled catalog function: its checker, declared return type, URL args."""

    name: str
    check: Checker
    returns: str | None = None
    url_args: tuple[str, ...] = field(default_factory=tuple)


def check_depth(value: Any, limit: int = MAX_VALUE_DEPTH) -> None:
    """Refuse free-form JSON nested deeper than ``limit`` (recursion guard)."""
    stack = [(value, 0)]
    while stack:
        v, d = stack.pop()
        if d > limit:
            raise Invalid(f"Value nests deeper than {limit} levels.")
        if type(v) is dict:
            stack.extend((x, d + 1) for x in v.values())
        elif type(v) is list:
            stack.extend((x, d + 1) for x in v)


def check_free(value: Any, ctx: Ctx) -> None:
    """Any JSON value, depth-limited (replaces the ``true`` schema for args)."""
    if type(value) is dict or type(value) is list:
        check_depth(value)


def _check_path(path: Any, ctx: Ctx) -> None:
    if type(path) is not str:
        raise Invalid("Expected a string.", ["path"])
    if not is_valid_path(path):
        raise Invalid("Invalid JSON Pointer: '~' must be followed by '0' or '1'.", ["path"])
    if path and path[0] != "/":
        ctx.rel = True


def _binding(v: dict, ctx: Ctx) -> None:
    if len(v) != 1:
        extra = next(k for k in v if k != "path")
        raise Invalid(f"Unknown property '{extra}'.", [extra])
    _check_path(v["path"], ctx)


def check_data_binding(v: Any, ctx: Ctx) -> None:
    if type(v) is not dict:
        raise Invalid("Expected a {\"path\": ...} data binding.")
    if "path" not in v:
        raise Invalid("Missing required property 'path'.")
    _binding(v, ctx)


def check_component_id(v: Any, ctx: Ctx) -> None:
    if type(v) is not str:
        raise Invalid("Expected a component id (string).")
    ctx.refs.append(v)


def check_child_list(v: Any, ctx: Ctx) -> None:
    """Static ``[ids]`` or template ``{componentId, path}`` (relative to the item)."""
    if type(v) is list:
        for i, x in enumerate(v):
            if type(x) is not str:
                raise Invalid("Expected a component id (string).", [i])
        ctx.refs.extend(v)
        return
    if type(v) is not dict:
        raise Invalid("Expected an array of component ids or a {componentId, path} template.")
    for k in ("componentId", "path"):
        if k not in v:
            raise Invalid(f"Missing required property '{k}'.")
    if len(v) != 2:
        extra = next(k for k in v if k not in ("componentId", "path"))
        raise Invalid(f"Unknown property '{extra}'.", [extra])
    cid = v["componentId"]
    if type(cid) is not str:
        raise Invalid("Expected a component id (string).", ["componentId"])
    _check_path(v["path"], ctx)
    ctx.refs.append(cid)
    ctx.tmpl.append(cid)


class Natives:
    """The native checkers of one catalog (function calls need its function table)."""

    def __init__(self, functions: dict[str, FunctionSpec]) -> None:
        self.functions = functions
        self.dynamic_string = self._dynamic(_is_str, "a string", "string")
        self.dynamic_number = self._dynamic(_is_num, "a number", "number")
        self.dynamic_boolean = self._dynamic(_is_bool, "a boolean", "boolean")
        self.dynamic_string_list = self._dynamic_string_list()
        self.dynamic_value = self._dynamic_value()

    def by_uri(self) -> dict[str, Checker]:
        """Checkers keyed by the absolute $ref they replace."""
        d = f"{COMMON_URI}#/$defs/"
        return {
            d + "ComponentId": check_component_id,
            d + "ChildList": check_child_list,
            d + "DataBinding": check_data_binding,
            d + "DynamicValue": self.dynamic_value,
            d + "DynamicString": self.dynamic_string,
            d + "DynamicNumber": self.dynamic_number,
            d + "DynamicBoolean": self.dynamic_boolean,
            d + "DynamicStringList": self.dynamic_string_list,
            d + "FunctionCall": self.function_call,
            d + "Action": self.action,
        }

    # -- function calls -------------------------------------------------
    def call(self, v: dict, ctx: Ctx, expected: str | None) -> None:
        """Check a FunctionCall object against the catalog function it names."""
        name = v.get("call")
        if name is None:
            raise Invalid("Missing required property 'call'.")
        if type(name) is not str:
            raise Invalid("Expected a string.", ["call"])
        spec = self.functions.get(name)
        if spec is None:
            raise Invalid(f"Unknown function '{name}'.", ["call"])
        rt = v.get("returnType")
        if rt is not None and (type(rt) is not str or rt not in _RETURN_SET):
            raise Invalid("Must be one of " + ", ".join(RETURN_TYPES) + ".", ["returnType"])
        if expected is not None:
            _check_return(name, rt, spec.returns, expected)
        if ctx.fdepth >= MAX_FUNC_DEPTH:
            raise Invalid(f"Function calls may nest at most {MAX_FUNC_DEPTH} levels deep.")
        ctx.fdepth += 1
        try:
            spec.check(v, ctx)
        finally:
            ctx.fdepth -= 1
        if spec.url_args and ctx.check_urls:
            _police_url_args(v.get("args"), spec.url_args)

    def function_call(self, v: Any, ctx: Ctx) -> None:
        if type(v) is not dict:
            raise Invalid("Expected a function call object.")
        self.call(v, ctx, None)

    # -- dynamic values -------------------------------------------------
    def _dynamic(self, literal: Callable[[Any], bool], what: str, expected: str) -> Checker:
        message = f"Expected {what}, a {{\"path\": ...}} binding or a function call."
        call = self.call

        def check_dynamic(v: Any, ctx: Ctx) -> None:
            if literal(v):
                return
            if type(v) is dict:
                if "call" in v:
                    call(v, ctx, expected)
                    return
                if "path" in v:
                    _binding(v, ctx)
                    return
            raise Invalid(message)

        return check_dynamic

    def _dynamic_string_list(self) -> Checker:
        base = self._dynamic(_never, "an array of strings", "array")

        def check_string_list(v: Any, ctx: Ctx) -> None:
            if type(v) is list:
                for i, x in enumerate(v):
                    if type(x) is not str:
                        raise Invalid("Expected a string.", [i])
                return
            base(v, ctx)

        return check_string_list

    def _dynamic_value(self) -> Checker:
        message = ("Expected a string, number, boolean, array, a {\"path\": ...} binding "
                   "or a function call.")
        call = self.call

        def check_value(v: Any, ctx: Ctx) -> None:
            t = type(v)
            if t is str or t is bool or t in _NUM:
                return
            if t is list:
                check_depth(v)
                return
            if t is dict:
                if "call" in v:
                    call(v, ctx, None)
                    return
                if "path" in v:
                    _binding(v, ctx)
                    return
            raise Invalid(message)

        return check_value

    # -- actions --------------------------------------------------------
    def action(self, v: Any, ctx: Ctx) -> None:
        """``{"event": {name, context?}}`` or ``{"functionCall": {...}}``, nothing else."""
        if type(v) is not dict:
            raise Invalid("Expected an object.")
        if "event" in v:
            key = "event"
        elif "functionCall" in v:
            key = "functionCall"
        else:
            raise Invalid("An action needs exactly one of 'event' or 'functionCall'.")
        if len(v) != 1:
            extra = next(k for k in v if k != key)
            raise Invalid(f"Unknown property '{extra}'.", [extra])
        try:
            if key == "event":
                self._event(v["event"], ctx)
            else:
                self.function_call(v["functionCall"], ctx)
        except Invalid as e:
            e.parts.append(key)
            raise

    def _event(self, ev: Any, ctx: Ctx) -> None:
        if type(ev) is not dict:
            raise Invalid("Expected an object.")
        if "name" not in ev:
            raise Invalid("Missing required property 'name'.")
        for k, x in ev.items():
            if k == "name":
                if type(x) is not str:
                    raise Invalid("Expected a string.", ["name"])
            elif k == "context":
                self._context(x, ctx)
            else:
                raise Invalid(f"Unknown property '{k}'.", [k])

    def _context(self, context: Any, ctx: Ctx) -> None:
        if type(context) is not dict:
            raise Invalid("Expected an object.", ["context"])
        for k, x in context.items():
            try:
                self.dynamic_value(x, ctx)
            except Invalid as e:
                e.parts.extend((k, "context"))
                raise


def _check_return(name: str, given: str | None, declared: str | None, expected: str) -> None:
    """The call must produce the type the property needs (schema + declared type)."""
    if given is not None:
        if given != expected:
            raise Invalid(f"A function call here must return {expected}, not {given}.",
                          ["returnType"])
    elif declared is not None and declared not in (expected, "any"):
        raise Invalid(f"Function '{name}' returns {declared}, but {expected} is needed here.",
                      ["call"])


def _police_url_args(args: Any, url_args: tuple[str, ...]) -> None:
    if type(args) is not dict:
        return
    for arg in url_args:
        url = args.get(arg)
        problem = url_problem(url, allow_relative=False) if type(url) is str else None
        if problem is not None:
            raise Invalid(f"Only http and https URLs are allowed: {problem}.", [arg, "args"])


def _is_str(v: Any) -> bool:
    return type(v) is str


def _is_num(v: Any) -> bool:
    return type(v) in _NUM


def _is_bool(v: Any) -> bool:
    return type(v) is bool


def _never(v: Any) -> bool:
    return False
