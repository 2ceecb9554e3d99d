"""Every core event kind in both AG-UI protocols (issue 24, item 2): the seed-003 socket
(/ws/agui, ``a2ui.agui.mapping``) and an AG-UI 1.0 run (``a2ui.agui1.translate``).

Sans-I/O: each kind's translation in both (``EXAMPLES`` must name every ``Kind``); the seed-003
"stale snapshot + events == fresh snapshot" invariant over random event sequences, with a
client model that keeps what the seed's events show. In process: one test per kind pushes it
through the agent's Python API (``a2ui.agents``) with a seed-003 socket and an AG-UI 1.0 run
attached to one session, and checks what each receives.

The sessions are opened by a v0.9-declaring client first: the surface store still refuses
surfaces in a session whose opener did not declare v0.9 (``_check_catalogs``); once
capabilities are per client that opening can go.
"""

import asyncio
import json
import random

import pytest
from channels.db import database_sync_to_async
from django.utils import timezone

from a2ui import agents, tokens
from a2ui.agui import mapping
from a2ui.agui import protocol as p
from a2ui.agui1.translate import Run
from a2ui.core import state as S
from a2ui.core.content.updates import apply_update
from a2ui.core.errors import DomainError
from a2ui.core.events import Kind
from a2ui.core.surfaces import SessionSurfaces
from a2ui.models import RenderedComponent
from a2ui.push import sweep
from a2ui.sessions import admission
from tests.activityops import ACTIVITY_EXAMPLES, AGUI_EVENTS
from tests.agui.test_agui_socket import event_of, frame, open_agui
from tests.agui1 import sse
from tests.sessionops import Ops, all_events
from tests.surfaces.helpers import V09_CAPS, booking, data, delete
from tests.wsutil import send

SURFACE = booking("s1")
EXAMPLES = {  # kind -> (data, seed-003 event types, AG-UI 1.0 event types)
    Kind.COMPONENT_RENDERED: ({"component_id": "c1", "component_type": "card",
                               "data": {"title": "Hi"}}, ["RENDER_REQUEST"],
                              ["ACTIVITY_SNAPSHOT"]),
    Kind.COMPONENT_UPDATED: ({"component_id": "c0", "operation": "merge",
                              "data": {"title": "Bye"}}, ["STATE_DELTA"], ["ACTIVITY_DELTA"]),
    Kind.COMPONENT_REMOVED: ({"component_id": "c0"}, ["STATE_DELTA"], ["ACTIVITY_SNAPSHOT"]),
    Kind.REQUEST_OPENED: ({"kind": "input", "params": {"request_id": "r1", "input_type": "text",
                                                       "prompt": "Name?"}},
                          ["RENDER_REQUEST"], []),  # AG-UI 1.0: the run's interrupt
    Kind.REQUEST_CLOSED: ({"request_id": "r1", "status": "answered"}, ["STATE_DELTA"],
                          ["CUSTOM"]),
    Kind.PROGRESS: ({"task_id": "t", "progress_type": "determinate", "value": 1, "total": 4},
                    ["TOOL_CALL_STATUS"], ["STEP_STARTED", "ACTIVITY_SNAPSHOT"]),
    Kind.NAVIGATE: ({"url": "https://example.com/", "new_tab": True}, ["TEXT_MESSAGE"],
                    ["CUSTOM"]),
    Kind.NOTIFY: ({"level": "info", "title": "Saved", "message": "ok"}, ["TEXT_MESSAGE"],
                  ["TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END"]),
    Kind.SURFACE_BATCH: ({"first_seq": 1, "messages": SURFACE}, ["RENDER_REQUEST"],
                         ["ACTIVITY_SNAPSHOT"]),
    Kind.CONSENT_REQUIRED: ({"consent_types": [{"type": "data_collection"}]},
                            ["TEXT_MESSAGE"], ["CUSTOM"]),
    Kind.RUN_ENDED: ({"run_id": "r", "status": "finished", "result": {"ok": True}},
                     ["TOOL_CALL_STATUS", "TOOL_CALL_RESULT"], []),  # the stream's RUN_FINISHED
    Kind.MESSAGE: (ACTIVITY_EXAMPLES[Kind.MESSAGE][0][1], ["TEXT_MESSAGE"],
                   ["TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END"]),
    Kind.MESSAGE_BATCH: (ACTIVITY_EXAMPLES[Kind.MESSAGE_BATCH][0][1],
                         ["TEXT_MESSAGE", "TEXT_MESSAGE"], ["TEXT_MESSAGE_START",
                         "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END"] * 2),
    Kind.TOOL_CALL: (ACTIVITY_EXAMPLES[Kind.TOOL_CALL][0][1], ["TOOL_CALL_REQUEST"],
                     ["TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END"]),
    Kind.STATE_DELTA: ({"path": "a.b", "new_value": 1, "removed": False}, ["STATE_DELTA"],
                       ["STATE_DELTA"]),
    Kind.PLAN: ({"plan_id": "p", "title": "Plan", "content": "1. a", "status": "ACTIVE"},
                ["PLAN_CARD"], ["ACTIVITY_SNAPSHOT"]),
    Kind.RESOURCES: ({"root": {"id": "r", "name": "root", "node_type": "folder"}},
                     ["RESOURCE_TREE"], ["ACTIVITY_SNAPSHOT"]),
    Kind.ROSTER: ({"agents": [{"id": "a", "name": "A", "status": "IDLE"}]}, ["AGENT_ROSTER"],
                  ["ACTIVITY_SNAPSHOT"]),
    Kind.ARTIFACT: ({"artifact_id": "f", "phase": "opened", "content": "x", "title": "f.py",
                     "content_type": "code"}, ["ARTIFACT_OPEN"], ["ACTIVITY_SNAPSHOT"]),
}


