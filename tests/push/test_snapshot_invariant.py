"""The snapshot invariant against the real services (issue 11, "Pure reducers and the invariant").

A session is driven through the services (``pushentry.apush``, ``answers.aanswer`` /
``answers.areap``, ``a2ui.v09`` pushes) on the test database; ``sessions.snapshot()`` is taken at
some point, every message the services send to the session's group after it is recorded, and
those events folded into the snapshot by the pure reducer (``a2ui.core.state``) must give a
fresh ``sessions.snapshot()`` (up to time: ``state.comparable``).

The recorder reads the channel layer itself (``group_send``), so it sees every ``a2ui.event``
message (``a2ui.core.events.to_message``) the services send to the session group, whichever
service sends it. (No socket is open, so nothing goes by direct delivery.)
"""

import random

import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.utils import timezone

from a2ui import surfaces as surface_service
from a2ui.core import state as S
from a2ui.core.errors import DomainError
from a2ui.core.events import MESSAGE_TYPE, Kind
from a2ui.infra import groups
from a2ui.models import PendingRequest, RenderedComponent
from a2ui.push import answers, sweep
from a2ui.push import entry as pushentry
from a2ui.push import sessions as session_actions
from a2ui.sessions import lifecycle as sessions
from tests.sessionops import Ops, all_events, surface_create
from tests.wsutil import publishes_through_send_group

pytestmark = pytest.mark.django_db(transaction=True)

V = "v0.9"


def as_events(message):
    """The session event one channel-layer message of a session group carries, if any."""
    if message["type"] == MESSAGE_TYPE and "kind" in message:
        return [(message["kind"], message["data"])]
    return []  # resync and close orders: not session events


class Recorder:
    """Every message sent to one session group while ``on``."""

    def __init__(self, monkeypatch, session_id):
        self.group = groups.session_group(session_id)
        self.messages = []
        self.on = False
        layer = get_channel_layer()
        real = layer.group_send

        async def group_send(group, message):
            if self.on and group == self.group:
                self.messages.append(message)
            await real(group, message)

        monkeypatch.setattr(layer, "group_send", group_send)
        publishes_through_send_group(monkeypatch)

    def start(self):
        self.messages, self.on = [], True

    def events(self):
        return [event for message in self.messages for event in as_events(message)]




async def run(session, op):
    sid, agent_id = session.session_id, session.agent_id
    if op[0] == "push":
        _, params = pushentry.validate(op[1], {**op[2], "session_id": str(sid)})
        await pushentry.apush(agent_id, sid, op[1], params)
    elif op[0] == "answer":
        await answers.aanswer(sid, op[1], op[2], op[3])
    elif op[0] == "surfaces":
        await pushentry.apush(agent_id, sid, "a2ui.v09", {"messages": op[1]})
    elif op[0] == "expire":  # the request's deadline passes and the sweep times it out
        await database_sync_to_async(PendingRequest.objects.filter(
            session_id=sid, request_id=op[1]).update)(deadline=timezone.now())
        await sweep.sweep()
    elif op[0] == "refused":  # an operation the services refuse (and say why)
        with pytest.raises(DomainError):
            await run(session, op[1])
    elif op[0] == "close":
        await session_actions.aclose_session(sid, reason="done")
    elif op[0] == "ttl":  # the component's ttl_seconds run out; the sweep runs
        await database_sync_to_async(RenderedComponent.objects.filter(
            session_id=sid, component_id=op[1]).update)(expires_at=timezone.now())
        await sweep.sweep()
    else:
        raise AssertionError(op)


async def check(monkeypatch, session, before, after):
    """Run ``before``, snapshot, run ``after``: the snapshot plus the events is a fresh one."""
    recorder = Recorder(monkeypatch, session.session_id)
    for op in before:
        await run(session, op)
    snap = await sessions.asnapshot(session.session_id)
    recorder.start()
    for op in after:
        await run(session, op)
    fresh = await sessions.asnapshot(session.session_id)
    events = recorder.events()
    folded = S.fold(S.from_snapshot(snap, surface_service.catalog_registry()), events)
    assert S.comparable(S.snapshot(folded)) == S.comparable(fresh), events
    return events, fresh


def push(method, **params):
    return ("push", method, params)


def render(cid, kind="card", data=None, **extra):
    return push("ui.render", component_id=cid, component_type=kind,
                data=data or {"title": f"<b>{cid}</b>"}, **extra)


TABLE = {"headers": [{"key": "n", "label": "N"}], "rows": [{"n": 1}]}
ASK = push("ui.request_input", request_id="r1", input_type="text", prompt="Name?")
CONFIRM = push("ui.confirm", request_id="r2", title="Go?", timeout_seconds=60)
TEXT = {"version": V, "updateComponents": {"surfaceId": "s1", "components": [
    {"id": "title", "component": "Text", "text": "<b>New</b> title"}]}}
