"""Numbers a client draws are finite and bounded, and what it draws one mark per item is bounded
in count (a2ui/core/content/drawn.py): issue 23, item 2.

A pie of ``[1e308, -1e308, null]`` was accepted and froze the person's tab for more than 45 s,
on every reload. Every numeric field a client draws is refused here at the edge of the double
range (values the JSON value policy lets through), NaN and Infinity from the Python API, and
too many items; -32602 names the field (``data.path``), v0.9 says VALIDATION_FAILED with a JSON
Pointer. The bounds themselves are accepted.
"""

import math

import pytest

from a2ui.core.content import drawn
from a2ui.core.content.components import validate_component
from a2ui.core.content.methods import validate_params
from a2ui.core.content.updates import apply_update
from a2ui.core.errors import DomainError
from a2ui.core.surfaces import ValidationFailed, validate_server_message
from a2ui.rpc.errors import ErrorCode, ProtocolError

HOSTILE = [1e308, -1e308, 1.7976931348623157e308, -1.7976931348623157e308, 1e16, -1e16,
           math.inf, -math.inf, math.nan, 2**53]
NEGATIVE_HOSTILE = [v for v in HOSTILE if not v >= 0]  # what the non-negative fields refuse
LIMIT = drawn.MAX_DRAWN


def refused(call, path):
    with pytest.raises(DomainError) as info:
        call()
    assert ProtocolError.of(info.value).code == ErrorCode.INVALID_PARAMS
    assert info.value.data["path"] == path, info.value.data
    return info.value.data["reason"]


def chart(chart_type="bar", data=(1, 2), **extra):
    return {"chart_type": chart_type, "series": [{"name": "s", "data": list(data)}], **extra}


# Seed-000 components ---------------------------------------------------------------------------


def test_the_reported_pie_is_refused():
    reason = refused(lambda: validate_component(
        "chart", chart("pie", [1e308, -1e308, None])), "params.data.series[0].data[0]")
    assert "1e+15" in reason


@pytest.mark.parametrize("chart_type", ["bar", "line", "pie"])
@pytest.mark.parametrize("value", HOSTILE)
def test_chart_values_are_finite_and_bounded(chart_type, value):
    refused(lambda: validate_component("chart", chart(chart_type, [1, None, value])),
            "params.data.series[0].data[2]")
    multi = {"chart_type": chart_type, "series": [{"name": "a", "data": [1]},
                                                  {"name": "b", "data": [value]}]}
    refused(lambda: validate_component("chart", multi), "params.data.series[1].data[0]")


@pytest.mark.parametrize("value", HOSTILE)
def test_numeric_axis_values_are_bounded(value):
    data = chart(x_axis={"label": "x", "values": ["a", 2, value]})
    refused(lambda: validate_component("chart", data), "params.data.x_axis.values[2]")


@pytest.mark.parametrize("value", [-1, -0.5, -5e-324, -1e308])
def test_a_pie_has_no_negative_slices(value):
    reason = refused(lambda: validate_component("chart", chart("pie", [1, value])),
                     "params.data.series[0].data[1]")
    assert "pie" in reason
    validate_component("chart", chart("bar", [1, max(value, -LIMIT)]))  # bars may be negative


def test_chart_counts_are_bounded():
    too_many = drawn.MAX_CHART_POINTS + 1
    refused(lambda: validate_component("chart", chart(data=[1] * too_many)),
            "params.data.series[0].data")
    refused(lambda: validate_component("chart", chart("pie", [1] * too_many)),
            "params.data.series[0].data")
    refused(lambda: validate_component("chart", chart(x_axis={"values": ["a"] * too_many})),
            "params.data.x_axis.values")
    series = [{"name": f"s{i}", "data": [i]} for i in range(drawn.MAX_CHART_SERIES + 1)]
    refused(lambda: validate_component("chart", {"chart_type": "line", "series": series}),
            "params.data.series")


def test_chart_bounds_themselves_are_accepted():
    points = [LIMIT, -LIMIT, 0, None, 5e-324] + [1] * (drawn.MAX_CHART_POINTS - 5)
    series = [{"name": f"s{i}", "data": points} for i in range(drawn.MAX_CHART_SERIES)]
    validate_component("chart", {"chart_type": "line", "series": series,
                                 "x_axis": {"values": [LIMIT] * drawn.MAX_CHART_POINTS}})
    validate_component("chart", chart("pie", [0, LIMIT, None, 5e-324]))


def test_appending_past_the_bounds_is_refused():
    current = validate_component("chart", chart(data=[1] * drawn.MAX_CHART_POINTS))
    refused(lambda: apply_update("chart", current, "append", {"series": [
        {"name": "t", "data": [1e308]}]}), "params.data.series[1].data[0]")
    # A merge cannot bring a hostile value in either (the result is validated as a render).
    refused(lambda: apply_update("chart", current, "merge", {"series": [
        {"name": "t", "data": [1] * (drawn.MAX_CHART_POINTS + 1)}]}), "params.data.series[0].data")


@pytest.mark.parametrize("value", HOSTILE)
@pytest.mark.parametrize("key", ["min", "max"])
def test_form_number_ranges_are_bounded(key, value):
    data = {"fields": [{"name": "n", "type": "number", key: value}]}
    refused(lambda: validate_component("form", data), f"params.data.fields[0].{key}")


