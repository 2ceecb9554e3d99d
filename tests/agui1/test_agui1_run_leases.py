"""A run's lease in Redis (a2ui.runs.leases), against a redis-server of the test's own:
a lease lapses when nobody keeps it, a held one is kept, and a Redis that lost its keys (a
restart, a flush) says "unknown" for a missing lease until its holders had a lease's time to
set theirs again, so a live run is not taken for lost; Redis away is "unknown" too."""

import asyncio
import uuid

import pytest

from a2ui.runs import leases as runleases
from tests.redisserver import own_redis  # noqa: F401 (fixture)


@pytest.fixture
def leases(settings, own_redis):  # noqa: F811
    settings.A2UI = {**getattr(settings, "A2UI", {}), "REDIS_URL": own_redis.url(),
                     "AGUI_RUN_LEASE_SECONDS": 1}
    runleases.clear()
    yield own_redis
    runleases.clear()


async def test_a_lease_lapses_unless_its_stream_keeps_it(leases):
    kept, left = (uuid.uuid4(), "r1"), (uuid.uuid4(), "r2")
    await runleases.ahold(*kept)
    await runleases.aset(*left)
    assert await runleases.alive([kept, left]) == [True, True]
    await asyncio.sleep(1.6)
    assert await runleases.alive([kept, left]) == [True, False]
    runleases._held.clear()  # as if another process asked: only Redis answers
    assert await runleases.alive([kept]) == [True]  # set again by the refresher
    await runleases.arelease(*kept)
    assert await runleases.alive([kept]) == [False]


async def test_a_redis_that_lost_its_keys_does_not_say_lost_until_a_lease_passed(leases):
    run = (uuid.uuid4(), "r1")
    await runleases.aset(*run)
    await asyncio.sleep(1.1)
    leases.flushdb()  # every lease gone: the ones still held come back within a third of one
    assert await runleases.alive([run]) == [None]
    await runleases.aset(uuid.uuid4(), "other")  # a holder sets its lease again
    assert await runleases.alive([run]) == [None]
    await asyncio.sleep(1.1)
    assert await runleases.alive([run]) == [False]
    leases.stop()
    assert await runleases.alive([run]) == [None]  # Redis away: unknown
