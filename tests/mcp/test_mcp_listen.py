"""``subscriptions/listen`` (2026-07-28): the sans-I/O filter plan, the event mapping a stream
uses, and the capabilities /mcp advertises on each revision."""

import uuid

import pytest

from a2ui.core import events
from a2ui.mcp import changes, filters, uris

SID = uuid.UUID("12345678-1234-5678-1234-56781234abcd")
CARD = uris.build("components", SID, "c1")
APP = uris.build("apps", SID, "c1")


def test_plan_dedupes_keeps_indexes_and_honours_only_resources():
    plan = filters.plan(True, [CARD, "nope", CARD, APP])
    assert [(i, u) for i, u, _ in plan.uris] == [(0, CARD), (1, "nope"), (3, APP)]
    assert plan.uris[1][2] is None and plan.uris[0][2] == uris.parse(CARD)
    assert plan.honored() == {"resourcesListChanged": True, "resourceSubscriptions": [CARD,
                                                                                   "nope", APP]}
    assert plan.sessions() == {SID} and plan.subscribed() == {CARD, "nope", APP}
    empty = filters.plan(None, None)
    assert empty.honored() == {} and not empty.want_list and empty.sessions() == set()
    assert filters.plan(1, []).want_list is False  # only a JSON true asks


def test_plan_limits_and_refusals_are_invalid_params_with_a_path():
    with pytest.raises(filters.Invalid) as many:
        filters.plan(False, [CARD] * (filters.MAX_URIS + 1))
    assert many.value.code == -32602
    assert many.value.data["path"] == "notifications.resourceSubscriptions"
    refused = filters.refused(7)
    assert refused.code == -32602
    assert refused.data == {"path": "notifications.resourceSubscriptions[7]",
                            "reason": "is not a resource of yours"}
    assert "[7]" in refused.message


def test_notices_only_for_subscribed_uris():
    rendered = events.to_message(events.Kind.COMPONENT_RENDERED, {"component_id": "c1"})
    updated = events.to_message(events.Kind.COMPONENT_UPDATED, {"component_id": "c1"})
    assert changes.notices(SID, rendered, {CARD, APP}) == ([CARD, APP], True)
    assert changes.notices(SID, updated, {CARD}) == ([CARD], False)
    assert changes.notices(SID, updated, set()) == ([], False)
    other = uuid.uuid4()
    assert changes.notices(other, updated, {CARD}) == ([], False)  # another session's c1
    batch = events.to_message(events.Kind.SURFACE_BATCH, {"messages": [
        {"version": "v0.9", "createSurface": {"surfaceId": "s/1", "catalogId": "x"}}]})
    surface = uris.build("surfaces", SID, "s/1")
    assert changes.notices(SID, batch, {surface}) == ([surface], True)
    assert changes.notices(SID, {"type": "a2ui.close"}, {CARD}) == ([], False)


@pytest.mark.parametrize("event, expected", [
    ({"type": "a2ui.agent_event", "method": "session.opened",
      "params": {"session_id": str(SID)}}, ("opened", str(SID))),
    ({"type": "a2ui.agent_event", "method": "session.resumed",
      "params": {"session_id": str(SID)}}, ("opened", str(SID))),
    ({"type": "a2ui.agent_event", "method": "session.closed",
      "params": {"session_id": str(SID), "state": "closed"}}, ("closed", str(SID))),
    ({"type": "a2ui.agent_event", "method": "user.respond",
      "params": {"session_id": str(SID)}}, None),
    ({"type": "a2ui.agent_event", "method": "session.opened", "params": {"session_id": 5}},
     None),
    ({"type": "a2ui.agent_event", "method": "session.opened", "params": None}, None),
    ({"type": "a2ui.close", "code": 4001}, None),
    (None, None),
])
def test_session_notices(event, expected):
    assert changes.session_notice(event) == expected


@pytest.mark.parametrize("version, subscribe", [("2025-11-25", True), ("2026-07-28", True),
                                                (None, True)])
def test_capabilities_are_truthful_on_each_revision(settings, version, subscribe):
    from a2ui.mcp.server import build_server

    server = build_server()
    caps = server.get_capabilities(protocol_version=version)
    assert caps.resources.subscribe is subscribe and caps.resources.list_changed is True
    assert caps.tools.list_changed is False  # the tool list never changes
    assert caps.prompts is None
    init = server.create_initialization_options().capabilities
    assert init.resources.subscribe and init.resources.list_changed
    assert init.tools.list_changed is False


def test_event_ids_and_replay_selection():
    from a2ui.mcp import eventstore as es

    key = es.stream_key("2")
    assert es.stream_key("2") == key != es.stream_key("_GET_stream") and len(key) == 32
    assert es.parse_event_id(es.event_id(12, key)) == (12, key)
    for bad in (None, "", "0-" + key, "1-" + key[:-1], "1-" + key + "x", "9" * 19 + "-" + key,
                "\ud800", "1\x00-" + key):
        assert es.parse_event_id(bad) is None
    stored = [es.entry(1, "2", None), es.entry(3, "2", '{"a":1}'), es.entry(4, "2", None),
              es.entry(7, "2", '{"b":2}')]
    assert es.after(stored, 1) == ("2", [(3, '{"a":1}'), (7, '{"b":2}')])
    assert es.after(stored, 7) == ("2", [])
    assert es.after(stored, 2) is None  # not stored (lost, trimmed, never written): detected
    assert es.after([], 1) is None
