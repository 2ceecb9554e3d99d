"""A2UI v0.9.1 (sans-I/O): surface ids unique among active surfaces, the version we send, the
capabilities key, the media type. The official web_core checks what a client is sent."""

from __future__ import annotations

import copy

import pytest
from v09_helpers import card, column, create, data, delete, text, update
from v09_views import webcore

from a2ui.core.surfaces import (
    ACCEPTED_MIME_TYPES,
    BASIC_CATALOG_ID,
    MIME_TYPE,
    SessionSurfaces,
    ValidationFailed,
    validate_batch,
    validate_client_message,
)
from a2ui.core.surfaces.tracker import Tracker

OTHER = "https://example.com/catalogs/other.json"


def v091(message: dict) -> dict:
    return {**message, "version": "v0.9.1"}


# Surface ids: unique among active surfaces ---------------------------------------------------


def test_a_deleted_surface_is_created_again_from_nothing() -> None:
    session = SessionSurfaces()
    session.apply_batch([create(sendDataModel=True, theme={"primaryColor": "#112233"}),
                         update(card("root", "t"), text("t", "old")),
                         data(value={"typed": "secret"})])
    session.apply_batch([delete()])
    assert session.states == {}
    changes = session.apply_batch([create()])
    assert changes.created == ["s1"] and changes.replaced == [] and changes.deleted == []
    again = session.states["s1"]
    # nothing of the deleted surface: components, data model, theme, sendDataModel
    assert again.components == {} and again.data_model == {}
    assert again.theme is None and again.send_data_model is False
    assert session.snapshot_messages() == [
        create(), {"version": "v0.9", "updateDataModel": {"surfaceId": "s1", "path": "/",
                                                           "value": {}}}]


def test_created_again_in_one_batch_is_a_new_surface_listed_last() -> None:
    session = SessionSurfaces()
    session.apply_batch([create("a"), update(text("root", "A1"), sid="a"),
                         data(sid="a", value={"x": 1}), create("b")])
    changes = session.apply_batch([update(text("root", "A2"), sid="a"), delete("a"),
                                   create("a"), data("/y", sid="a", value=2)])
    assert changes.deleted == [] and changes.created == ["a"] and changes.replaced == ["a"]
    assert changes.states["a"].components == {} and changes.states["a"].data_model == {"y": 2}
    assert list(session.states) == ["b", "a"]  # creation order: a renderer shows it last
    # an id still active cannot be created again, whatever happened before
    with pytest.raises(ValidationFailed) as info:
        session.apply_batch([create("a")])
    assert info.value.path == "/createSurface/surfaceId"
    assert "already exists" in info.value.message


def test_created_lists_only_surfaces_alive_after_the_batch() -> None:
    changes = validate_batch({}, [create("a"), create("b"), delete("a"), create("c"),
                                  delete("c"), create("c"), create("a")])
    assert changes.created == ["b", "c", "a"] and changes.replaced == []
    assert list(changes.states) == ["a", "b", "c"]  # touched order; created is creation order
    gone = validate_batch({}, [create("a"), delete("a")])
    assert gone.created == [] and gone.states == {} and gone.deleted == []


# The version we send ----------------------------------------------------------------------------


def test_v0_9_1_messages_are_forwarded_as_v0_9() -> None:
    batch = [v091(create()), v091(update(column("root", "t"), text("t"))),
             v091(data(value={"a": 1}))]
    given = copy.deepcopy(batch)
    changes = validate_batch({}, batch)
    assert [m["version"] for m in changes.messages] == ["v0.9"] * 3
    assert [list(m) for m in changes.messages] == [list(m) for m in batch]  # key order kept
    assert batch == given  # the input is not changed
    assert [{**m, "version": "v0.9"} for m in batch] == changes.messages


def test_v0_9_1_client_messages_are_normalized_to_v0_9() -> None:
    action = {"name": "go", "surfaceId": "s1", "sourceComponentId": "b",
              "timestamp": "2026-01-01T00:00:00Z", "context": {}}
    assert validate_client_message({"version": "v0.9.1", "action": action}) == {
        "version": "v0.9", "action": action}
    error = {"code": "VALIDATION_FAILED", "surfaceId": "s1", "path": "/x", "message": "m"}
    assert validate_client_message({"version": "v0.9.1", "error": error}) == {
        "version": "v0.9", "error": error}
    with pytest.raises(ValidationFailed):
        validate_client_message({"version": "v0.9.2", "action": action})


# A client's view of deletions and creations (what every socket and stream sends) ---------------


