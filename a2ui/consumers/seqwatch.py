"""Finds pushes a socket would otherwise never get, and has the socket resync.

A gap in the sequence numbers shows a lost push only when a later push arrives. Two losses may
have none after them:

* Redis lost the session's counter (a restart, a failover, FLUSHDB, an evicted key). It comes
  back with a new epoch (``a2ui.infra.shared``), and whatever was published around the loss
  may never have reached this process's subscription.
* Redis failed over to a replica that lacked the primary's last writes (replication is
  asynchronous): the counter keeps its epoch but is *behind* what sockets have already seen,
  and the next pushes reuse numbers. A socket whose newest number is above the counter's is
  resynced at once (its gap detection would otherwise stay blind until the counter passes it).
* A published push was lost in flight (the channel layer is at-most-once; a subscription that
  is reconnecting after a Redis restart or a failover misses what is published meanwhile).

So every ``INTERVAL_SECONDS``, while this process has registered sockets, it reads the newest
sequence number and epoch of their sessions (one round trip for all) and hands a resync
(``stream.resync_message``, through the consumer's own queue, in order with its pushes) to a
socket whose epoch differs, or that still has not received a number that had been issued one
interval before. Only with Redis: the in-memory backend loses nothing of its own.

Which sessions it reads, the *sequence clock* tells (``shared.sequence_clock``: one small hash,
a counter per bucket of sessions, bumped in the round trip that takes each sequence number):
each round reads the clock, then only the sessions of buckets that moved since the last round,
and those with a socket still suspected. An idle process costs Redis one round trip per
interval, not one read per session (docs/performance.md, "Redis per idle session"). A clock
with a new epoch (Redis restarted, failed over to a replica without it, lost the key) or a
failed round: every session is read in the next round. A counter lost on its own (an evicted
key) comes back with a new epoch at its next number, which moves the clock.

A number missing is not yet a push lost: under load the push may only be late (the event loop
behind, the socket busy with earlier messages), and a resync of a late push costs a snapshot
from the database and more frames, which made an overloaded process fall further behind: at
300 sessions a soak's open storm set off resync after resync (docs/performance.md). So a socket
is resynced only when a number stays missing for ``GRACE_CHECKS`` checks in a row and the socket
holds no pushes still to handle.

A loss that is known is not waited for: when this process's channel-layer subscription
reconnects (``a2ui.layer.shards`` calls :func:`subscription_restored`), whatever was published
while it was away will never arrive. The next round runs at once (``SETTLE_SECONDS`` later, so
Redis has taken the new SUBSCRIBE before the numbers are read), reads every session, and resyncs
each socket that misses a number issued by then, without the grace (a busy one in the round
after, if it still misses it once idle).

Every listener of a session (``consumers.session.SessionListener``: the sockets of every
protocol, the SSE streams, the MCP watcher) is checked this way once it is registered for
direct delivery.
"""

import asyncio
import logging
import weakref

from a2ui.infra import jobs, outages, shared
from a2ui.push import direct
from a2ui.push import fanout as stream

log = logging.getLogger("a2ui.services")

INTERVAL_SECONDS = 0.5
#: Checks a number must stay missing for before the socket is resynced (about 2 s).
GRACE_CHECKS = 4
#: From a subscription's reconnect to the round it sets off.
SETTLE_SECONDS = 0.05

_tasks = weakref.WeakKeyDictionary()  # event loop -> its watch task
_wakes = weakref.WeakKeyDictionary()  # event loop -> its watch's Event: a subscription is back
_job = jobs.Loop("sequence watch", lambda: INTERVAL_SECONDS, _tasks)


def ensure_started():
    """Start this loop's watch (it ends by itself once no socket is registered here)."""
    if shared.backend() is shared.local:
        return
    loop = asyncio.get_running_loop()
    task = _tasks.get(loop)
    if task is None or task.done():
        wake = _wakes[loop] = asyncio.Event()
        _tasks[loop] = loop.create_task(_watch(wake))


def subscription_restored():
    """This loop's channel-layer subscription reconnected: what was published while it was
    away is lost. The watch's next round runs now and resyncs without the grace."""
    try:
        wake = _wakes.get(asyncio.get_running_loop())
    except RuntimeError:
        return
    if wake is not None:  # no watch: no socket registered here, nothing to resync
        wake.set()


