"""a2ui.infra.caps: leases per credential and per address, on both backends.

Process-local (no Redis) and Redis (a redis-server of the test's own): a holder at its limit
refuses with the kind, the holder and the limit, and counts nothing; another holder still gets
in; a release frees the place; with Redis, leases of a process that stops refreshing them
expire by themselves, and Redis losing the keys only frees places until the next refresh puts
the live leases back.
"""

import asyncio

import pytest

from a2ui.infra import caps, leases, shared
from tests.redisserver import own_redis  # noqa: F401 (fixture)


@pytest.fixture(params=["local", "redis"])
def backend(request, settings):
    if request.param == "redis":
        server = request.getfixturevalue("own_redis")
        settings.A2UI = {**getattr(settings, "A2UI", {}), "REDIS_URL": server.url(),
                         "CAP_LEASE_SECONDS": 1}
        return server
    settings.A2UI = {**getattr(settings, "A2UI", {}), "REDIS_URL": None}
    return None


def holders(person_limit=2, address_limit=3, person="7:1", address="10.0.0.1"):
    return [caps.Holder("person", person, person_limit),
            caps.Holder("address", address, address_limit)]


async def test_a_holder_at_its_limit_refuses_and_counts_nothing(backend):
    first = await caps.acquire("mcp", holders())
    second = await caps.acquire("mcp", holders())
    with pytest.raises(caps.CapReached) as refused:
        await caps.acquire("mcp", holders())
    exc = refused.value
    assert exc.fault == "rate_limited"
    assert exc.data == {"reason": "cap_reached", "kind": "mcp", "per": "person", "limit": 2}
    assert "limit 2" in exc.message and "this person" in exc.message
    # The refused one was not counted under the address either.
    assert await caps.count("mcp", caps.Holder("address", "10.0.0.1", 3)) == 2
    # Another person from the same address gets the address' last place, then the address
    # is full for everyone.
    other = await caps.acquire("mcp", holders(person="8:1"))
    with pytest.raises(caps.CapReached) as refused:
        await caps.acquire("mcp", holders(person="9:1"))
    assert refused.value.data["per"] == "address" and refused.value.data["limit"] == 3
    # Another kind is counted apart.
    await caps.acquire("socket", holders())
    # A release frees the place (twice is once).
    await first.release()
    await first.release()
    again = await caps.acquire("mcp", holders())
    for lease in (second, other, again):
        await lease.release()
    assert await caps.count("mcp", caps.Holder("person", "7:1", 2)) == 0


async def test_two_acquires_racing_for_the_last_place_get_one(backend):
    results = await asyncio.gather(*[caps.acquire("run", holders(person_limit=5))
                                     for _ in range(12)], return_exceptions=True)
    admitted = [r for r in results if isinstance(r, caps.Lease)]
    assert len(admitted) == 3  # the address' limit
    assert all(isinstance(r, caps.CapReached) for r in results if r not in admitted)


async def test_leases_a_process_stops_refreshing_expire(backend):
    if backend is None:
        pytest.skip("process-local leases never expire (their process is the only one)")
    lease = await caps.acquire("mcp", holders(person_limit=1))
    with pytest.raises(caps.CapReached):
        await caps.acquire("mcp", holders(person_limit=1))
    # This process refreshes what it holds (every CAP_LEASE_SECONDS / 3): still held.
    await asyncio.sleep(1.5)
    with pytest.raises(caps.CapReached):
        await caps.acquire("mcp", holders(person_limit=1))
    # A process that dies stops refreshing: its lease expires after CAP_LEASE_SECONDS.
    leases._live.pop(lease.id)
    await asyncio.sleep(1.3)
    replacement = await caps.acquire("mcp", holders(person_limit=1))
    await replacement.release()


async def test_redis_losing_the_keys_frees_places_until_the_refresh(backend):
    if backend is None:
        pytest.skip("only Redis loses keys")
    held = [await caps.acquire("stream", holders(person_limit=2)) for _ in range(2)]
    backend.flushdb()  # lost: the places are free ...
    extra = await caps.acquire("stream", holders(person_limit=2))
    await extra.release()
    await caps.refresh_now()  # ... until the live leases are put back
    assert await caps.count("stream", caps.Holder("person", "7:1", 2)) == 2
    with pytest.raises(caps.CapReached):
        await caps.acquire("stream", holders(person_limit=2))
    for lease in held:
        await lease.release()


async def test_redis_away_admits_uncounted(settings):
    """Caps protect the service; an unreachable Redis must not refuse everyone."""
    settings.A2UI = {**getattr(settings, "A2UI", {}), "REDIS_URL": "redis://127.0.0.1:1/0"}
    shared.backend()._connections().line.timeout = 0.5
    lease = await caps.acquire("mcp", holders(person_limit=1))
    assert not lease.counted
    await lease.release()


async def test_holding_releases_when_the_body_ends_or_is_closed(backend):
    async def chunks():
        yield b"a"
        yield b"b"

    lease = await caps.acquire("stream", holders(person_limit=1))
    assert [c async for c in caps.holding(lease, chunks())] == [b"a", b"b"]
    assert lease.released
    lease = await caps.acquire("stream", holders(person_limit=1))
    body = caps.holding(lease, chunks())
    assert await body.__anext__() == b"a"
    await body.aclose()  # the client went
    assert lease.released
    assert await caps.count("stream", caps.Holder("person", "7:1", 1)) == 0


async def test_a_body_never_read_releases_when_collected(backend):
    import gc

    async def chunks():
        yield b"a"

    lease = await caps.acquire("stream", holders(person_limit=1))
    body = caps.holding(lease, chunks())
    del body  # the client went before Django read the body: never started, never closed
    gc.collect()
    await asyncio.sleep(0.05)
    assert lease.released
    assert await caps.count("stream", caps.Holder("person", "7:1", 1)) == 0


async def test_a_lease_dropped_unreleased_frees_its_place(backend, caplog):
    """An owner that loses its lease (an exception between admission and the thing's start)
    must not cost the person the place for good (process-local leases never expire)."""
    import gc

    lease = await caps.acquire("run", holders(person_limit=1))
    with pytest.raises(caps.CapReached):
        await caps.acquire("run", holders(person_limit=1))
    del lease
    gc.collect()
    await asyncio.sleep(0.05)
    assert await caps.count("run", caps.Holder("person", "7:1", 1)) == 0
    assert "dropped without being released" in caplog.text
    again = await caps.acquire("run", holders(person_limit=1))
    await again.release()
