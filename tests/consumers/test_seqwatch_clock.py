"""``seqwatch`` reads only the sessions whose bucket of the sequence clock moved (Redis): an
idle process costs one round trip per interval, whatever its number of sockets, and nothing a
full read would find is missed (a push lost in flight, a suspect, a lost clock or counter).
Against a redis-server of the test's own."""

import asyncio

import pytest

from a2ui.consumers import seqwatch
from a2ui.infra import redisstate, shared
from a2ui.push import direct
from tests.consumers.test_seqwatch_grace import FakeSocket
from tests.redisserver import own_redis  # noqa: F401 (fixture)

#: Three sessions in three different buckets of the clock.
SESSIONS = ["a" * 29 + "001", "b" * 29 + "002", "c" * 29 + "003"]


@pytest.fixture
def redis_watched(settings, own_redis):  # noqa: F811
    settings.A2UI = {**getattr(settings, "A2UI", {}), "REDIS_URL": own_redis.url()}
    direct.clear()
    yield own_redis
    direct.clear()


@pytest.fixture
def reads(monkeypatch):
    """The sessions each round read (``shared.sequence_states``)."""
    seen = []
    real = shared.sequence_states

    async def spy(session_ids):
        seen.append(sorted(session_ids))
        return await real(session_ids)

    monkeypatch.setattr(shared, "sequence_states", spy)
    return seen


async def sockets():
    out = {}
    for session_hex in SESSIONS:
        seq, epoch = await shared.current_seq(session_hex)
        out[session_hex] = FakeSocket(epoch, seq)
        direct.register(session_hex, out[session_hex])
    return out


async def rounds(n, clock, suspects=None, resyncing=None):
    resyncing = {} if resyncing is None else resyncing
    suspects = suspects or {}
    for _ in range(n):
        suspects = await seqwatch.check(suspects, resyncing, clock)
        await asyncio.sleep(0)
    return suspects


def test_the_sessions_fall_in_different_buckets():
    assert len({redisstate.clock_bucket(s) for s in SESSIONS}) == 3


async def test_an_idle_round_reads_no_session(redis_watched, reads):
    await sockets()
    clock = seqwatch.Clock()
    await rounds(3, clock)
    assert reads == [sorted(SESSIONS)]  # the first round reads all, then none


async def test_a_push_makes_the_next_round_read_its_session_only(redis_watched, reads):
    socks = await sockets()
    clock = seqwatch.Clock()
    await rounds(1, clock)
    seq, epoch, _ = await shared.next_seq_and_sockets(SESSIONS[1])
    socks[SESSIONS[1]].last_seq = seq  # delivered
    await rounds(2, clock)
    assert reads == [sorted(SESSIONS), [SESSIONS[1]]]


async def test_a_push_lost_in_flight_is_found_and_resynced_once(redis_watched, reads):
    socks = await sockets()
    clock = seqwatch.Clock()
    await rounds(1, clock)
    await shared.next_seq(SESSIONS[2])  # numbered, never delivered
    resyncing = {}
    suspects = await rounds(seqwatch.GRACE_CHECKS, clock, resyncing=resyncing)
    assert socks[SESSIONS[2]] in suspects  # still suspected: read every round though the
    assert reads[2:] == [[SESSIONS[2]]] * (seqwatch.GRACE_CHECKS - 1)  # clock stands still
    await rounds(2, clock, suspects, resyncing)
    await asyncio.gather(*resyncing.values())
    assert [s.resyncs for s in socks.values()] == [0, 0, 1]


async def test_a_lost_clock_reads_every_session_again(redis_watched, reads):
    await sockets()
    clock = seqwatch.Clock()
    await rounds(2, clock)
    redis_watched.command("DEL", redisstate.CLOCK_KEY)
    await rounds(1, clock)
    assert reads == [sorted(SESSIONS), sorted(SESSIONS)]


async def test_a_flushed_redis_resyncs_every_socket_without_a_push(redis_watched):
    socks = await sockets()
    clock = seqwatch.Clock()
    await rounds(2, clock)
    redis_watched.flushdb()  # counters and clock gone: their epochs are lost
    resyncing = {}
    await rounds(1, clock, resyncing=resyncing)
    await asyncio.gather(*resyncing.values())
    assert [s.resyncs for s in socks.values()] == [1, 1, 1]


async def test_a_failed_round_reads_every_session_next(redis_watched, reads):
    await sockets()
    clock = seqwatch.Clock()
    await rounds(2, clock)
    clock.forget()  # what _watch does when a round fails
    await rounds(1, clock)
    assert reads == [sorted(SESSIONS), sorted(SESSIONS)]


async def test_an_evicted_counter_is_found_at_its_next_number(redis_watched):
    socks = await sockets()
    clock = seqwatch.Clock()
    await rounds(1, clock)
    redis_watched.command("DEL", redisstate.stream_key(SESSIONS[0]))
    await shared.next_seq(SESSIONS[0])  # a new counter, a new epoch; the push was lost
    resyncing = {}
    await rounds(1, clock, resyncing=resyncing)
    await asyncio.gather(*resyncing.values())
    assert [s.resyncs for s in socks.values()] == [1, 0, 0]
