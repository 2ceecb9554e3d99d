"""The activity service (a2ui.surfaces.activity) on the test database: the snapshot invariant
for each activity kind and random sequences, old values, limits and hostile input."""

import random

import pytest
from channels.db import database_sync_to_async
from django.conf import settings
from django.test import override_settings

from a2ui import tokens
from a2ui.core import state as S
from a2ui.core.errors import DomainError, Fault
from a2ui.core.events import Kind
from a2ui.push import entry as pushentry
from a2ui.push import person
from a2ui.sessions import lifecycle as sessions
from a2ui.surfaces import activity
from tests.activityops import ACTIVITY_EXAMPLES, TREE, ActivityOps
from tests.push.test_snapshot_invariant import Recorder

pytestmark = pytest.mark.django_db(transaction=True)

SMALL = {"ACTIVITY_TRANSCRIPT_LENGTH": 5, "ACTIVITY_MAX_TOOL_CALLS": 4, "ACTIVITY_MAX_PLANS": 3,
         "ACTIVITY_MAX_ARTIFACTS": 3, "ACTIVITY_MAX_ARTIFACT_SIZE": 200,
         "ACTIVITY_MAX_STATE_SIZE": 300, "ACTIVITY_MAX_STATE_DEPTH": 4,
         "ACTIVITY_MAX_TREE_NODES": 5, "ACTIVITY_MAX_ROSTER": 2,
         "ACTIVITY_MAX_MESSAGE_LENGTH": 50, "ACTIVITY_MAX_VALUE_SIZE": 100}


@pytest.fixture
def small():
    with override_settings(A2UI={**settings.A2UI, **SMALL}):
        yield




async def push(session, kind, data):
    return (await pushentry.aemit(session.agent_id, session.session_id, kind, data))[0]


async def check(monkeypatch, session, before, after):
    recorder = Recorder(monkeypatch, session.session_id)
    for event in before:
        await push(session, *event)
    snap = await sessions.asnapshot(session.session_id)
    recorder.start()
    for event in after:
        await push(session, *event)
    fresh = await sessions.asnapshot(session.session_id)
    events = recorder.events()
    folded = S.fold(S.from_snapshot(snap, limits=activity.limits()), events)
    assert S.comparable(S.snapshot(folded)) == S.comparable(fresh), events
    return events, fresh


FIRSTS = [evs[0] for evs in ACTIVITY_EXAMPLES.values()]


@pytest.mark.parametrize("kind", sorted(activity.KINDS))
async def test_each_activity_kind_keeps_the_invariant(monkeypatch, session, kind):
    events, fresh = await check(monkeypatch, session, FIRSTS, ACTIVITY_EXAMPLES[kind])
    assert [k for k, _ in events] == [kind] * len(ACTIVITY_EXAMPLES[kind])


@pytest.mark.parametrize("seed", range(6))
async def test_random_activity_keeps_the_invariant(monkeypatch, session, small, seed):
    events = ActivityOps(seed).many(30)
    cut = random.Random(seed).randrange(len(events) + 1)
    emitted, _ = await check(monkeypatch, session, events[:cut], events[cut:])
    assert [k for k, _ in emitted] == [k for k, _ in events[cut:]]


async def stored(session):
    return (await sessions.asnapshot(session.session_id)).activity


async def refused(session, kind, data, path):
    before = await stored(session)
    with pytest.raises(DomainError) as info:
        await push(session, kind, data)
    assert info.value.fault is Fault.INVALID_INPUT and info.value.data["path"] == path
    assert await stored(session) == before  # nothing changed
    return info.value.data["reason"]


async def test_a_delta_whose_old_value_differs_is_refused_and_changes_nothing(session):
    await push(session, Kind.STATE_DELTA, {"path": "user.theme", "new_value": "light"})
    reason = await refused(session, Kind.STATE_DELTA, {
        "path": "user.theme", "old_value": "dark", "new_value": "blue"}, "old_value")
    assert "user.theme" in reason
    await refused(session, Kind.STATE_DELTA, {"path": "user.lang", "old_value": "en",
                                              "new_value": "fr"}, "old_value")
    await refused(session, Kind.STATE_DELTA, {"path": "user.theme", "old_value": 1,
                                              "new_value": 2}, "old_value")
    await refused(session, Kind.STATE_DELTA, {"path": "user.theme.x", "new_value": 1}, "path")
    await refused(session, Kind.STATE_DELTA, {"path": "nothing", "removed": True}, "path")
    await refused(session, Kind.STATE_DELTA, {"path": "a..b", "new_value": 1}, "path")
    await push(session, Kind.STATE_DELTA, {"path": "user.theme", "old_value": "light",
                                           "new_value": "dark"})
    await push(session, Kind.STATE_DELTA, {"path": "n", "new_value": True})
    await refused(session, Kind.STATE_DELTA, {"path": "n", "old_value": 1, "new_value": 2},
                  "old_value")  # true is not 1
    assert (await stored(session))["state"] == {"user": {"theme": "dark"}, "n": True}


