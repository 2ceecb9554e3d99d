"""Shapes of the nine seed-000 component types (§5) and of render ``metadata``.

:func:`validate_component` first checks the raw shape (so errors name the field the agent
sent), then returns a sanitized copy via :func:`~a2ui.core.content.sanitize.sanitize_tree`.
Unknown extra keys are kept (agents may carry hints for richer clients) but their
strings are sanitized and URL-named keys are URL-checked like known ones.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from a2ui.core.content import customtypes, drawn
from a2ui.core.content import fields as f
from a2ui.core.content.drawn import MAX_IMAGE_DIMENSION
from a2ui.core.content.sanitize import (
    check_url,
    keys_as_stored,
    sanitize_markdown,
    sanitize_tree,
)
from a2ui.core.errors import invalid_input

COMPONENT_TYPES: tuple[str, ...] = (
    "card",
    "table",
    "form",
    "chart",
    "markdown",
    "code",
    "image",
    "alert",
    "steps",
)

CHART_TYPES = ("bar", "line", "pie")
ALERT_SEVERITIES = ("info", "success", "warning", "error")
STEP_STATUSES = ("pending", "active", "completed", "error")
FORM_FIELD_TYPES = ("text", "number", "select", "date", "textarea", "checkbox", "email")
PRIORITIES = ("normal", "high", "low")
POSITIONS = ("main", "sidebar", "overlay")
#: ttl_seconds upper bound: a week. Longer-lived UI belongs in a real page.
MAX_TTL_SECONDS = 7 * 24 * 3600


def _refuse(found: drawn.Problem | None, path: str) -> None:
    """-32602 for a problem of :mod:`a2ui.core.content.drawn`, its parts joined onto ``path``."""
    if found is not None:
        parts, reason = found
        for part in parts:
            path = f.index(path, part) if isinstance(part, int) else f.join(path, part)
        raise invalid_input(path, reason)


def _card(data: dict[str, Any], path: str) -> None:
    f.string(data, "title", path, required=True)
    f.string(data, "description", path)
    sections = f.join(path, "sections")
    for i, section in enumerate(f.objects(data, "sections", path)):
        item = f.index(sections, i)
        f.string(section, "label", item, required=True)
        value = section.get("value")
        if value is not None and not isinstance(value, str | int | float | bool):
            raise invalid_input(f.join(item, "value"), "must be a string, number or boolean")
    actions = f.join(path, "actions")
    for i, action in enumerate(f.objects(data, "actions", path)):
        item = f.index(actions, i)
        f.string(action, "label", item, required=True)
        f.string(action, "action", item, required=True, non_empty=True)
        if action.get("url") is not None:
            check_url(action["url"], f.join(item, "url"))


def _table(data: dict[str, Any], path: str) -> None:
    headers = f.join(path, "headers")
    seen: set[str] = set()
    for i, header in enumerate(f.objects(data, "headers", path, required=True)):
        item = f.index(headers, i)
        key = f.string(header, "key", item, required=True, non_empty=True)
        if key in seen:
            raise invalid_input(f.join(item, "key"), f"duplicate header key {key!r}")
        seen.add(key)
        f.string(header, "label", item, required=True)
        f.boolean(header, "sortable", item)
    f.objects(data, "rows", path, required=True)


def _form(data: dict[str, Any], path: str) -> None:
    fields_path = f.join(path, "fields")
    seen: set[str] = set()
    for i, field in enumerate(f.objects(data, "fields", path, required=True)):
        item = f.index(fields_path, i)
        name = f.string(field, "name", item, required=True, non_empty=True)
        if name in seen:
            raise invalid_input(f.join(item, "name"), f"duplicate field name {name!r}")
        seen.add(name)
        kind = f.enum(field, "type", FORM_FIELD_TYPES, item, required=True)
        f.string(field, "label", item)
        f.string(field, "placeholder", item)
        f.boolean(field, "required", item)
        f.number(field, "min", item)
        f.number(field, "max", item)
        _refuse(drawn.range_problem(field), item)
        f.string(field, "pattern", item, max_length=512)
        options = f.strings(field, "options", item, required=kind == "select")
        if kind == "select" and not options:
            raise invalid_input(f.join(item, "options"), "a select field needs options")
    f.string(data, "submit_label", path)
    f.string(data, "cancel_label", path)


def _chart(data: dict[str, Any], path: str) -> None:
    f.enum(data, "chart_type", CHART_TYPES, path, required=True)
    f.string(data, "title", path)
    x_axis = f.get(data, "x_axis", path, required=False)
    if not f.is_missing(x_axis):
        x_path = f.join(path, "x_axis")
        f.obj(x_axis, x_path)
        f.string(x_axis, "label", x_path)
        values = f.array(x_axis, "values", x_path)
        for i, value in enumerate([] if f.is_missing(values) else values):
            if not isinstance(value, str) and not f.is_number(value):
                raise invalid_input(
                    f.index(f.join(x_path, "values"), i), "must be a string or number"
                )
    y_axis = f.get(data, "y_axis", path, required=False)
    if not f.is_missing(y_axis):
        f.obj(y_axis, f.join(path, "y_axis"))
        f.string(y_axis, "label", f.join(path, "y_axis"))
    series_path = f.join(path, "series")
    for i, series in enumerate(f.objects(data, "series", path, required=True)):
        item = f.index(series_path, i)
        f.string(series, "name", item, required=True)
        points = f.array(series, "data", item, required=True)
        for j, point in enumerate(points):
            if point is not None and not f.is_number(point):
                raise invalid_input(f.index(f.join(item, "data"), j), "must be a number or null")
    _refuse(drawn.chart_problem(data), path)


def _markdown(data: dict[str, Any], path: str) -> None:
    f.string(data, "content", path, required=True)


def _code(data: dict[str, Any], path: str) -> None:
    f.string(data, "code", path, required=True)
    f.string(data, "language", path, max_length=64)
    f.string(data, "title", path)


def _image(data: dict[str, Any], path: str) -> None:
    check_url(f.get(data, "url", path, required=True), f.join(path, "url"))
    f.string(data, "alt", path)
    f.string(data, "caption", path)
    f.integer(data, "width", path, minimum=1, maximum=MAX_IMAGE_DIMENSION)
    f.integer(data, "height", path, minimum=1, maximum=MAX_IMAGE_DIMENSION)


def _alert(data: dict[str, Any], path: str) -> None:
    f.enum(data, "severity", ALERT_SEVERITIES, path)
    title = f.string(data, "title", path)
    message = f.string(data, "message", path)
    if f.is_missing(title) and f.is_missing(message):
        raise invalid_input(f.join(path, "message"), "an alert needs a title or a message")
    f.boolean(data, "dismissible", path)


def _steps(data: dict[str, Any], path: str) -> None:
    steps_path = f.join(path, "steps")
    steps = f.objects(data, "steps", path, required=True)
    if len(steps) > drawn.MAX_STEPS:
        raise invalid_input(steps_path, f"at most {drawn.MAX_STEPS} steps")
    for i, step in enumerate(steps):
        item = f.index(steps_path, i)
        f.string(step, "label", item, required=True)
        f.enum(step, "status", STEP_STATUSES, item, required=True)
        f.string(step, "description", item)
    f.integer(data, "current_step", path, minimum=0, maximum=max(len(steps) - 1, 0))


_CHECKERS: dict[str, Callable[[dict[str, Any], str], None]] = {
    "card": _card,
    "table": _table,
    "form": _form,
    "chart": _chart,
    "markdown": _markdown,
    "code": _code,
    "image": _image,
    "alert": _alert,
    "steps": _steps,
}

#: Defaults filled into the sanitized data when the agent left them out.
_DEFAULTS: dict[str, dict[str, Any]] = {"alert": {"severity": "info"}}


def all_types() -> tuple[str, ...]:
    """The nine of seed 000, then the host project's (``a2ui.core.content.customtypes``)."""
    return COMPONENT_TYPES + customtypes.names()


