"""Seed-000 components and requests as v0.9 basic-catalog surfaces (a2ui.v09.translate, .view).

Every message must pass the project's strict validator and the official @a2ui/web_core; a
view that follows events after a stale snapshot shows what a fresh snapshot shows.
"""

import random

import pytest

from a2ui.core import state as S
from a2ui.core.content import methods
from a2ui.core.content.components import COMPONENT_TYPES, validate_component
from a2ui.core.events import Kind
from a2ui.core.surfaces import BASIC_CATALOG_ID
from a2ui.core.surfaces import translate as T
from a2ui.v09.view import SessionView
from tests.sessionops import Ops, all_events
from tests.v09.v09_views import EMPTY, SAMPLES, ClientModel, webcore


def rendered(cid, kind, data):
    return (Kind.COMPONENT_RENDERED, {"component_id": cid, "component_type": kind,
                                      "data": validate_component(kind, data), "metadata": {}})


def opened(method, params):
    return methods.to_event(method, methods.validate_params(method, params))


def test_samples_cover_every_component_type():
    assert set(SAMPLES) == set(COMPONENT_TYPES) == set(T.BUILDERS)


@pytest.mark.parametrize("kind", sorted(SAMPLES))
def test_each_type_is_a_strictly_valid_basic_surface(kind):
    view, client = SessionView(), ClientModel()
    client.receive(view.event(*rendered("x", kind, SAMPLES[kind])))
    [(sid, shown)] = client.shown().items()
    assert sid == "a2ui-component-x"
    assert shown[0]["createSurface"]["catalogId"] == BASIC_CATALOG_ID


def texts(shown):
    return " ".join(c.get("text", "") for m in shown if "updateComponents" in m
                    for c in m["updateComponents"]["components"])


def components_of(messages):
    return [c for m in messages if "updateComponents" in m
            for c in m["updateComponents"]["components"]]


def test_the_data_a_person_needs_is_there():
    def shown(kind, data=None):
        return T.component_messages("x", kind, validate_component(kind, data or SAMPLES[kind]))[0]

    card = shown("card")
    assert "Order #12" in texts(card) and "12.5" in texts(card)
    assert "Shipped \\*today\\*" in texts(card)  # plain text, not markdown
    [button] = [c for c in components_of(card) if c["component"] == "Button"]
    assert button["action"] == {"functionCall": {"call": "openUrl",
                                                 "args": {"url": "https://example.com/t"}}}
    table = texts(shown("table"))
    assert all(v in table for v in ("Name", "Age", "Ada", "36", "Alan", "41", "x\\|y"))
    chart = texts(shown("chart"))
    assert all(v in chart for v in ("Month", "Jan", "Mar", "2025", "2026", "3", "EUR"))
    form = shown("form")
    kinds = {c["component"] for c in components_of(form)}
    assert {"TextField", "ChoicePicker", "DateTimeInput", "CheckBox", "Button"} <= kinds
    [model] = [m["updateDataModel"]["value"] for m in form if "updateDataModel" in m]
    assert model == {"name": "", "mail": "", "age": "", "bio": "", "plan": ["pro"], "day": "",
                     "a/b": False}
    [submit] = [c for c in components_of(form) if c["component"] == "Button"]
    assert submit["action"]["event"]["name"] == "submit"
    assert submit["action"]["event"]["context"]["a/b"] == {"path": "/a~1b"}
    code = texts(shown("code"))
    assert code.startswith("Snippet") and "````python\nx = '```'\nprint(x)\n````" in code
    [image] = [c for c in components_of(shown("image")) if c["component"] == "Image"]
    assert image["url"] == "https://example.com/a.png" and image["description"] == "A cat"
    alert = components_of(shown("alert"))
    assert [c["name"] for c in alert if c["component"] == "Icon"] == ["warning"]
    assert alert[-1]["component"] == "Card"
    steps = components_of(shown("steps"))
    assert [c["name"] for c in steps if c["component"] == "Icon"] == [
        "check", "arrowForward", "moreHoriz", "error"]
    assert "**Test**" in texts(steps and shown("steps"))  # the current step stands out
    assert texts(shown("markdown")) == "# Title\n\n*text* and `code`"


@pytest.mark.parametrize("kind", sorted(EMPTY))
def test_sparse_data_is_still_valid(kind):
    ctype, data = ("card", EMPTY[kind]) if kind == "content" else (kind, EMPTY[kind])
    client = ClientModel()
    client.receive(SessionView().event(*rendered("x", ctype, data)))
    if kind == "content":
        assert "from content" in texts(client.shown()["a2ui-component-x"])


def request_events():
    return [
        opened("ui.request_input", {"request_id": "r1", "input_type": "text",
                                    "prompt": "Name?", "validation": {"required": True}}),
        opened("ui.request_input", {"request_id": "r2", "input_type": "select",
                                    "prompt": "Plan?", "options": ["a", "b"]}),
        opened("ui.request_input", {"request_id": "r3", "input_type": "number",
                                    "prompt": "Age?"}),
        opened("ui.request_input", {"request_id": "r4", "input_type": "date", "prompt": "Day?"}),
        opened("ui.request_input", {"request_id": "r5", "input_type": "file", "prompt": "File?"}),
        opened("ui.confirm", {"request_id": "r6", "title": "Delete?", "description": "All of it",
                              "severity": "critical"}),
    ]


