"""Replay's kept events (a2ui.compliance.replay) against the services and the database.

A session is driven through the services (the scenarios and random operations of
tests/push/test_snapshot_invariant.py); the events kept for it, folded by a2ui.core.replay,
give the database's snapshot at the end, and every moment before it. The rows go with the
session when retention purges it.
"""

import random

import pytest
from channels.db import database_sync_to_async
from django.conf import settings
from django.test import override_settings

from a2ui import surfaces as surface_service
from a2ui.compliance import replay as replaylog
from a2ui.consent import choices as consent
from a2ui.core import replay as R
from a2ui.core import state as S
from a2ui.core.events import Kind
from a2ui.models import A2UISessionLog, SessionEvent
from a2ui.sessions import lifecycle as sessions
from tests.push.test_snapshot_invariant import ASK, CONFIRM, SCENARIOS, render, run
from tests.sessionops import Ops

pytestmark = pytest.mark.django_db(transaction=True)




async def kept(session):
    return [(k, d) for _, k, d in await database_sync_to_async(replaylog.events)(session)]


async def replayed_equals_snapshot(session):
    events = await kept(session)
    screen = R.replay(events, None, registry=surface_service.catalog_registry())
    fresh = await sessions.asnapshot(session.session_id)
    assert S.comparable(S.snapshot(screen.state)) == S.comparable(fresh), events
    return events


@pytest.mark.parametrize("name", list(SCENARIOS))
async def test_the_kept_events_replay_to_the_snapshot(session, name):
    before, after = SCENARIOS[name]
    for op in before:
        await run(session, op)
    await replayed_equals_snapshot(session)
    for op in after:
        await run(session, op)
    await replayed_equals_snapshot(session)


@pytest.mark.parametrize("seed", range(4))
async def test_random_sessions_replay_to_the_snapshot_at_every_step(session, seed):
    ops = Ops(seed).many(16)
    for n, op in enumerate(ops, start=1):
        await run(session, op)
        if n in (random.Random(seed).randrange(1, 16), 16):
            await replayed_equals_snapshot(session)


async def test_the_check_fails_when_an_event_is_lost(session):
    await run(session, render("c1"))
    await run(session, render("c2"))
    await database_sync_to_async(replaylog.buffer.flush_sync)()
    await database_sync_to_async(
        SessionEvent.objects.filter(session=session, data__component_id="c2").delete)()
    with pytest.raises(AssertionError):
        await replayed_equals_snapshot(session)


async def test_transient_kinds_are_not_kept(session):
    await run(session, render("c"))
    await run(session, ("push", "ui.notify", {"title": "Saved", "level": "info"}))
    assert [k for k, _ in await kept(session)] == [Kind.COMPONENT_RENDERED]


async def test_a_consent_prompt_and_the_choice_are_moments(session):
    with override_settings(A2UI={**settings.A2UI, "REQUIRED_CONSENTS": ["data_collection"]}):
        await run(session, ("refused", ASK))
        change = await database_sync_to_async(consent.record_choice)(
            session.user, "data_collection", True, session.session_id)
        await consent.anotify(change)
        await run(session, CONFIRM)
    events = await kept(session)
    assert [k for k, _ in events] == [R.CONSENT_REQUIRED, R.CONSENT_RECORDED,
                                      Kind.REQUEST_OPENED]
    assert R.replay(events, 1).consent and not R.replay(events, 2).consent


async def test_the_events_go_with_the_session(session):
    await run(session, render("c"))
    await database_sync_to_async(replaylog.buffer.flush_sync)()
    assert await database_sync_to_async(SessionEvent.objects.count)() == 1
    await database_sync_to_async(A2UISessionLog.objects.filter(pk=session.pk).delete)()
    assert await database_sync_to_async(SessionEvent.objects.count)() == 0


async def test_nothing_is_kept_when_turned_off(session):
    with override_settings(A2UI={**settings.A2UI, "REPLAY_KEEP_EVENTS": False}):
        await run(session, render("c"))
    assert await kept(session) == []


async def test_events_are_kept_off_the_push_path_and_written_in_batches(session):
    """On PostgreSQL a push adds to the process's buffer (no database call of its own) and the
    flusher writes within REPLAY_FLUSH_SECONDS; on SQLite (one writer at a time) the
    per-message thread writes it at once. A row written for a session deleted meanwhile is an
    orphan the retention purge removes."""
    from django.db import connection

    from a2ui.compliance import purge

    batched = connection.vendor != "sqlite"
    await database_sync_to_async(replaylog.buffer.flush_sync)()
    with override_settings(A2UI={**settings.A2UI, "REPLAY_FLUSH_SECONDS": 30}):
        await run(session, render("c1"))
        await run(session, render("c2"))
        count = database_sync_to_async(SessionEvent.objects.count)
        assert await count() == (0 if batched else 2)
        await database_sync_to_async(replaylog.buffer.flush_sync)()
        assert await count() == 2
        await run(session, render("c3"))
        await database_sync_to_async(A2UISessionLog.objects.filter(pk=session.pk).delete)()
        await database_sync_to_async(replaylog.buffer.flush_sync)()  # no error
    assert await count() == (1 if batched else 0)  # the late row: an orphan when batched
    await database_sync_to_async(purge.purge)(90)
    assert await count() == 0


async def test_a_row_the_database_refuses_does_not_stop_the_others(session):
    """A poison row (PostgreSQL refuses a NUL in JSON) is dropped; the batch's others are
    written and the buffer does not retry it forever."""
    buffer = replaylog.ReplayBuffer()
    buffer.add(session.session_id, 1, Kind.COMPONENT_RENDERED, {"component_id": "ok"})
    buffer.add(session.session_id, 2, Kind.COMPONENT_RENDERED, {"component_id": "a\x00b"})
    await database_sync_to_async(buffer.flush_sync)()
    ids = await database_sync_to_async(lambda: sorted(
        e.data["component_id"] for e in SessionEvent.objects.filter(session=session)))()
    assert "ok" in ids
    await database_sync_to_async(buffer.flush_sync)()  # nothing left to retry
