"""Sans-I/O: an MCP surface resource (``a2ui://sessions/<id>/surfaces/<surfaceId>``, keyed by
the surface id) when its surface is deleted and created again (A2UI v0.9.1: ids are unique
among active surfaces only). Its subscribers are told it changed, and the resource list
changed, at the deletion and at the creation: a host re-reads it and gets the new surface
(or not found between the two), never an update to apply to the deleted one."""

import uuid

from a2ui.core import events
from a2ui.core.surfaces import BASIC_CATALOG_ID, MIME_TYPE
from a2ui.mcp import changes, uris

SID = uuid.UUID("12345678-1234-5678-1234-56781234abcd")
V = "v0.9"


def batch(*messages):
    return events.to_message(events.Kind.SURFACE_BATCH, {"first_seq": 1,
                                                         "messages": list(messages)})


def create(sid):
    return {"version": V, "createSurface": {"surfaceId": sid, "catalogId": BASIC_CATALOG_ID}}


def delete(sid):
    return {"version": V, "deleteSurface": {"surfaceId": sid}}


def test_a_surface_created_again_is_announced_like_a_new_one():
    uri = uris.build("surfaces", SID, "s1")
    assert uris.parse(uri).mime_type == MIME_TYPE
    subscribed = {uri, uris.build("surfaces", SID, "other")}
    for event in (batch(delete("s1")), batch(create("s1")), batch(delete("s1"), create("s1"))):
        assert changes.notices(SID, event, subscribed) == ([uri], True)
    update = {"version": V, "updateDataModel": {"surfaceId": "s1", "value": 1}}
    assert changes.notices(SID, batch(update), subscribed) == ([uri], False)