def test_requests_are_surfaces_with_answering_buttons():
    view, client = SessionView(), ClientModel()
    for kind, data in request_events():
        client.receive(view.event(kind, data))
    shown = client.shown()
    assert sorted(shown) == [f"a2ui-request-r{i}" for i in range(1, 7)]
    buttons = {sid: [c["action"]["event"] for c in components_of(m) if c["component"] ==
                     "Button"] for sid, m in shown.items()}
    assert buttons["a2ui-request-r1"] == [{"name": "respond",
                                          "context": {"value": {"path": "/value"}}}]
    assert [b["name"] for b in buttons["a2ui-request-r6"]] == ["approve", "reject"]
    client.receive(view.event(Kind.REQUEST_CLOSED, {"request_id": "r6", "status": "answered"}))
    assert "a2ui-request-r6" not in client.shown()
    assert view.event(Kind.REQUEST_CLOSED, {"request_id": "r6", "status": "answered"}) == []


def action(sid, name, context=None):
    return {"name": name, "surfaceId": sid, "sourceComponentId": "c1",
            "timestamp": "2026-01-01T00:00:00Z", "context": context or {}}


def test_actions_on_translated_surfaces_read_as_answers():
    assert T.answer_of(action("a2ui-request-r1", "respond", {"value": "Ada"})) == (
        "input", "r1", "Ada")
    assert T.answer_of(action("a2ui-request-r2", "respond", {"value": ["b"]}), "select") == (
        "input", "r2", "b")
    assert T.answer_of(action("a2ui-request-r6", "reject")) == (
        "confirm", "r6", {"approved": False, "reason": ""})
    assert T.answer_of(action("a2ui-request-r6", "approve"))[2]["approved"] is True
    assert T.answer_of(action("a2ui-component-f", "submit", {"n": 1})) == ("form", "f", {"n": 1})
    assert T.answer_of(action("a2ui-component-f", "delete"))[0] == "refused"
    assert T.answer_of(action("a2ui-request-r1", "respond"))[0] == "refused"
    assert T.answer_of(action("s1", "book")) is None


def test_update_and_remove():
    view, client = SessionView(), ClientModel()
    client.receive(view.event(*rendered("t", "table", SAMPLES["table"])))
    update = (Kind.COMPONENT_UPDATED, {"component_id": "t", "operation": "append",
                                       "data": {"rows": [{"name": "Grace", "age": 85}]}})
    messages = view.event(*update)
    assert [next(k for k in m if k != "version") for m in messages] == ["updateComponents"]
    client.receive(messages)
    assert "Grace" in texts(client.shown()["a2ui-component-t"])
    client.receive(view.event(Kind.COMPONENT_REMOVED, {"component_id": "t"}))
    assert client.shown() == {}
    # an update the view cannot apply asks for a resync
    view.event(*rendered("t", "table", SAMPLES["table"]))
    assert view.event(Kind.COMPONENT_UPDATED, {"component_id": "t", "operation": "append",
                                               "data": {"nope": [1]}}) is None


def test_a_client_without_the_basic_catalog_is_shown_none():
    view = SessionView(["https://example.com/other.json"])
    assert view.event(*rendered("x", "card", SAMPLES["card"])) == []
    assert view.reset([{"component_id": "x", "component_type": "card",
                        "data": {"title": "t"}}], []) == []


def test_web_core_accepts_every_form():
    view, client = SessionView(), ClientModel()
    for kind in sorted(SAMPLES):
        client.receive(view.event(*rendered(f"{kind}1", kind, SAMPLES[kind])))
    for kind, data in request_events():
        client.receive(view.event(kind, data))
    client.receive(view.event(Kind.COMPONENT_UPDATED, {
        "component_id": "table1", "operation": "append", "data": {"rows": [{"name": "Grace", "age": 85}]}}))
    client.receive(view.event(Kind.COMPONENT_REMOVED, {"component_id": "card1"}))
    client.receive(view.reset([], []))  # deletes everything
    result = webcore(client.batches)
    assert result == {"ok": True, "surfaces": {}}, result
    # and what is shown at the end of the renders, component by component
    result = webcore(client.batches[:len(SAMPLES) + 6])
    assert result["ok"], result
    assert len(result["surfaces"]) == len(SAMPLES) + 6
    assert all("root" in ids for ids in result["surfaces"].values())


def test_web_core_refuses_a_broken_message():
    """The check can fail: web_core refuses a property the catalog does not have."""
    bad, _ = T.component_messages("x", "markdown", {"content": "x"})
    root = bad[1]["updateComponents"]["components"][0]
    root["body"] = root.pop("text")
    assert webcore([bad])["ok"] is False


def fold_view(view, client, events):
    for kind, data in events:
        messages = view.event(kind, data)
        assert messages is not None
        client.receive(messages)


@pytest.mark.parametrize("seed", range(25))
def test_stale_snapshot_plus_events_is_a_fresh_snapshot(seed):
    """Random seed-000 sequences: a view started from a snapshot taken at a random point and fed
    the events after it shows exactly what a view started from the final snapshot shows."""
    ops = Ops(seed).many(30)
    events = all_events(ops)
    cut = random.Random(seed).randrange(len(events) + 1)
    before = S.snapshot(S.fold(S.SessionState(), events[:cut]))
    after = S.snapshot(S.fold(S.SessionState(), events))
    stale, stale_client = SessionView(), ClientModel()
    stale_client.receive(stale.reset(before["components"], before["requests"]))
    fold_view(stale, stale_client, events[cut:])
    fresh, fresh_client = SessionView(), ClientModel()
    fresh_client.receive(fresh.reset(after["components"], after["requests"]))
    assert stale_client.shown() == fresh_client.shown()
    assert set(stale.sent) == set(fresh.sent)
    # a resync of the stale client (deletes, then the snapshot) lands on the same
    stale_client.receive(stale.reset(after["components"], after["requests"]))
    assert stale_client.shown() == fresh_client.shown()
    if seed < 3:
        assert webcore(stale_client.batches)["ok"]