def test_tracker_follows_a_surface_created_again_in_another_catalog() -> None:
    tracker = Tracker(frozenset({BASIC_CATALOG_ID}))
    first = [create(), update(text("root")), data(value={"a": 1})]
    assert tracker.accept({"seq": 1, "messages": first}) == first
    other = {"version": "v0.9", "createSurface": {"surfaceId": "s1", "catalogId": OTHER}}
    batch = [delete(), other, update(text("root"))]
    # the client gets the deletion, not the new surface of a catalog it did not declare
    assert tracker.accept({"seq": 4, "messages": batch}) == [delete()]
    assert tracker.surfaces == {}
    # and back in the basic catalog: shown again, from its createSurface on
    back = [delete(), create(), update(text("root"))]
    assert tracker.accept({"seq": 7, "messages": back}) == [create(), update(text("root"))]
    assert tracker.surfaces == {"s1": BASIC_CATALOG_ID}


def test_web_core_takes_a_surface_deleted_and_created_again() -> None:
    """What a live client is sent (deleteSurface, then createSurface with the same id) is
    what the official renderer takes; createSurface of an active id is still its error."""
    session = SessionSurfaces()
    first = session.apply_batch([create(), update(card("root", "t"), text("t", "old"))])
    second = session.apply_batch([delete(), create(), update(column("root", "n"), text("n"))])
    result = webcore([first.messages, second.messages])
    assert result == {"ok": True, "surfaces": {"s1": ["root", "n"]}}, result
    assert webcore([first.messages, [create()]])["ok"] is False


# The capabilities key and the media type --------------------------------------------------------


@pytest.mark.parametrize(("caps", "expected"), [
    ({"v0.9.1": {"supportedCatalogIds": [OTHER]}}, {OTHER}),
    ({"v0.9": {"supportedCatalogIds": [OTHER]}}, {OTHER}),
    ({"v0.9": {"supportedCatalogIds": [BASIC_CATALOG_ID]},
      "v0.9.1": {"supportedCatalogIds": [OTHER]}}, {OTHER}),  # side by side: v0.9.1's
    ({"a2uiClientCapabilities": {"v0.9.1": {"supportedCatalogIds": [OTHER]}}}, {OTHER}),
    ({"v0.9.1": {}}, {BASIC_CATALOG_ID}),
    ({"v1.0": {"supportedCatalogIds": [OTHER]}}, None),
    ({}, None),
])
def test_client_catalog_ids_read_the_v0_9_1_key(caps, expected) -> None:
    from a2ui.surfaces import client_catalog_ids, declares_a2ui

    got = client_catalog_ids(caps)
    assert (None if got is None else set(got)) == expected
    assert declares_a2ui(caps) is (expected is not None)


def test_parse_client_capabilities_checks_each_entry() -> None:
    from a2ui.surfaces import SurfaceValidationError, parse_client_capabilities

    both = {"v0.9": {"supportedCatalogIds": [BASIC_CATALOG_ID]},
            "v0.9.1": {"supportedCatalogIds": [OTHER], "inlineCatalogs": []}}
    assert parse_client_capabilities({"version": "v0.9.1", "capabilities": both}) == {
        "v0.9.1": {"supportedCatalogIds": [OTHER]},
        "v0.9": {"supportedCatalogIds": [BASIC_CATALOG_ID]}}
    for version in ({"": None}, ["v0.9"], None, "v0.9.2"):  # a fuzz find: {} is unhashable
        with pytest.raises(SurfaceValidationError) as info:
            parse_client_capabilities({"version": version, "capabilities": both})
        assert info.value.body["error"]["path"] == "/version"
    for caps, path in [({"v0.9.1": {}}, "/capabilities/v0.9.1/supportedCatalogIds"),
                       ({"v0.9.1": [OTHER]}, "/capabilities/v0.9.1"),
                       ({"v0.9.1": {"supportedCatalogIds": ["a\nb"]}},
                        "/capabilities/v0.9.1/supportedCatalogIds/0"),
                       ({"v1.0": {"supportedCatalogIds": []}}, "/capabilities")]:
        with pytest.raises(SurfaceValidationError) as info:
            parse_client_capabilities({"version": "v0.9", "capabilities": caps})
        assert info.value.body["error"]["path"] == path, caps


def test_media_type() -> None:
    assert MIME_TYPE == "application/a2ui+json"
    assert ACCEPTED_MIME_TYPES == ("application/a2ui+json", "application/json+a2ui")


def test_the_mcp_resources_are_labelled_with_the_official_type() -> None:
    from a2ui.mcp import uris

    assert uris.A2UI_MIME == MIME_TYPE