def test_form_ranges_are_in_order():
    data = {"fields": [{"name": "n", "type": "number", "min": 5, "max": 1}]}
    refused(lambda: validate_component("form", data), "params.data.fields[0].max")
    validate_component("form", {"fields": [{"name": "n", "type": "number", "min": -LIMIT,
                                            "max": LIMIT}]})


def test_steps_are_bounded_in_count():
    steps = [{"label": f"s{i}", "status": "pending"} for i in range(drawn.MAX_STEPS + 1)]
    refused(lambda: validate_component("steps", {"steps": steps}), "params.data.steps")
    validate_component("steps", {"steps": steps[:-1], "current_step": drawn.MAX_STEPS - 1})


@pytest.mark.parametrize("key", ["width", "height"])
@pytest.mark.parametrize("value", [1e308, drawn.MAX_IMAGE_DIMENSION + 1, 0, -1])
def test_image_sizes_are_bounded(key, value):
    data = {"url": "https://cdn.example/x.png", key: value}
    refused(lambda: validate_component("image", data), f"params.data.{key}")


def test_what_the_client_draws_from_a_content_object_is_checked():
    """The web client draws ``{title, content: {...}}`` with content's keys (normalize)."""
    data = {"chart_type": "pie", "series": [{"name": "s", "data": [1]}],
            "content": {"x_axis": {"values": [1e308]}}}
    refused(lambda: validate_component("chart", data), "params.data.content.x_axis.values[0]")
    form = {"fields": [{"name": "a", "type": "text"}], "content": {"fields": []}}
    validate_component("form", form)  # the top level's fields are the ones drawn


# Seed-000 methods ----------------------------------------------------------------------------


def request(method, **params):
    return lambda: validate_params(method, {"session_id": "s", **params})


@pytest.mark.parametrize("value", HOSTILE)
@pytest.mark.parametrize("key", ["min", "max"])
def test_input_validation_ranges_are_bounded(key, value):
    refused(request("ui.request_input", request_id="r", input_type="number", prompt="n?",
                    validation={key: value}), f"params.validation.{key}")


def test_input_validation_ranges_are_in_order():
    refused(request("ui.request_input", request_id="r", input_type="number", prompt="n?",
                    validation={"min": 2, "max": 1}), "params.validation.max")


@pytest.mark.parametrize("value", [v for v in HOSTILE if not 0 <= v <= LIMIT])
@pytest.mark.parametrize("key", ["value", "total"])
def test_progress_is_bounded(key, value):
    refused(request("ui.progress", task_id="t", progress_type="determinate", **{key: value}),
            f"params.{key}")


def test_progress_bounds_are_accepted():
    validate_params("ui.progress", {"session_id": "s", "task_id": "t",
                                           "progress_type": "determinate", "value": LIMIT,
                                           "total": LIMIT})


# v0.9 surfaces -------------------------------------------------------------------------------


def v09(*components):
    return {"version": "v0.9", "updateComponents": {"surfaceId": "s", "components": [
        {"id": "root", "component": "Column", "children": [c["id"] for c in components]},
        *components]}}


def v09_refused(message, path):
    with pytest.raises(ValidationFailed) as info:
        validate_server_message(message)
    assert info.value.to_error_message()["error"]["code"] == "VALIDATION_FAILED"
    assert info.value.path == path, info.value
    return info.value


@pytest.mark.parametrize("value", HOSTILE[:6] + [-1, drawn.MAX_WEIGHT + 1])
def test_v09_weight_is_bounded(value):
    text = {"id": "t", "component": "Text", "text": "hi", "weight": value}
    v09_refused(v09(text), "/updateComponents/components/1/weight")
    validate_server_message(v09({**text, "weight": drawn.MAX_WEIGHT}))


@pytest.mark.parametrize("value", HOSTILE[:6])
@pytest.mark.parametrize("key", ["min", "max", "value"])
def test_v09_slider_numbers_are_bounded(key, value):
    slider = {"id": "sl", "component": "Slider", "min": 0, "max": 10, "value": 5, key: value}
    if key == "min" and value < 0:
        slider["min"] = value
    v09_refused(v09(slider), f"/updateComponents/components/1/{key}")


def test_v09_slider_range_in_order_and_bindings_pass():
    slider = {"id": "sl", "component": "Slider", "min": 10, "max": 1, "value": {"path": "/v"}}
    v09_refused(v09(slider), "/updateComponents/components/1/max")
    validate_server_message(v09({**slider, "min": -LIMIT, "max": LIMIT}))


@pytest.mark.parametrize("value", HOSTILE[:6] + [-1, drawn.MAX_DECIMALS + 1])
@pytest.mark.parametrize("function", ["formatNumber", "formatCurrency"])
def test_v09_format_decimals_are_bounded(function, value):
    """formatNumber's decimals of 1e308: Intl.NumberFormat and its toFixed fallback throw."""
    args = {"value": 3.5, "decimals": value, **({"currency": "EUR"} if "Currency" in function
                                                 else {})}
    text = {"id": "t", "component": "Text",
            "text": {"call": function, "args": args, "returnType": "string"}}
    v09_refused(v09(text), "/updateComponents/components/1/text/args/decimals")
    args["decimals"] = drawn.MAX_DECIMALS
    validate_server_message(v09(text))
    args["decimals"] = {"path": "/d"}  # bound: the data model's, not judged
    validate_server_message(v09(text))
