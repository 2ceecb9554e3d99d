"""a2ui.core.replay: the person's screen at each moment, folded from the session's events.

Pure tests (no database); tests/compliance/test_replay_service.py holds the kept events of a
session driven through the services to the database snapshot, and tests/browser/test_replay.py
the admin's replay frame to the live client's DOM.
"""

from a2ui.core import replay as R
from a2ui.core import state as S
from a2ui.core.events import Kind
from a2ui.core.surfaces.catalog import BASIC_CATALOG_ID
from a2ui.jsonrpc.replay import messages

V = "v0.9"
CARD = (Kind.COMPONENT_RENDERED, {"component_id": "c1", "component_type": "card",
                                  "data": {"title": "Order"}})
TABLE = (Kind.COMPONENT_RENDERED, {"component_id": "t", "component_type": "table",
                                   "data": {"headers": [{"key": "n", "label": "N"}],
                                            "rows": [{"n": 1}]},
                                   "metadata": {"region": "sidebar"}})
CONFIRM = (Kind.REQUEST_OPENED, {"kind": "confirm", "params": {
    "request_id": "r1", "title": "Buy?", "message": "Pay 10 EUR", "timeout_seconds": 60}})
CLOSED = (Kind.REQUEST_CLOSED, {"request_id": "r1", "status": "answered"})
SURFACE = (Kind.SURFACE_BATCH, {"first_seq": 1, "messages": [
    {"version": V, "createSurface": {"surfaceId": "s1", "catalogId": BASIC_CATALOG_ID}},
    {"version": V, "updateComponents": {"surfaceId": "s1", "components": [
        {"id": "root", "component": "Text", "text": {"path": "/name"}}]}},
    {"version": V, "updateDataModel": {"surfaceId": "s1", "path": "/name", "value": "Ada"}},
]})
RENAME = (Kind.SURFACE_BATCH, {"first_seq": 4, "messages": [
    {"version": V, "updateDataModel": {"surfaceId": "s1", "path": "/name", "value": "Bo"}}]})
UPDATE = (Kind.COMPONENT_UPDATED, {"component_id": "t", "operation": "append",
                                   "data": {"rows": [{"n": 2}]}})
MESSAGE = (Kind.MESSAGE, {"message_id": "m1", "role": "agent", "sender": "bot",
                          "content": "Hello"})
ASKED = (R.CONSENT_REQUIRED, {"consent_types": [
    {"type": "data_collection", "description": "We keep your answers."},
    {"type": "marketing", "description": "News."}]})
GRANTED = (R.CONSENT_RECORDED, {"consent_type": "data_collection", "granted": True})
EVENTS = [ASKED, GRANTED, CARD, TABLE, UPDATE, MESSAGE, SURFACE, CONFIRM, RENAME, CLOSED]


def methods(screen):
    return [m["method"] for m in messages(screen)]


def test_moment_zero_is_the_empty_screen():
    screen = R.replay(EVENTS, 0)
    assert screen.consent == () and not screen.state.components
    assert methods(screen) == []


def test_each_moment_is_the_fold_of_the_events_before_it():
    for n in range(len(EVENTS) + 1):
        screen = R.replay(EVENTS, n)
        expected = S.fold(S.SessionState(), [e for e in EVENTS[:n]
                                             if e[0] not in (R.CONSENT_REQUIRED,
                                                             R.CONSENT_RECORDED)])
        assert S.comparable(S.snapshot(screen.state)) == S.comparable(S.snapshot(expected))


def test_the_open_request_is_on_the_screen_until_it_closes():
    before_answer = R.replay(EVENTS, EVENTS.index(CLOSED))
    params = [m["params"] for m in messages(before_answer) if m["method"] == "ui.confirm"]
    assert params == [CONFIRM[1]["params"]]
    assert "ui.confirm" not in methods(R.replay(EVENTS, len(EVENTS)))


def test_components_keep_their_data_as_it_stood():
    rows = [c["data"]["rows"] for c in S.snapshot(R.replay(EVENTS, 4).state)["components"]
            if c["component_id"] == "t"]
    assert rows == [[{"n": 1}]]
    rows = [c["data"]["rows"] for c in S.snapshot(R.replay(EVENTS, 5).state)["components"]
            if c["component_id"] == "t"]
    assert rows == [[{"n": 1}, {"n": 2}]]
    render = [m["params"] for m in messages(R.replay(EVENTS, 5)) if m["params"].get(
        "component_id") == "t"]
    assert render[0]["metadata"] == {"region": "sidebar"}


def test_a_surface_shows_its_data_model_as_it_stood():
    def name(n):
        v09 = [m for m in messages(R.replay(EVENTS, n)) if m["method"] == "a2ui.v09"]
        if not v09:
            return None
        assert v09[0]["params"]["snapshot"] is True
        return [m["updateDataModel"]["value"] for m in v09[0]["params"]["messages"]
                if "updateDataModel" in m]
    assert name(EVENTS.index(SURFACE)) is None  # no surface yet: no v0.9 message
    assert name(EVENTS.index(SURFACE) + 1) == [{"name": "Ada"}]
    assert name(EVENTS.index(RENAME) + 1) == [{"name": "Bo"}]


def test_the_consent_prompt_shows_what_is_still_asked():
    asked = R.replay(EVENTS, 1)
    prompt = [m["params"] for m in messages(asked) if m["method"] == "a2ui.consent_required"]
    assert [c["type"] for c in prompt[0]["consent_types"]] == ["data_collection", "marketing"]
    after = R.replay(EVENTS, 2)
    assert [c["type"] for c in after.consent] == ["marketing"]
    done = R.apply(after, R.CONSENT_RECORDED, {"consent_type": "marketing", "granted": False})
    assert done.consent == () and "a2ui.consent_required" not in methods(done)


def test_the_activity_is_sent_whole():
    activity = [m["params"] for m in messages(R.replay(EVENTS, 6)) if m["method"] ==
                "ui.activity"]
    assert activity[0]["kind"] == "snapshot"
    assert [m["content"] for m in activity[0]["data"]["transcript"]] == ["Hello"]


def test_replay_leaves_the_events_and_earlier_screens_unchanged():
    early = R.replay(EVENTS, EVENTS.index(SURFACE) + 1)
    before = S.comparable(S.snapshot(early.state))
    R.apply(early, *RENAME)
    assert S.comparable(S.snapshot(early.state)) == before


def test_moments_label_every_event():
    moments = R.moments(EVENTS)
    assert [m["index"] for m in moments] == list(range(len(EVENTS) + 1))
    assert moments[0]["kind"] == "start"
    assert moments[EVENTS.index(CONFIRM) + 1]["label"] == "asked (confirm): r1"
    assert moments[2]["label"] == "consent granted: data_collection"


def test_unknown_and_transient_kinds_change_nothing():
    screen = R.replay([CARD], 1)
    assert R.apply(screen, Kind.NOTIFY, {"title": "x"}).state is screen.state
    assert R.apply(screen, "future.kind", {}).state is screen.state