def test_every_kind_has_an_example():
    assert set(EXAMPLES) == set(Kind)


@pytest.mark.parametrize("kind", list(Kind))
def test_each_kind_in_seed_003_words(kind):
    given, types, _ = EXAMPLES[kind]
    events = mapping.translate(kind, given)
    assert [e["type"] for e in events] == types
    for event in events:
        assert "null" not in p.encode(event)  # a valid server event


@pytest.mark.parametrize("kind", list(Kind))
def test_each_kind_in_ag_ui_1_0_words(kind):
    given, _, types = EXAMPLES[kind]
    run = Run("t", "r", components=[{"component_id": "c0", "component_type": "card",
                                     "data": {"title": "x"}}])
    run.start()
    assert [e.message_id for e in run.screen()] == ["a2ui-component-c0"]  # the run's snapshot
    events = [e.model_dump(by_alias=True, exclude_none=True, mode="json")
              for e in run.translate(kind, given)]
    assert [e["type"] for e in events] == types
    if kind is Kind.REQUEST_OPENED:  # ends the run with its interrupt
        (finished,) = [e.model_dump(by_alias=True, exclude_none=True, mode="json")
                       for e in run.interrupt()]
        assert finished["outcome"]["interrupts"][0]["id"] == "r1"


def test_a_surface_batch_is_one_event_per_surface():
    batch = [*booking("a"), data("b", "/x", 1), delete("c"), delete("a"), *booking("a")[:1]]
    events = mapping.surface_batch({"messages": batch})
    assert [e.get("component_id") or e["path"] for e in events] == [
        "a2ui-surface-a", "a2ui-surface-b", "components.a2ui-surface-c"]
    assert events[0]["schema"] == {"type": "a2ui-surface", "surface_id": "a",
                                   "catalog_id": booking("a")[0]["createSurface"]["catalogId"],
                                   "a2ui_operations": booking("a")[:1]}  # created again
    assert events[1]["schema"]["append"] is True
    assert events[2] == {"type": "STATE_DELTA", "path": "components.a2ui-surface-c"}


