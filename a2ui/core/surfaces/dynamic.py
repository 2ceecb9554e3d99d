"""Post-checks on values the schema already accepted: what JSON Schema cannot say.

After jsonschema-rs accepted a component (:mod:`a2ui.core.surfaces.schema`), :class:`PostChecks`
visits only the places a :mod:`~a2ui.core.surfaces.locate` plan names (child lists,
bindings, function calls, actions; each plan is turned into one closure per
catalog) and

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

from a2ui.core.content.drawn import Problem, v09_call_problem
from a2ui.core.content.jsonvalue import MAX_DEPTH
from a2ui.core.surfaces.errors import Invalid
from a2ui.core.surfaces.locate import Plan
from a2ui.core.surfaces.pointer import is_valid_path
from a2ui.core.surfaces.urls import url_problem

MAX_FUNC_DEPTH = 5
MAX_VALUE_DEPTH = MAX_DEPTH  # the one free-form JSON limit (a2ui.core.content.jsonvalue)
Check = Callable[[Any, "Ctx"], None]
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
    checks: dict[str, Check] = field(default_factory=dict)  # compiled ``args``


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
        self.kinds: dict[str, Check] = {
            "ComponentId": _component_id,
            "ChildList": _child_list,
            "DataBinding": _binding,
            "DynamicValue": self._dynamic_value,
            "FunctionCall": self._function_call,
            "Action": self._action,
            **{k: self._dynamic(t) for k, t in _EXPECTED.items()},
        }
        for spec in functions.values():
            spec.checks = {k: c for k, p in spec.args.items()
                           if (c := self.compile(p)) is not None}

    def compile(self, plan: Plan) -> Check | None:
        """One function applying ``plan`` to an accepted value (None: nothing to do).

        Errors carry the key path below the value. Plans may be recursive
        (a schema that refers to itself), hence the memo of forwarders.
        """
        return self._compile(plan, {})

    def _compile(self, plan: Plan, memo: dict[int, Check]) -> Check | None:
        if plan is None:
            return None
        if isinstance(plan, str):
            return self.kinds[plan]
        if id(plan) in memo:
            return memo[id(plan)]
        cell: list[Check] = []
        memo[id(plan)] = lambda v, ctx: cell[0](v, ctx)
        props = tuple((k, c) for k, p in plan.props.items()
                      if (c := self._compile(p, memo)) is not None)
        items = self._compile(plan.items, memo)
        extra = self._compile(plan.extra, memo)
        known = frozenset(plan.props)

        def check_shape(v: Any, ctx: Ctx) -> None:
            t = type(v)
            if t is dict:
                for k, check in props:
                    if k in v:
                        try:
                            check(v[k], ctx)
                        except Invalid as e:
                            e.parts.append(k)
                            raise
                if extra is not None:
                    for k, x in v.items():
                        if k not in known:
                            try:
                                extra(x, ctx)
                            except Invalid as e:
                                e.parts.append(k)
                                raise
            elif t is list and items is not None:
                for i, x in enumerate(v):
                    try:
                        items(x, ctx)
                    except Invalid as e:
                        e.parts.append(i)
                        raise

        cell.append(check_shape)
        memo[id(plan)] = check_shape
        return check_shape

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
                check = spec.checks.get(k)
                try:
                    if check is None:
                        if type(x) is dict or type(x) is list:
                            check_depth(x)
                    else:
                        check(x, ctx)
                except Invalid as e:
                    e.parts.extend((k, "args"))
                    raise
        finally:
            ctx.fdepth -= 1
        if spec.url_args and ctx.check_urls:
            _police_url_args(args, spec.url_args)
        found = v09_call_problem(name, args)  # numbers the client draws (protocol/drawn.py)
        if found is not None:
            raise drawn_invalid(found)

    def _function_call(self, v: Any, ctx: Ctx) -> None:
        if type(v) is dict:
            self.call(v, ctx, None)

    # -- dynamic values -------------------------------------------------
    def _dynamic(self, expected: str) -> Check:
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


def drawn_invalid(found: Problem) -> Invalid:
    """A problem of :mod:`a2ui.core.content.drawn` as Invalid (its parts, innermost first)."""
    parts, reason = found
    return Invalid(reason[:1].upper() + reason[1:] + ".", list(reversed(parts)))


def _police_url_args(args: dict, url_args: tuple[str, ...]) -> None:
    for arg in url_args:
        url = args.get(arg)
        problem = url_problem(url, allow_relative=False) if type(url) is str else None
        if problem is not None:
            raise Invalid(f"Only http and https URLs are allowed: {problem}.", [arg, "args"])