SCENARIOS = {
    "component.rendered": ([render("c1"), render("c2", metadata={"priority": "high"})],
                           [render("c3"), render("c1", "table", TABLE), render("c2")]),
    "component.updated": ([render("t", "table", TABLE), render("c")], [
        push("ui.update", component_id="t", operation="append", data={"rows": [{"n": 2}]}),
        push("ui.update", component_id="t", operation="merge", data={"caption": "<i>x</i>"}),
        push("ui.update", component_id="c", operation="merge", data={"description": "d"}),
        push("ui.update", component_id="t", operation="replace", data=TABLE)]),
    "request.opened": ([render("c")], [ASK, CONFIRM]),
    "request.closed answered": ([ASK, CONFIRM], [
        ("answer", "r1", "input", "Ada"),
        ("answer", "r2", "confirm", {"approved": False, "reason": "no"})]),
    "request.closed timed_out": ([ASK, CONFIRM], [("expire", "r2")]),
    "transient": ([render("c")], [
        push("ui.progress", task_id="t", progress_type="determinate", value=1, total=3),
        push("ui.notify", title="Saved", level="info"), push("ui.navigate", url="https://example.com/", new_tab=False)]),
    "surface.batch": ([("surfaces", surface_create("s1", 1))], [
        ("surfaces", [{"version": V, "updateDataModel": {"surfaceId": "s1", "path": "/name",
                                                         "value": "Ada"}}, TEXT]),
        ("surfaces", surface_create("s2", 2)),
        ("surfaces", [{"version": V, "deleteSurface": {"surfaceId": "s1"}}])]),
    # v0.9.1: an id is free once its surface is deleted (in the same batch or a later one)
    "surface.batch created again": ([("surfaces", surface_create("s1", 1) + surface_create(
        "s2", 2))], [
        ("surfaces", [{"version": V, "deleteSurface": {"surfaceId": "s1"}},
                      *surface_create("s1", 3)]),
        ("surfaces", [{"version": V, "deleteSurface": {"surfaceId": "s2"}}]),
        ("surfaces", surface_create("s2", 4))]),
}
EXPECTED_KINDS = {
    "component.rendered": {Kind.COMPONENT_RENDERED}, "component.updated": {Kind.COMPONENT_UPDATED},
    "request.opened": {Kind.REQUEST_OPENED}, "request.closed answered": {Kind.REQUEST_CLOSED},
    "request.closed timed_out": {Kind.REQUEST_CLOSED},
    "transient": {Kind.PROGRESS, Kind.NOTIFY, Kind.NAVIGATE},
    "surface.batch": {Kind.SURFACE_BATCH},
    "surface.batch created again": {Kind.SURFACE_BATCH},
}


async def test_a_refused_request_prompts_for_consent_and_keeps_the_invariant(monkeypatch,
                                                                             session):
    """consent.required (transient) is emitted; the refused request opens nothing."""
    from django.conf import settings
    from django.test import override_settings

    with override_settings(A2UI={**settings.A2UI, "REQUIRED_CONSENTS": ["data_collection"]}):
        events, fresh = await check(monkeypatch, session, [render("c")], [("refused", ASK)])
    assert [kind for kind, _ in events] == [Kind.CONSENT_REQUIRED] and fresh.requests == []


@pytest.mark.parametrize("name", list(SCENARIOS))
async def test_each_event_kind_keeps_the_invariant(monkeypatch, session, name):
    before, after = SCENARIOS[name]
    events, fresh = await check(monkeypatch, session, before, after)
    assert {kind for kind, _ in events} == EXPECTED_KINDS[name]  # the change was emitted


async def test_the_check_notices_a_change_that_emits_nothing(monkeypatch, session):
    """A row changed behind the services' back is caught (the check can fail)."""
    recorder = Recorder(monkeypatch, session.session_id)
    await run(session, render("c1"))
    snap = await sessions.asnapshot(session.session_id)
    recorder.start()
    await database_sync_to_async(RenderedComponent.objects.filter(
        session_id=session.session_id).update)(data={"title": "changed silently"})
    fresh = await sessions.asnapshot(session.session_id)
    folded = S.fold(S.from_snapshot(snap), recorder.events())
    assert recorder.events() == []
    assert S.comparable(S.snapshot(folded)) != S.comparable(fresh)


async def test_an_expired_component_is_removed_by_an_event(monkeypatch, session):
    events, fresh = await check(monkeypatch, session, [
        render("c1", metadata={"ttl_seconds": 60}), render("c2")], [("ttl", "c1")])
    assert events == [(Kind.COMPONENT_REMOVED, {"component_id": "c1"})]
    assert [c["component_id"] for c in fresh.components] == ["c2"]


async def test_closing_a_session_closes_its_requests_by_an_event(monkeypatch, session):
    events, fresh = await check(monkeypatch, session, [render("c1"), ASK, CONFIRM],
                                [("close",)])
    assert sorted((kind, data["request_id"], data["status"]) for kind, data in events) == [
        (Kind.REQUEST_CLOSED, "r1", "cancelled"), (Kind.REQUEST_CLOSED, "r2", "cancelled")]
    assert fresh.requests == []


@pytest.mark.parametrize("seed", range(6))
async def test_random_sequences_keep_the_invariant(monkeypatch, session, seed):
    ops = Ops(seed).many(24)
    cut = random.Random(seed).randrange(len(ops) + 1)
    events, _ = await check(monkeypatch, session, ops[:cut], ops[cut:])
    # Each operation emitted the one event the protocol modules predict for it, in order.
    assert [kind for kind, _ in events] == [kind for kind, _ in all_events(ops)][cut:]


async def test_a_snapshot_after_everything_plus_nothing_is_itself(monkeypatch, session):
    ops = Ops(99).many(12)
    events, fresh = await check(monkeypatch, session, ops, [])
    assert events == [] and S.comparable(S.snapshot(S.from_snapshot(fresh))) == \
        S.comparable(fresh)