def test_run_ended_in_seed_003_words():
    assert mapping.translate(Kind.RUN_ENDED, {"run_id": "r", "status": "error",
                                              "message": "boom", "code": "X"}) == [
        {"type": "TOOL_CALL_STATUS", "id": "r", "status": "FAILED", "message": "boom"},
        {"type": "TOOL_CALL_RESULT", "id": "r", "error": "boom"}]
    assert mapping.translate(Kind.RUN_ENDED, {"run_id": "r", "status": "cancelled"}) == [
        {"type": "TOOL_CALL_STATUS", "id": "r", "status": "CANCELLED"}]


# The seed-003 invariant: stale snapshot + events == fresh snapshot ------------------------------


def fold_screen(events):
    """What a seed-003 client shows of components, requests and surfaces: the last
    RENDER_REQUEST of each id (a surface's operations: replaced from a createSurface,
    appended otherwise), updated and removed by the STATE_DELTAs of the mapping."""
    shown, surfaces = {}, {}
    for e in events:
        if e["type"] == "RENDER_REQUEST":
            schema, cid = e["schema"], e["component_id"]
            if schema["type"] == "a2ui-surface":
                before = surfaces.get(cid, []) if schema.get("append") else []
                surfaces[cid] = before + schema["a2ui_operations"]
            else:
                shown[cid] = {"schema": schema, "props": e.get("props")}
        elif e["type"] == "STATE_DELTA":
            head, _, rest = e["path"].partition(".")
            if head == "components" and "new_value" not in e:
                shown.pop(rest, None)
                surfaces.pop(rest, None)
            elif head == "components":
                cid, _, operation = rest.rpartition(".")
                schema = shown[cid]["schema"]
                kind = schema["type"]
                current = {k: v for k, v in schema.items() if k != "type"}
                shown[cid]["schema"] = {"type": kind, **apply_update(kind, current, operation,
                                                                     e["new_value"])}
            elif head == "requests":
                shown.pop(rest.rpartition(".")[0], None)
    rendered = {}
    for cid, operations in surfaces.items():
        state = S.apply(S.SessionState(), Kind.SURFACE_BATCH, {"messages": operations})
        (surface,) = state.surfaces.values()
        rendered[cid] = surface.snapshot_messages()
    return shown, rendered


def state_events(state):
    snap = S.snapshot(state)
    surfaces = [s.snapshot_messages() for s in state.surfaces.values()]
    return mapping.session_state(snap["components"], snap["requests"], surfaces,
                                 snap["activity"])


@pytest.mark.parametrize("seed", range(40))
def test_stale_state_and_events_show_the_fresh_state(seed):
    ops = Ops(seed).many(30)
    events = all_events(ops)
    cut = random.Random(seed).randrange(len(events) + 1)
    stale = S.fold(S.SessionState(), events[:cut])
    fresh = S.fold(stale, events[cut:])
    live = state_events(stale) + [e for k, d in events[cut:] for e in mapping.translate(k, d)]
    for event in live:
        p.encode(event)
    assert fold_screen(live) == fold_screen(state_events(fresh))
    assert fold_screen(state_events(fresh))[1].keys() == {
        mapping.surface_key(s) for s in fresh.surfaces}


def test_the_invariant_check_can_fail():
    """Without the surfaces in the state (as before issue 24) a resumed client lacks them."""
    events = all_events(Ops(3).many(30))
    state = S.fold(S.SessionState(), events)
    assert state.surfaces
    snap = S.snapshot(state)
    without = mapping.session_state(snap["components"], snap["requests"], [], snap["activity"])
    assert fold_screen(without) != fold_screen(state_events(state))


def test_surfaces_as_the_session_surfaces_fold_them():
    """The pure ops above go through a2ui.v09's SessionSurfaces as the store does."""
    surfaces = SessionSurfaces()
    changes = surfaces.apply_batch(SURFACE)
    (event,) = mapping.surface_batch({"messages": changes.messages})
    assert fold_screen([event])[1]["a2ui-surface-s1"] == \
        surfaces.states["s1"].snapshot_messages()


# In process: each kind through the Python API, both clients attached ---------------------------

pytestmark_db = pytest.mark.django_db(transaction=True)


