"""Numbers a client draws, and how many things it draws: the one rule of every protocol. Sans-I/O.

The JSON value policy (:mod:`a2ui.core.content.jsonvalue`) keeps numbers finite doubles, but a
finite double can still be 1e308: a chart whose axis spans ``-1e308..1e308`` (a range that
overflows to Infinity) froze the person's tab for more than 45 s, and again on every reload,
since the session's state is replayed. So every number a client draws on a scale or turns into
a size, a range or a count is refused here, before any state changes, unless it is within the
bounds below; collections drawn one mark per item (chart series, points, pie slices, steps) are
bounded in count; a pie's slices are not negative.

Seed-000 components (:mod:`a2ui.core.content.components`, and ``ui.request_input`` and
``ui.progress`` in :mod:`a2ui.core.content.methods`) and the v0.9 basic catalog
(:mod:`a2ui.core.surfaces.catalog`) use these functions; each returns the problem as ``(parts,
reason)``, ``parts`` the keys and indexes from the object it was given, and the caller turns
it into its protocol's error (-32602 with ``data.path``, v0.9 ``VALIDATION_FAILED`` with a
JSON Pointer). The web client mirrors the bounds (``a2ui/static/a2ui/client/chart.js``) for
sessions stored before they were enforced. Numbers only shown as text (a card's value, a table
cell) are not bounded beyond the JSON value policy: any finite double prints.
"""

from __future__ import annotations

from typing import Any

from a2ui.core.content.jsonvalue import float_problem

#: The largest magnitude of a drawn number (chart values, numeric axis values, form, input
#: and slider ranges, progress): 10**15, below JavaScript's 2**53 so every integer in range
#: is exact, and far from the double range, so no span of two bounded values overflows.
MAX_DRAWN = 1e15
#: Series in one chart (one colour, one legend entry and one table column each).
MAX_CHART_SERIES = 20
#: Points per series, and values of a chart's x axis (one label each); a pie's slices.
MAX_CHART_POINTS = 1000
#: Steps of a ``steps`` component.
MAX_STEPS = 100
#: An image's ``width`` / ``height`` in CSS pixels.
MAX_IMAGE_DIMENSION = 16384
#: A v0.9 component's ``weight`` (its CSS flex-grow): 0 to this.
MAX_WEIGHT = 1000
#: Literal ``decimals`` of the v0.9 ``formatNumber`` / ``formatCurrency`` calls: 0 to this
#: (beyond 100 the renderer's Intl.NumberFormat and its toFixed fallback both throw).
MAX_DECIMALS = 20
_DECIMAL_FUNCTIONS = frozenset({"formatNumber", "formatCurrency"})

Problem = tuple[tuple[str | int, ...], str]


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _shown(bound: float) -> str:
    return f"{bound:g}" if isinstance(bound, float) else str(bound)


def number_problem(value: Any, minimum: float = -MAX_DRAWN,
                   maximum: float = MAX_DRAWN) -> str | None:
    """Why ``value`` is not a drawable number within ``minimum..maximum``, or None."""
    if not is_number(value):
        return "must be a number"
    if isinstance(value, float) and float_problem(value):
        return "must be a finite number"
    if value < minimum or value > maximum:
        return f"must be within {_shown(minimum)}..{_shown(maximum)}"
    return None


def count_problem(items: list, limit: int, what: str) -> str | None:
    if len(items) > limit:
        return f"at most {limit} {what}"
    return None


def range_problem(d: dict[str, Any], low: str = "min", high: str = "max",
                  minimum: float = -MAX_DRAWN, maximum: float = MAX_DRAWN) -> Problem | None:
    """``d[low]`` and ``d[high]``, where present (and not null), drawable and in order."""
    for key in (low, high):
        value = d.get(key)
        if value is not None:
            problem = number_problem(value, minimum, maximum)
            if problem:
                return (key,), problem
    lo, hi = d.get(low), d.get(high)
    if lo is not None and hi is not None and lo > hi:
        return (high,), f"must be >= {low}"
    return None


def values_problem(values: list, *, minimum: float = -MAX_DRAWN, nulls: bool = False,
                   strings: bool = False) -> Problem | None:
    """Each item of ``values`` a drawable number (or null / a string where allowed)."""
    for i, value in enumerate(values):
        if (nulls and value is None) or (strings and isinstance(value, str)):
            continue
        problem = number_problem(value, minimum)
        if problem:
            if nulls:
                problem += " or null"
            elif strings:
                problem = "must be a string or " + problem.removeprefix("must be ")
            return (i,), problem
    return None


def chart_problem(data: dict[str, Any]) -> Problem | None:
    """A seed-000 chart (``chart_type``, ``x_axis.values``, ``series[].data``)."""
    x_axis = data.get("x_axis")
    values = x_axis.get("values") if isinstance(x_axis, dict) else None
    if isinstance(values, list):
        problem = count_problem(values, MAX_CHART_POINTS, "axis values")
        if problem:
            return ("x_axis", "values"), problem
        found = values_problem(values, strings=True)
        if found:
            return ("x_axis", "values", *found[0]), found[1]
    series = data.get("series")
    if not isinstance(series, list):
        return None
    problem = count_problem(series, MAX_CHART_SERIES, "series")
    if problem:
        return ("series",), problem
    pie = data.get("chart_type") == "pie"
    for i, item in enumerate(series):
        points = item.get("data") if isinstance(item, dict) else None
        if not isinstance(points, list):
            continue
        problem = count_problem(points, MAX_CHART_POINTS, "points (slices of a pie)")
        if problem:
            return ("series", i, "data"), problem
        found = values_problem(points, minimum=0 if pie else -MAX_DRAWN, nulls=True)
        if found:
            reason = found[1] + (" (a pie's slices are not negative)" if pie else "")
            return ("series", i, "data", *found[0]), reason
    return None


def v09_component_problem(comp: dict[str, Any]) -> Problem | None:
    """A v0.9 component's literal drawn numbers: every component's ``weight`` (its flex-grow),
    a ``Slider``'s ``min``, ``max`` and literal ``value`` (a data binding is not a number)."""
    weight = comp.get("weight")
    if weight is not None:
        problem = number_problem(weight, 0, MAX_WEIGHT)
        if problem:
            return ("weight",), problem
    if comp.get("component") == "Slider":
        found = range_problem(comp)
        if found:
            return found
        value = comp.get("value")
        if is_number(value):
            problem = number_problem(value)
            if problem:
                return ("value",), problem
    return None


def v09_call_problem(name: Any, args: dict[str, Any]) -> Problem | None:
    """A v0.9 function call's literal drawn numbers: ``decimals`` of ``formatNumber`` and
    ``formatCurrency`` (a data binding or a nested call is not a number)."""
    if name in _DECIMAL_FUNCTIONS:
        problem = number_problem(args["decimals"], 0, MAX_DECIMALS) if is_number(
            args.get("decimals")) else None
        if problem:
            return ("args", "decimals"), problem
    return None
