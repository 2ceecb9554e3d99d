import pytest

from a2ui.core.content.components import COMPONENT_TYPES, validate_component
from a2ui.core.errors import DomainError
from a2ui.rpc.errors import ErrorCode, ProtocolError

VALID = {
    "card": {"title": "T"},
    "table": {"headers": [{"key": "a", "label": "A"}], "rows": []},
    "form": {"fields": [{"name": "q", "type": "text"}]},
    "chart": {"chart_type": "bar", "series": [{"name": "s", "data": [1, 2.5, None]}]},
    "markdown": {"content": "# Hi"},
    "code": {"code": "print(1)"},
    "image": {"url": "https://cdn.example.com/x.png"},
    "alert": {"message": "m"},
    "steps": {"steps": [{"label": "a", "status": "active"}]},
}


def invalid(component_type, data, path):
    with pytest.raises(DomainError) as info:
        validate_component(component_type, data)
    assert ProtocolError.of(info.value).code == ErrorCode.INVALID_PARAMS
    assert info.value.data["path"] == path, info.value.data
    return info.value


def test_nine_types():
    assert COMPONENT_TYPES == (
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
    assert set(VALID) == set(COMPONENT_TYPES)


@pytest.mark.parametrize("component_type", COMPONENT_TYPES)
def test_minimal(component_type):
    assert validate_component(component_type, VALID[component_type])


def test_unknown_type():
    invalid("video", {}, "params.component_type")


def test_alert_severity_default():
    assert validate_component("alert", {"title": "x"})["severity"] == "info"


def test_extra_keys_kept():
    assert validate_component("code", {"code": "x", "theme": "dark"})["theme"] == "dark"


@pytest.mark.parametrize(
    ("component_type", "data", "path"),
    [
        ("card", {}, "params.data.title"),
        ("card", {"title": 1}, "params.data.title"),
        ("card", {"title": "t", "sections": {}}, "params.data.sections"),
        ("card", {"title": "t", "sections": ["x"]}, "params.data.sections[0]"),
        ("card", {"title": "t", "sections": [{"value": "v"}]}, "params.data.sections[0].label"),
        (
            "card",
            {"title": "t", "sections": [{"label": "l", "value": [1]}]},
            "params.data.sections[0].value",
        ),
        ("card", {"title": "t", "actions": [{"label": "l"}]}, "params.data.actions[0].action"),
        ("card", {"title": "t", "actions": [{"action": "go"}]}, "params.data.actions[0].label"),
        (
            "card",
            {"title": "t", "actions": [{"label": "l", "action": "go", "url": 5}]},
            "params.data.actions[0].url",
        ),
        ("table", {"rows": []}, "params.data.headers"),
        ("table", {"headers": [{"key": "a", "label": "A"}]}, "params.data.rows"),
        ("table", {"headers": [{"label": "A"}], "rows": []}, "params.data.headers[0].key"),
        ("table", {"headers": [{"key": "a"}], "rows": []}, "params.data.headers[0].label"),
        (
            "table",
            {"headers": [{"key": "a", "label": "A", "sortable": "y"}], "rows": []},
            "params.data.headers[0].sortable",
        ),
        (
            "table",
            {"headers": [{"key": "a", "label": "A"}, {"key": "a", "label": "B"}], "rows": []},
            "params.data.headers[1].key",
        ),
        (
            "table",
            {"headers": [{"key": "a", "label": "A"}], "rows": [{}, {}, ["x"]]},
            "params.data.rows[2]",
        ),
        ("form", {}, "params.data.fields"),
        ("form", {"fields": [{"type": "text"}]}, "params.data.fields[0].name"),
        ("form", {"fields": [{"name": "a", "type": "color"}]}, "params.data.fields[0].type"),
        ("form", {"fields": [{"name": "a", "type": "select"}]}, "params.data.fields[0].options"),
        (
            "form",
            {"fields": [{"name": "a", "type": "select", "options": [1]}]},
            "params.data.fields[0].options[0]",
        ),
        (
            "form",
            {"fields": [{"name": "a", "type": "number", "min": "0"}]},
            "params.data.fields[0].min",
        ),
        (
            "form",
            {"fields": [{"name": "a", "type": "text", "required": "yes"}]},
            "params.data.fields[0].required",
        ),
        (
            "form",
            {"fields": [{"name": "a", "type": "text", "label": 3}]},
            "params.data.fields[0].label",
        ),
        (
            "form",
            {"fields": [{"name": "a", "type": "text"}, {"name": "a", "type": "email"}]},
            "params.data.fields[1].name",
        ),
        ("form", {"fields": [], "submit_label": 1}, "params.data.submit_label"),
        ("chart", {"series": []}, "params.data.chart_type"),
        ("chart", {"chart_type": "radar", "series": []}, "params.data.chart_type"),
        ("chart", {"chart_type": "pie"}, "params.data.series"),
        ("chart", {"chart_type": "pie", "series": [{"data": [1]}]}, "params.data.series[0].name"),
        ("chart", {"chart_type": "pie", "series": [{"name": "s"}]}, "params.data.series[0].data"),
        (
            "chart",
            {"chart_type": "line", "series": [{"name": "s", "data": [1, "2"]}]},
            "params.data.series[0].data[1]",
        ),
        (
            "chart",
            {"chart_type": "line", "series": [{"name": "s", "data": [True]}]},
            "params.data.series[0].data[0]",
        ),
        (
            "chart",
            {"chart_type": "bar", "series": [], "x_axis": {"values": [{}]}},
            "params.data.x_axis.values[0]",
        ),
        ("chart", {"chart_type": "bar", "series": [], "x_axis": []}, "params.data.x_axis"),
        (
            "chart",
            {"chart_type": "bar", "series": [], "y_axis": {"label": 1}},
            "params.data.y_axis.label",
        ),
        ("markdown", {}, "params.data.content"),
        ("markdown", {"content": ["x"]}, "params.data.content"),
        ("code", {}, "params.data.code"),
        ("code", {"code": "x", "language": "x" * 65}, "params.data.language"),
        ("image", {}, "params.data.url"),
        ("image", {"url": "javascript:alert(1)"}, "params.data.url"),
        ("image", {"url": "/x.png", "width": 0}, "params.data.width"),
        ("image", {"url": "/x.png", "height": "400"}, "params.data.height"),
        ("image", {"url": "/x.png", "alt": 5}, "params.data.alt"),
        ("alert", {}, "params.data.message"),
        ("alert", {"message": "m", "severity": "critical"}, "params.data.severity"),
        ("alert", {"message": "m", "dismissible": 1}, "params.data.dismissible"),
        ("steps", {}, "params.data.steps"),
        ("steps", {"steps": [{"label": "a"}]}, "params.data.steps[0].status"),
        ("steps", {"steps": [{"label": "a", "status": "done"}]}, "params.data.steps[0].status"),
        ("steps", {"steps": [{"status": "active"}]}, "params.data.steps[0].label"),
        (
            "steps",
            {"steps": [{"label": "a", "status": "active"}], "current_step": 1},
            "params.data.current_step",
        ),
        (
            "steps",
            {"steps": [{"label": "a", "status": "active"}], "current_step": -1},
            "params.data.current_step",
        ),
    ],
)
def test_shape_errors(component_type, data, path):
    invalid(component_type, data, path)


@pytest.mark.parametrize(
    "kind", ["text", "number", "select", "date", "textarea", "checkbox", "email"]
)
def test_form_field_types(kind):
    field = {"name": "f", "type": kind, "label": "L"}
    if kind == "select":
        field["options"] = ["a"]
    assert validate_component("form", {"fields": [field]})["fields"][0]["type"] == kind


@pytest.mark.parametrize("status", ["pending", "active", "completed", "error"])
def test_step_statuses(status):
    validate_component("steps", {"steps": [{"label": "x", "status": status}], "current_step": 0})


def test_table_keys_stay_consistent_after_sanitizing():
    data = {"headers": [{"key": "a&b", "label": "A"}], "rows": [{"a&b": "1 & 2"}]}
    cleaned = validate_component("table", data)
    key = cleaned["headers"][0]["key"]
    assert key in cleaned["rows"][0]
    assert cleaned["rows"][0][key] == "1 &amp; 2"


def test_path_argument_used():
    with pytest.raises(DomainError) as info:
        validate_component("markdown", {}, "x.y")
    assert info.value.data["path"] == "x.y.content"