class Both:
    """A v0.9-opened session, a seed-003 socket on it, and an AG-UI 1.0 run on it."""

    def __init__(self, user, agent):
        self.user, self.agent = user, agent

    async def open(self, run_messages=None):
        record = await database_sync_to_async(
            lambda: tokens.issue_stream_token(self.user, self.agent).record)()
        session = await database_sync_to_async(admission.open_session)(record, {}, V09_CAPS)
        self.sid = str(session.session_id)
        self.token = await sse.issue(self.user, self.agent)
        self.person = await open_agui(self.token, self.sid)
        status = await event_of(self.person)
        assert status["status"] == "CONNECTED" and status["session_id"] == self.sid
        await self.start_run(run_messages)
        return self

    async def start_run(self, messages=None, run_id="run1"):
        self.run_id = run_id
        self.run = sse.Run(await sse.post(self.token, run_id, thread=self.sid, text=None,
                                          messages=messages or []))
        assert [(await self.run.next())["type"] for _ in range(2)] == ["RUN_STARTED",
                                                                       "STATE_SNAPSHOT"]

    async def agui(self, count):
        return [await event_of(self.person) for _ in range(count)]

    async def ran(self, count):
        return [await self.run.next() for _ in range(count)]

    async def marker(self):
        """A notify after the kind: proves the kind sent nothing more to either client."""
        await agents.anotify(self.agent, self.sid, "marker")
        assert (await self.agui(1))[0]["metadata"]["title"] == "marker"

    async def close(self):
        await self.person.disconnect()
        await self.run.close()


@pytest.fixture
async def both(user, agent):
    made = Both(user, agent)
    yield made
    try:
        await made.close()
    except Exception:
        pass


@pytestmark_db
async def test_component_rendered_updated_removed(both, agent):
    await both.open()
    await agents.arender(agent, both.sid, "card", {"title": "Hi"}, component_id="c1",
                         metadata={"ttl_seconds": 60})
    (shown,) = await both.agui(1)
    assert shown["type"] == "RENDER_REQUEST" and shown["schema"] == {"type": "card",
                                                                      "title": "Hi"}
    (snap,) = await both.ran(1)
    assert snap["type"] == "ACTIVITY_SNAPSHOT" and snap["messageId"] == "a2ui-component-c1"
    await agents.aupdate(agent, both.sid, "c1", {"title": "Bye"})
    assert await both.agui(1) == [{"type": "STATE_DELTA", "path": "components.c1.merge",
                                   "new_value": {"title": "Bye"}}]
    (delta,) = await both.ran(1)
    assert delta["type"] == "ACTIVITY_DELTA" and delta["patch"][0]["value"] == "Bye"
    await database_sync_to_async(RenderedComponent.objects.filter(
        component_id="c1").update)(expires_at=timezone.now())
    await sweep.sweep()
    assert await both.agui(1) == [{"type": "STATE_DELTA", "path": "components.c1"}]
    (gone,) = await both.ran(1)
    assert gone["content"]["removed"] is True


@pytestmark_db
async def test_request_opened_and_closed(both, agent):
    await both.open()
    asking = asyncio.ensure_future(agents.arequest_input(agent, both.sid, "text", "Name?",
                                                         request_id="q1"))
    (ask,) = await both.agui(1)
    assert ask["type"] == "RENDER_REQUEST" and ask["component_id"] == "q1"
    assert ask["schema"]["type"] == "input" and ask["schema"]["prompt"] == "Name?"
    (finished,) = await both.ran(1)  # the run ends, asking the person
    assert finished["type"] == "RUN_FINISHED"
    assert finished["outcome"]["interrupts"][0]["id"] == "q1"
    await send(both.person, frame({"type": "USER_ACTION", "action_type": "submit",
                                   "component_id": "q1", "payload": {"value": "Ada"}}))
    assert await both.agui(1) == [{"type": "STATE_DELTA", "path": "requests.q1.status",
                                   "new_value": "answered"}]
    assert await asyncio.wait_for(asking, 5) == "Ada"


