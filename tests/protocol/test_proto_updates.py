import pytest

from a2ui.core.content.components import validate_component
from a2ui.core.content.updates import apply_update
from a2ui.core.errors import DomainError
from a2ui.rpc.errors import ErrorCode, ProtocolError

TABLE = validate_component(
    "table",
    {"headers": [{"key": "name", "label": "Name"}], "rows": [{"name": "a"}], "note": "n"},
)
CARD = validate_component("card", {"title": "T", "description": "D", "sections": []})


def test_replace_validates_as_type():
    new = apply_update("card", CARD, "replace", {"title": "<b>New</b>"})
    assert new == {"title": "New"}
    with pytest.raises(DomainError) as info:
        apply_update("card", CARD, "replace", {"description": "no title"})
    assert info.value.data["path"] == "params.data.title"


def test_merge_is_shallow_and_null_removes():
    new = apply_update(
        "card", CARD, "merge", {"description": "<i>x</i>", "sections": [{"label": "L", "value": 1}]}
    )
    assert new == {"title": "T", "description": "x", "sections": [{"label": "L", "value": 1}]}
    assert "description" not in apply_update("card", CARD, "merge", {"description": None})
    with pytest.raises(DomainError) as info:
        apply_update("card", CARD, "merge", {"title": None})
    assert info.value.data["path"] == "params.data.title"


def test_merge_result_revalidated():
    with pytest.raises(DomainError) as info:
        apply_update("table", TABLE, "merge", {"rows": "nope"})
    assert info.value.data["path"] == "params.data.rows"


def test_append_extends_lists():
    new = apply_update("table", TABLE, "append", {"rows": [{"name": "<script>x</script>b"}]})
    assert new["rows"] == [{"name": "a"}, {"name": "b"}]
    assert TABLE["rows"] == [{"name": "a"}]  # current not mutated
    new = apply_update(
        "table", TABLE, "append", {"rows": [], "headers": [{"key": "k", "label": "K"}]}
    )
    assert [h["key"] for h in new["headers"]] == ["name", "k"]


@pytest.mark.parametrize(
    ("patch", "path"),
    [
        ({"rows": {"name": "x"}}, "params.data.rows"),
        ({"note": ["x"]}, "params.data.note"),
        ({"missing": [1]}, "params.data.missing"),
        ({"rows": ["not an object"]}, "params.data.rows[1]"),
        ({"headers": [{"key": "name", "label": "dup"}]}, "params.data.headers[1].key"),
    ],
)
def test_append_errors(patch, path):
    with pytest.raises(DomainError) as info:
        apply_update("table", TABLE, "append", patch)
    assert ProtocolError.of(info.value).code == ErrorCode.INVALID_PARAMS
    assert info.value.data["path"] == path


def test_bad_operation_and_patch():
    with pytest.raises(DomainError) as info:
        apply_update("card", CARD, "delete", {})
    assert info.value.data["path"] == "params.operation"
    with pytest.raises(DomainError) as info:
        apply_update("card", CARD, "merge", ["x"])
    assert info.value.data["path"] == "params.data"


def test_url_checked_after_merge():
    with pytest.raises(DomainError) as info:
        apply_update("image", {"url": "/a.png"}, "merge", {"url": "javascript:alert(1)"})
    assert info.value.data["path"] == "params.data.url"


def test_resanitizing_stored_data_is_stable():
    stored = validate_component("alert", {"message": "Tom & Jerry <3 &lt;b&gt;"})
    again = apply_update("alert", stored, "merge", {})
    assert again == stored
    assert again["message"] == "Tom &amp; Jerry &lt;3 &lt;b&gt;"


def test_max_size():
    rows = [{"name": "x" * 100} for _ in range(20)]
    with pytest.raises(DomainError) as info:
        apply_update("table", TABLE, "append", {"rows": rows}, max_size=1000)
    assert ProtocolError.of(info.value).code == ErrorCode.PAYLOAD_TOO_LARGE
    assert apply_update("table", TABLE, "append", {"rows": rows}, max_size=10_000)