async def test_limits(session, small):
    for i in range(3):
        await push(session, Kind.ARTIFACT, {"artifact_id": f"a{i}", "phase": "opened",
                                            "content": "x"})
    await refused(session, Kind.ARTIFACT, {"artifact_id": "a9", "phase": "opened",
                                           "content": "x"}, "artifact_id")
    await refused(session, Kind.ARTIFACT, {"artifact_id": "a0", "phase": "updated",
                                           "change_type": "partial", "content": "y" * 200},
                  "content")
    await refused(session, Kind.ARTIFACT, {"artifact_id": "zz", "phase": "updated",
                                           "change_type": "partial", "content": "y"},
                  "artifact_id")
    await refused(session, Kind.ARTIFACT, {"artifact_id": "a0", "phase": "updated",
                                           "change_type": "diff", "content": "not a diff"},
                  "content")
    await refused(session, Kind.STATE_DELTA, {"path": "a", "new_value": "z" * 400}, "new_value")
    await push(session, Kind.STATE_DELTA, {"path": "a.b", "new_value": {"c": 1}})
    await refused(session, Kind.STATE_DELTA, {"path": "a.b", "new_value": {"c": {"d": {}}}},
                  "new_value")
    await refused(session, Kind.STATE_DELTA, {"path": "a.b.c.d.e", "new_value": 1}, "path")
    await refused(session, Kind.MESSAGE, {"message_id": "m", "role": "agent", "sender": "s",
                                          "content": "x" * 51}, "content")
    await refused(session, Kind.RESOURCES, {"root": TREE | {"children": [TREE] * 3}}, "root")
    await refused(session, Kind.ROSTER, {"agents": [
        {"id": str(i), "name": "n", "status": "IDLE"} for i in range(3)]}, "agents")
    for i in range(3):
        await push(session, Kind.PLAN, {"plan_id": f"p{i}", "title": "t", "content": "c",
                                        "status": "ACTIVE"})
    await refused(session, Kind.PLAN, {"plan_id": "p9", "title": "t", "content": "c",
                                       "status": "ACTIVE"}, "plan_id")
    await push(session, Kind.PLAN, {"plan_id": "p0", "title": "t", "content": "c",
                                    "status": "COMPLETED"})
    await push(session, Kind.PLAN, {"plan_id": "p9", "title": "t", "content": "c",
                                    "status": "ACTIVE"})
    assert [p["plan_id"] for p in (await stored(session))["plans"]] == ["p1", "p2", "p9"]
    for i in range(7):
        await push(session, Kind.MESSAGE, {"message_id": f"m{i}", "role": "agent",
                                           "sender": "s", "content": str(i)})
    assert [m["content"] for m in (await stored(session))["transcript"]] == list("23456")


async def test_hostile_input(session):
    await refused(session, Kind.STATE_DELTA, {"path": "big", "new_value": 2**64}, "new_value")
    await refused(session, Kind.TOOL_CALL, {"call_id": "t", "phase": "result",
                                            "result": {"n": -(2**70)}}, "result.n")
    await refused(session, Kind.TOOL_CALL, {"call_id": "t", "phase": "status",
                                            "status": "RUNNING", "progress": 10**30}, "progress")
    await refused(session, Kind.MESSAGE, {"message_id": "x" * 500, "role": "agent",
                                          "sender": "s", "content": "c"}, "message_id")
    await refused(session, Kind.ARTIFACT, {"artifact_id": "a", "phase": "opened",
                                           "content": "x", "language": "<script>"}, "language")
    await refused(session, Kind.TOOL_CALL, {"call_id": "t", "phase": "requested",
                                            "tool_name": "x", "parameters": {
                                                "url": "javascript:alert(1)"}},
                  "parameters.url")
    await push(session, Kind.MESSAGE, {"message_id": "m", "role": "agent",
                                       "sender": "bot\x00\u202e", "content":
                                       "a\ud800b\x00c <script>x</script><b>bold</b>"})
    await push(session, Kind.ARTIFACT, {"artifact_id": "code", "phase": "opened",
                                        "content": "if a < b && c\u202e {}\x00\n"})
    act = await stored(session)
    message = act["transcript"][0]
    assert message["sender"] == "bot" and "\ud800" not in message["content"]
    assert "\x00" not in message["content"] and "<" not in message["content"]
    assert act["artifacts"][0]["content"] == "if a < b && c {}\n"  # code is text, not HTML


async def test_a_diff_update_carries_the_result_and_a_person_message_is_role_user(
        monkeypatch, session):
    diff = "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n"
    events, fresh = await check(monkeypatch, session, [
        (Kind.ARTIFACT, {"artifact_id": "x", "phase": "opened", "content": "one\ntwo\n"})], [
        (Kind.ARTIFACT, {"artifact_id": "x", "phase": "updated", "change_type": "diff",
                         "content": diff})])
    assert events[0][1]["full_content"] == "one\nTWO\n"
    assert fresh.activity["artifacts"][0]["content"] == "one\nTWO\n"
    data = activity.person_message("alice", "hello <b>there</b>", {"k": "v"})
    await person.arecord_person_message(session.session_id, data)
    message = (await stored(session))["transcript"][-1]
    assert message["role"] == "user" and message["sender"] == "alice"
    assert message["content"] == "hello there"


async def test_another_agents_session_is_refused(session):
    other_agent, _ = await database_sync_to_async(tokens.create_agent)("other-agent")
    with pytest.raises(DomainError) as info:
        await pushentry.aemit(other_agent.pk, session.session_id, Kind.PLAN, {
            "plan_id": "p", "title": "t", "content": "c", "status": "ACTIVE"})
    assert info.value.fault is Fault.SESSION_NOT_FOUND
    assert (await stored(session))["plans"] == []