@pytestmark_db
async def test_progress_navigate_notify(both, agent):
    await both.open()
    await agents.aprogress(agent, both.sid, "t1", value=1, total=4)
    assert (await both.agui(1))[0] == {"type": "TOOL_CALL_STATUS", "id": "t1",
                                       "status": "RUNNING", "progress": 25}
    assert [e["type"] for e in await both.ran(2)] == ["STEP_STARTED", "ACTIVITY_SNAPSHOT"]
    await agents.anavigate(agent, both.sid, "https://example.com/a")
    (link,) = await both.agui(1)
    assert link["content"] == "https://example.com/a"
    assert link["metadata"]["navigate"] == {"url": "https://example.com/a", "new_tab": False}
    (custom,) = await both.ran(1)
    assert custom["name"] == "a2ui.navigate" and custom["value"]["url"] == link["content"]
    await agents.anotify(agent, both.sid, "Saved", message="All good")
    (note,) = await both.agui(1)
    assert note["type"] == "TEXT_MESSAGE" and note["content"] == "All good"
    assert [e["type"] for e in await both.ran(3)] == [
        "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END"]


@pytestmark_db
async def test_surface_batch(both, agent):
    await both.open()
    await agents.asurfaces(agent, both.sid, SURFACE)
    (shown,) = await both.agui(1)
    assert shown["type"] == "RENDER_REQUEST" and shown["component_id"] == "a2ui-surface-s1"
    assert shown["schema"]["a2ui_operations"][0]["createSurface"]["surfaceId"] == "s1"
    (snap,) = await both.ran(1)
    assert snap["activityType"] == "a2ui-surface" and snap["messageId"] == "a2ui-surface-s1"
    await agents.asurfaces(agent, both.sid, [data("s1", "/name", "Bo")])
    (more,) = await both.agui(1)
    assert more["schema"]["append"] is True
    assert (await both.ran(1))[0]["type"] == "ACTIVITY_DELTA"
    # A socket that resumes now gets the surface whole; so does the thread's next run.
    again = await open_agui(both.token, both.sid)
    await event_of(again)
    (state,) = [e for e in [await event_of(again)] if e["type"] == "RENDER_REQUEST"]
    assert state["component_id"] == "a2ui-surface-s1" and "append" not in state["schema"]
    assert fold_screen([shown, more])[1] == fold_screen([state])[1]
    await again.disconnect()
    await agents.afinish_run(agent, both.sid, both.run_id)
    assert (await both.ran(1))[0]["type"] == "RUN_FINISHED"
    await both.start_run(run_id="run2")
    (screen,) = await both.ran(1)
    assert screen["messageId"] == "a2ui-surface-s1"
    assert screen["content"]["a2ui_operations"] == state["schema"]["a2ui_operations"]


@pytestmark_db
async def test_consent_required(both, agent, settings):
    settings.A2UI = {**settings.A2UI, "REQUIRED_CONSENTS": ["data_collection"]}
    await both.open()
    (prompt,) = await both.agui(1)  # on connect
    assert "consent_required" in prompt["metadata"]
    with pytest.raises(DomainError):  # the agent's refusal (-32010)
        await agents.arequest_input(agent, both.sid, "text", "Name?")
    (again,) = await both.agui(1)
    assert again["type"] == "TEXT_MESSAGE" and "consent_required" in again["metadata"]
    (custom,) = await both.ran(1)
    assert custom["type"] == "CUSTOM" and custom["name"] == "a2ui.consent_required"


@pytestmark_db
async def test_run_ended(both, agent):
    await both.open()
    await agents.afinish_run(agent, both.sid, both.run_id, {"ok": True})
    assert await both.agui(2) == [
        {"type": "TOOL_CALL_STATUS", "id": "run1", "status": "COMPLETED"},
        {"type": "TOOL_CALL_RESULT", "id": "run1", "result": {"ok": True}}]
    (finished,) = await both.ran(1)
    assert finished["type"] == "RUN_FINISHED" and finished["result"] == {"ok": True}


