"""A late push is not a lost one: ``seqwatch`` resyncs a socket only when a number stays
missing for ``GRACE_CHECKS`` checks and the socket holds nothing still to handle (under load,
resyncs of late pushes fed the overload: docs/performance.md)."""

import asyncio
import collections

import pytest

from a2ui.consumers import seqwatch
from a2ui.infra import shared
from a2ui.push import direct


class FakeSocket:
    """What seqwatch reads of a user consumer (``DirectDeliveryMixin``)."""

    def __init__(self, epoch=None, last_seq=0):
        self.loop = asyncio.get_running_loop()
        self.epoch = shared.local.epoch if epoch is None else epoch
        self.last_seq = last_seq
        self.resyncs = 0
        self._turn = asyncio.Lock()
        self._deferred = collections.deque()
        self._in_hand = False

    async def take_direct(self, event):
        assert event.get("resync")
        self.resyncs += 1


@pytest.fixture
def watched(settings):
    settings.A2UI = {**getattr(settings, "A2UI", {}), "REDIS_URL": ""}
    shared.local.clear()
    direct.clear()
    yield
    shared.local.clear()
    direct.clear()


async def rounds(n, suspects=None):
    resyncing = {}
    suspects = suspects or {}
    for _ in range(n):
        suspects = await seqwatch.check(suspects, resyncing)
        await asyncio.sleep(0)
    return suspects


async def test_a_number_missing_for_fewer_checks_than_the_grace_is_waited_for(watched):
    socket = FakeSocket()
    direct.register("s1", socket)
    await shared.next_seq("s1")  # issued, not received
    suspects = await rounds(seqwatch.GRACE_CHECKS)
    assert socket.resyncs == 0
    socket.last_seq = 1  # it was late, not lost
    await rounds(seqwatch.GRACE_CHECKS + 1, suspects)
    assert socket.resyncs == 0


async def test_a_number_missing_past_the_grace_resyncs_once(watched):
    socket = FakeSocket()
    direct.register("s1", socket)
    await shared.next_seq("s1")
    await rounds(seqwatch.GRACE_CHECKS + 1)
    assert socket.resyncs == 1


async def test_a_busy_socket_is_not_resynced_until_it_is_idle(watched):
    socket = FakeSocket()
    direct.register("s1", socket)
    await shared.next_seq("s1")
    socket._deferred.append({"type": "a2ui.push"})  # the missing push may be this one
    suspects = await rounds(seqwatch.GRACE_CHECKS + 3)
    assert socket.resyncs == 0
    socket._deferred.clear()  # idle, and the number still missing: lost
    await rounds(1, suspects)
    assert socket.resyncs == 1


async def test_a_new_epoch_resyncs_at_once(watched):
    socket = FakeSocket()
    socket.epoch = "an epoch that is gone"
    direct.register("s1", socket)
    await rounds(1)
    assert socket.resyncs == 1


# A subscription that reconnected: what was published meanwhile is known lost -------------------


async def test_after_a_reconnect_a_missing_number_resyncs_in_the_first_round(watched):
    socket, caught_up = FakeSocket(), FakeSocket(last_seq=1)
    direct.register("s1", socket)
    direct.register("s2", caught_up)
    await shared.next_seq("s1")  # published while the subscription was away
    await shared.next_seq("s2")
    await seqwatch.check({}, {}, lost=True)
    await asyncio.sleep(0)
    assert (socket.resyncs, caught_up.resyncs) == (1, 0)


async def test_after_a_reconnect_a_busy_socket_resyncs_in_the_next_round_once_idle(watched):
    socket = FakeSocket()
    direct.register("s1", socket)
    await shared.next_seq("s1")
    socket._deferred.append({"type": "a2ui.push"})
    suspects = await seqwatch.check({}, {}, lost=True)
    assert socket.resyncs == 0
    socket._deferred.clear()
    await rounds(1, suspects)  # an ordinary round: no grace left to wait
    assert socket.resyncs == 1


class EveryRound:
    """A sequence clock that has every session read (the in-memory backend has none)."""

    def forget(self):
        pass

    async def read(self):
        return None


async def test_a_restored_subscription_wakes_the_watch(watched, monkeypatch):
    """With rounds an hour apart, only the wake can run one."""
    monkeypatch.setattr(seqwatch, "INTERVAL_SECONDS", 3600)
    monkeypatch.setattr(seqwatch, "Clock", EveryRound)
    socket = FakeSocket()
    direct.register("s1", socket)
    await shared.next_seq("s1")
    wake = asyncio.Event()
    monkeypatch.setitem(seqwatch._wakes, asyncio.get_running_loop(), wake)
    watch = asyncio.ensure_future(seqwatch._watch(wake))
    try:
        await asyncio.sleep(0.1)
        assert socket.resyncs == 0
        seqwatch.subscription_restored()
        for _ in range(100):
            if socket.resyncs:
                break
            await asyncio.sleep(0.02)
        assert socket.resyncs == 1
    finally:
        watch.cancel()
        await asyncio.gather(watch, return_exceptions=True)
