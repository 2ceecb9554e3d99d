"""Post-checks on values the schema already accepted: what JSON Schema cannot say.

After jsonschema-rs accepted a component (:mod:`a2ui.v09.schema`), :class:`PostChecks`
walks only the places a :mod:`~a2ui.v09.locate` plan names (child lists,
bindings, function calls, actions) and

* collects what the graph rules need into :class:`Ctx`: child and template
  references, and whether a relative data path was used;
* enforces our own rules: RFC 6901 syntax of binding paths, at most
  ``MAX_FUNC_DEPTH`` nested function calls, the return type a call declares
  (or its catalog function has) must be the one the property needs, free-form
  JSON (array literals, untyped function arguments) nests at most
  ``MAX_VALUE_DEPTH`` levels, and the URL policy for ``format: uri`` arguments.

It validates no shapes: every value it meets has passed the schema.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..protocol.jsonvalue import MAX_DEPTH
from .errors import Invalid
from .locate import Plan
from .pointer import is_valid_path
from .urls import url_problem

MAX_FUNC_DEPTH = 5
MAX_VALUE_DEPTH = MAX_DEPTH  # the one free-form JSON limit (a2ui.protocol.jsonvalue)
_EXPECTED = {"DynamicString": "string", "DynamicNumber": "number",
             "DynamicBoolean": "boolean", "DynamicStringList": "array"}


class Ctx:
    """Per-component scratch pad filled by the post-checks.

    refs: ids referenced as children; tmpl: ids used as ChildList templates;
    rel: a relative data path was used; fdepth: current FunctionCall nesting;
    check_urls: apply the URL scheme policy to literal URLs.
    """

    __slots__ = ("refs", "tmpl", "rel", "fdepth", "check_urls")

    def __init__(self, check_urls: bool = True) -> None:
        self.check_urls = check_urls
        self.reset()

    def reset(self) -> None:
        self.refs: list[str] = []
        self.tmpl: list[str] = []
        self.rel = False
        self.fdepth = 0


@dataclass
class FunctionSpec:
    """A catalog function: where its arguments hold common types, its return type, URL args."""

    name: str
    args: dict[str, Plan] = field(default_factory=dict)
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


def _check_path(v: dict, ctx: Ctx) -> None:
    path = v.get("path")
    if type(path) is not str:
        return
    if not is_valid_path(path):
        raise Invalid("Invalid JSON Pointer: '~' must be followed by '0' or '1'.", ["path"])
    if path and path[0] != "/":
        ctx.rel = True


class PostChecks:
    """The post-checks of one catalog (function calls need its function table)."""

    def __init__(self, functions: dict[str, FunctionSpec]) -> None:
        self.functions = functions
        self.kinds: dict[str, Callable[[Any, Ctx], None]] = {
            "ComponentId": _component_id,
            "ChildList": _child_list,
            "DataBinding": _binding,
            "DynamicValue": self._dynamic_value,
            "FunctionCall": self._function_call,
            "Action": self._action,
            **{k: self._dynamic(t) for k, t in _EXPECTED.items()},
        }

    def walk(self, plan: Plan, v: Any, ctx: Ctx) -> None:
        """Apply ``plan`` to an accepted value; errors carry the key path below ``v``."""
        if plan is None:
            return
        if plan.__class__ is str:
            self.kinds[plan](v, ctx)
            return
        t = type(v)
        if t is dict:
            props = plan.props
            for k, sub in props.items():
                if k in v:
                    self._step(sub, v[k], ctx, k)
            if plan.extra is not None:
                for k, x in v.items():
                    if k not in props:
                        self._step(plan.extra, x, ctx, k)
        elif t is list and plan.items is not None:
            for i, x in enumerate(v):
                self._step(plan.items, x, ctx, i)

    def _step(self, plan: Plan, v: Any, ctx: Ctx, key: Any) -> None:
        try:
            self.walk(plan, v, ctx)
        except Invalid as e:
            e.parts.append(key)
            raise

    # -- function calls -------------------------------------------------
    def call(self, v: dict, ctx: Ctx, expected: str | None) -> None:
        name = v.get("call")
        spec = self.functions.get(name) if type(name) is str else None
        if spec is None:
            raise Invalid(f"Unknown function '{name}'.", ["call"])
        if expected is not None:
            _check_return(name, v.get("returnType"), spec.returns, expected)
        if ctx.fdepth >= MAX_FUNC_DEPTH:
            raise Invalid(f"Function calls may nest at most {MAX_FUNC_DEPTH} levels deep.")
        args = v.get("args")
        if type(args) is not dict:
            return
        ctx.fdepth += 1
        try:
            for k, x in args.items():
                plan = spec.args.get(k)
                try:
                    if plan is None:
                        check_depth(x)
                    else:
                        self.walk(plan, x, ctx)
                except Invalid as e:
                    e.parts.extend((k, "args"))
                    raise
        finally:
            ctx.fdepth -= 1
        if spec.url_args and ctx.check_urls:
            _police_url_args(args, spec.url_args)

    def _function_call(self, v: Any, ctx: Ctx) -> None:
        if type(v) is dict:
            self.call(v, ctx, None)

    # -- dynamic values -------------------------------------------------
    def _dynamic(self, expected: str) -> Callable[[Any, Ctx], None]:
        call = self.call

        def check_dynamic(v: Any, ctx: Ctx) -> None:
            if type(v) is dict:
                if "call" in v:
                    call(v, ctx, expected)
                else:
                    _check_path(v, ctx)

        return check_dynamic

    def _dynamic_value(self, v: Any, ctx: Ctx) -> None:
        t = type(v)
        if t is list:
            check_depth(v)
        elif t is dict:
            if "call" in v:
                self.call(v, ctx, None)
            else:
                _check_path(v, ctx)

    # -- actions --------------------------------------------------------
    def _action(self, v: Any, ctx: Ctx) -> None:
        if type(v) is not dict:
            return
        if "functionCall" in v:
            try:
                self._function_call(v["functionCall"], ctx)
            except Invalid as e:
                e.parts.append("functionCall")
                raise
            return
        event = v.get("event")
        context = event.get("context") if type(event) is dict else None
        if type(context) is dict:
            for k, x in context.items():
                try:
                    self._dynamic_value(x, ctx)
                except Invalid as e:
                    e.parts.extend((k, "context", "event"))
                    raise


def _component_id(v: Any, ctx: Ctx) -> None:
    if type(v) is str:
        ctx.refs.append(v)


def _child_list(v: Any, ctx: Ctx) -> None:
    """Static ``[ids]`` or template ``{componentId, path}`` (relative to the item)."""
    if type(v) is list:
        ctx.refs.extend(v)
    elif type(v) is dict:
        _check_path(v, ctx)
        cid = v.get("componentId")
        ctx.refs.append(cid)
        ctx.tmpl.append(cid)


def _binding(v: Any, ctx: Ctx) -> None:
    if type(v) is dict:
        _check_path(v, ctx)


def _check_return(name: str, given: str | None, declared: str | None, expected: str) -> None:
    """The call must produce the type the property needs (schema + declared type)."""
    if given is not None:
        if given != expected:
            raise Invalid(f"A function call here must return {expected}, not {given}.",
                          ["returnType"])
    elif declared is not None and declared not in (expected, "any"):
        raise Invalid(f"Function '{name}' returns {declared}, but {expected} is needed here.",
                      ["call"])


def _police_url_args(args: dict, url_args: tuple[str, ...]) -> None:
    for arg in url_args:
        url = args.get(arg)
        problem = url_problem(url, allow_relative=False) if type(url) is str else None
        if problem is not None:
            raise Invalid(f"Only http and https URLs are allowed: {problem}.", [arg, "args"])