@pytestmark_db
async def test_message_and_message_batch(both, agent):
    await both.open(run_messages=[{"id": "u1", "role": "user", "content": "one"},
                                  {"id": "u2", "role": "user", "content": "two"}])
    said = await both.agui(2)  # the run's messages, one message.batch
    assert [(e["content"], e["metadata"]["role"]) for e in said] == [("one", "user"),
                                                                    ("two", "user")]
    await agents.aagui_event(agent, both.sid, AGUI_EVENTS[0])
    (text,) = await both.agui(1)
    assert text["content"] == "Hello **there**" and text["metadata"]["role"] == "agent"
    start, content, _ = await both.ran(3)  # the run's own were not echoed: the agent's first
    assert start["role"] == "assistant" and content["delta"] == "Hello **there**"


@pytestmark_db
async def test_a_persons_message_from_the_seed_003_socket_reaches_the_run(both):
    await both.open()
    await send(both.person, frame({"type": "TEXT_MESSAGE", "sender": "ada", "content": "hey"}))
    (echo,) = await both.agui(1)
    assert echo["metadata"]["role"] == "user"
    start, content, _ = await both.ran(3)
    assert start["role"] == "user" and content["delta"] == "hey"


AGENT_EVENTS = {  # the activity kinds: what each client receives of the agent's event
    "tool_call": (AGUI_EVENTS[1:4], ["TOOL_CALL_REQUEST", "TOOL_CALL_STATUS",
                                     "TOOL_CALL_RESULT"],
                  ["TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "ACTIVITY_SNAPSHOT",
                   "TOOL_CALL_RESULT"]),
    "state.delta": (AGUI_EVENTS[4:5], ["STATE_DELTA"], ["STATE_DELTA"]),
    "plan": (AGUI_EVENTS[6:7], ["PLAN_CARD"], ["ACTIVITY_SNAPSHOT"]),
    "resources": (AGUI_EVENTS[7:8], ["RESOURCE_TREE"], ["ACTIVITY_SNAPSHOT"]),
    "roster": (AGUI_EVENTS[8:9], ["AGENT_ROSTER"], ["ACTIVITY_SNAPSHOT"]),
    "artifact": (AGUI_EVENTS[9:11], ["ARTIFACT_OPEN", "ARTIFACT_UPDATE"],
                 ["ACTIVITY_SNAPSHOT", "ACTIVITY_SNAPSHOT"]),
}


@pytestmark_db
@pytest.mark.parametrize("kind", list(AGENT_EVENTS))
async def test_each_activity_kind(both, agent, kind):
    pushed, seed, one = AGENT_EVENTS[kind]
    await both.open()
    for event in pushed:
        await agents.aagui_event(agent, both.sid, event)
    assert [e["type"] for e in await both.agui(len(seed))] == seed
    assert [e["type"] for e in await both.ran(len(one))] == one
    await both.marker()
    # The thread's next run shows what the session holds that its client lacks.
    if kind in ("plan", "resources", "roster", "artifact"):
        await agents.afinish_run(agent, both.sid, both.run_id)
        rest = [e["type"] for e in await both.run.rest()]
        assert rest[-1] == "RUN_FINISHED"
        await both.start_run(run_id="run2")
        (screen,) = await both.ran(1)
        assert screen["activityType"] == f"a2ui-{kind}"


def test_every_kind_has_an_in_process_test():
    covered = {Kind.COMPONENT_RENDERED, Kind.COMPONENT_UPDATED, Kind.COMPONENT_REMOVED,
               Kind.REQUEST_OPENED, Kind.REQUEST_CLOSED, Kind.PROGRESS, Kind.NAVIGATE,
               Kind.NOTIFY, Kind.SURFACE_BATCH, Kind.CONSENT_REQUIRED, Kind.RUN_ENDED,
               Kind.MESSAGE, Kind.MESSAGE_BATCH} | {Kind(k) for k in AGENT_EVENTS}
    assert covered == set(Kind)
    assert json.dumps(sorted(covered))