async def _watch(wake):
    suspects, resyncing, failing, clock, lost = {}, {}, False, Clock(), False
    while direct.any_registered():
        try:
            async with asyncio.timeout(INTERVAL_SECONDS):
                await wake.wait()
        except TimeoutError:
            pass
        if wake.is_set():
            wake.clear()
            lost = True
            clock.forget()
            await asyncio.sleep(SETTLE_SECONDS)
        try:
            suspects = await check(suspects, resyncing, clock, lost=lost)
            failing = lost = False
        except Exception as exc:  # Redis away: try again next time, say so once
            clock.forget()
            if not failing:
                outages.tally()
                log.warning("a2ui: sequence check failed (%s); retrying", exc)
            failing = True


class Clock:
    """The sequence clock as the last round read it: which sessions moved since."""

    def __init__(self):
        self.epoch = None
        self.buckets = None  # None: read every session next round

    def forget(self):
        self.buckets = None

    async def read(self):
        """Read the clock: the buckets that moved since the last read (a set), or None when
        every session is to be read (the first read, or a new epoch)."""
        epoch, buckets = await shared.sequence_clock()
        before, self.buckets = (self.buckets if epoch == self.epoch else None), buckets
        self.epoch = epoch
        if before is None:
            return None
        return {b for b in before.keys() | buckets.keys() if before.get(b) != buckets.get(b)}


async def check(suspects, resyncing, clock=None, *, lost=False):
    """One round: resync sockets that are behind; returns the new ``suspects``.

    ``suspects`` maps a consumer to ``(a number it had not seen, checks it has been missing)``;
    ``resyncing`` maps a consumer to its resync task, so one is never queued twice; ``clock``
    (a :class:`Clock`; Redis only): read only the sessions whose bucket moved (None: all).
    ``lost``: what was published before now may be lost (the subscription reconnected): a
    socket missing a number is resynced now, or, if busy, once idle, without the grace.
    """
    loop = asyncio.get_running_loop()
    moved = None if clock is None else await clock.read()
    if moved is not None and not moved and not suspects:
        return {}  # an idle round: no session to read, and none is looked at
    entries = []
    for session_hex, consumers in direct.registered():
        mine = [c for c in consumers
                if c.loop is loop and getattr(c, "epoch", None) is not None]
        if mine and (moved is None or shared.clock_bucket(session_hex) in moved
                     or any(c in suspects for c in mine)):
            entries.append((session_hex, mine))
    if not entries:
        return {}
    states = await shared.sequence_states([session_hex for session_hex, _ in entries])
    for consumer in [c for c, task in resyncing.items() if task.done()]:
        del resyncing[consumer]
    found = {}
    for (_, consumers), state in zip(entries, states, strict=True):
        if state is None:  # its Redis shard did not answer (A2UI['REDIS_SHARDS']): next round
            found.update((c, suspects[c]) for c in consumers if c in suspects)
            continue
        seq, epoch = state
        for consumer in consumers:
            if consumer in resyncing:
                continue
            missing, checks = suspects.get(consumer, (0, 0))
            if lost and consumer.last_seq < seq:
                missing, checks = max(missing, seq), GRACE_CHECKS
            if epoch != consumer.epoch or seq < consumer.last_seq or (
                    consumer.last_seq < missing and checks >= GRACE_CHECKS
                    and not _busy(consumer)):
                resyncing[consumer] = loop.create_task(consumer.take_direct(stream.resync_message()))
            elif lost and consumer.last_seq < missing:
                found[consumer] = (missing, checks)
            elif consumer.last_seq < missing:
                found[consumer] = (missing, checks + 1)
            elif consumer.last_seq < seq:
                found[consumer] = (seq, 1)
    return found


def _busy(consumer):
    """The consumer is handling a message or holds pushes it has not handled yet
    (``DirectDeliveryMixin``): the missing number may be among them."""
    turn = getattr(consumer, "_turn", None)
    return bool(getattr(consumer, "_deferred", None) or getattr(consumer, "_in_hand", False)
                or (turn is not None and turn.locked()))