def check_component_type(component_type: Any, path: str = "params.component_type") -> str:
    if component_type not in COMPONENT_TYPES and not customtypes.is_custom(component_type):
        raise invalid_input(path, f"must be one of {', '.join(all_types())}")
    return component_type


def validate_component(component_type: str, data: Any, path: str = "params.data") -> dict[str, Any]:
    """Check ``data`` against ``component_type``'s shape; return a sanitized copy.

    Raises -32602 with ``data.path`` like ``params.data.rows[2]`` on the first problem.
    """
    check_component_type(component_type)
    f.obj(data, path)
    # Checked with its keys as they will be stored: sanitizing changes a key such as
    # "x_axis\x7f" into "x_axis", which must then be a valid x_axis.
    data = keys_as_stored(data, path)
    if customtypes.is_custom(component_type):  # the host's schema; sanitized as any other
        customtypes.check(component_type, data, path)
        return sanitize_tree(data, path=path)
    _CHECKERS[component_type](data, path)
    content = data.get("content")
    if isinstance(content, dict):
        # The web client draws ``{title, content: {...}}`` as content's keys under the top
        # level's (components.js, normalize): what it would draw is checked as well.
        view = {**content, **{k: v for k, v in data.items() if k != "content"}}
        _CHECKERS[component_type](view, f.join(path, "content"))
    cleaned = sanitize_tree(data, path=path)
    if component_type == "markdown":
        cleaned["content"] = sanitize_markdown(data["content"])
    for key, value in _DEFAULTS.get(component_type, {}).items():
        if cleaned.get(key) is None:
            cleaned[key] = value
    return cleaned


def validate_metadata(metadata: Any, path: str = "params.metadata") -> dict[str, Any]:
    """Render hints with defaults: priority "normal", position "main"; ttl_seconds optional
    (1 s .. 7 days). Always returns a dict, so consumers never branch on absence."""
    if metadata is None:
        metadata = {}
    f.obj(metadata, path)
    cleaned = sanitize_tree(metadata, path=path)
    cleaned["priority"] = f.enum(metadata, "priority", PRIORITIES, path, default="normal")
    cleaned["position"] = f.enum(metadata, "position", POSITIONS, path, default="main")
    ttl = f.integer(metadata, "ttl_seconds", path, minimum=1, maximum=MAX_TTL_SECONDS)
    if f.is_missing(ttl):
        cleaned.pop("ttl_seconds", None)
    else:
        cleaned["ttl_seconds"] = ttl
    return cleaned
