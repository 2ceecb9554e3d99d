"""Tier 1: a session in use whose client registry has no live client is detached (a ghost);
one a client shows is left alone; a person refused at her share because of her ghosts is
admitted (``a2ui.sessions.ghosts``; live: tests/live/test_live_ghost_sessions.py)."""

import uuid
from datetime import timedelta

import pytest
from channels.db import database_sync_to_async
from django.utils import timezone

from a2ui import tokens
from a2ui.models import A2UISessionLog, Agent
from a2ui.push import sessions as session_actions
from a2ui.sessions import clients, ghosts

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def settled_leases():
    """With Redis, its leases began long enough ago for the registry to be sure (younger than
    their time to live, a lost lease may not be back yet: it cannot tell)."""
    from a2ui.infra import leasebackends, shared

    if shared.backend() is shared.local:
        return
    import redis

    from a2ui.conf import a2ui_settings

    client = redis.Redis.from_url(a2ui_settings.REDIS_URL)
    now = client.time()[0] * 1000
    client.set(leasebackends.SINCE, now - 3_600_000)
    client.close()


def attached(user, agent, n):
    old = timezone.now() - timedelta(seconds=ghosts.GRACE_SECONDS + 5)
    return [A2UISessionLog.objects.create(user=user, agent=agent, state="active",
                                          created_at=old).pk for _ in range(n)]


def detached(pks):
    return list(A2UISessionLog.objects.filter(pk__in=pks).order_by("created_at")
                .values_list("detached_at", flat=True))


async def test_ghosts_are_detached_and_shown_sessions_stay(user, agent):
    ghost, shown = await database_sync_to_async(attached)(user, agent, 2)
    new = (await database_sync_to_async(A2UISessionLog.objects.create)(
        user=user, agent=agent, state="active")).pk  # within the grace: not judged
    lease = await clients.ajoin(shown, "jsonrpc", None)
    try:
        assert await ghosts.adetach() == 1
    finally:
        await lease.release()
    rows = await database_sync_to_async(
        lambda: dict(A2UISessionLog.objects.values_list("pk", "detached_at")))()
    assert rows[ghost] is not None and rows[shown] is None and rows[new] is None


async def test_a_person_is_not_refused_because_of_her_own_ghosts(user, agent):
    await database_sync_to_async(
        lambda: Agent.objects.filter(pk=agent.pk).update(max_concurrent_sessions=2))()
    await database_sync_to_async(attached)(user, agent, 1)  # her share: 1, held by a ghost
    token = await database_sync_to_async(
        lambda: tokens.issue_stream_token(user, agent).record)()
    token = await database_sync_to_async(
        lambda: type(token).objects.select_related("user", "agent").get(pk=token.pk))()
    session, _ = await session_actions.aadmit(token, {"name": "tab"}, {})
    assert isinstance(session.pk, uuid.UUID)
    rejected = await database_sync_to_async(
        A2UISessionLog.objects.filter(state="rejected").count)()
    assert rejected == 0  # admitted at once: no refusal recorded
