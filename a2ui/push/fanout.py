"""Stage 6 of a push, the fan-out: hand a numbered event to every client of its session.

Straight to this process's consumers when they are all the session has (``a2ui.push.direct``),
else one publish to the session's group ``a2ui.s.<session>`` on the channel layer, which every
process holding one of its clients reads. Before it leaves, an event of a kind replay folds is
kept for the compliance replay (``a2ui.compliance.replay``: the replay hook), and the current
trace context rides along (``a2ui.infra.tracing``). Each protocol's listener shows the kinds it
knows and drops the rest; all of them see every number, so a gap means a loss whatever the
kind.

:func:`emit` is the whole of stages 5 and 6 for an event that has no store of its own to wait
for (a request closed, a consent prompt, a component expired); :func:`repair` makes every
client of a session resync when a stored push could not be sent.
"""

import asyncio
import logging

from a2ui.compliance import replay as replaylog
from a2ui.core import events, replay
from a2ui.infra import groups, outages, prom, tracing
from a2ui.push import direct, sequence
from a2ui.push.outcome import Sent, reached
from a2ui.sessions import clients as registry

log = logging.getLogger("a2ui.services")


async def emit(sid, kind, data, clients=False):
    """Number and send one event of session ``sid`` (a UUID); returns its sequence number, or
    with ``clients`` a :class:`~a2ui.push.outcome.Sent` (the number with the session's
    attached clients, read in the same round trip, for a push's answer)."""
    seq, epoch, sockets, *members = await sequence.take(sid, clients)
    await send(sid, seq, sockets, events.to_message(kind, data, seq, epoch))
    return sent(seq, kind, members[0]) if clients else seq


def sent(seq, kind, members):
    """The :class:`Sent` of event ``seq`` of ``kind`` given the session's client members."""
    attached = registry.count(members)
    return Sent(seq, attached, reached(kind, attached))


async def send(sid, seq, sockets, message):
    """Straight to this process's consumers when they are all the session has, else the group.

    An event of a kind replay folds is kept (the replay hook); the current trace context rides
    along in the message (``tracing.inject``; none when off)."""
    if message.get("kind") in replay.KINDS:
        await replaylog.arecord(sid, seq, message["kind"], message["data"])
    tracing.inject(message)
    if sockets is not None and await direct.deliver(sid.hex, sockets, message):
        return
    direct.published(sid.hex, seq)  # before the publish: a direct push must not overtake it
    await groups.send_group_soon(groups.session_group(sid), message,
                                 lambda exc: _not_published(sid, exc))


def _not_published(sid, exc):
    """A publish Redis did not take (its connection died under it): the sockets resync."""
    outages.tally(exc)
    log.warning("a2ui: a push to session %s was not published (%s: %s): its clients resync",
                sid, type(exc).__name__, exc)
    repair(sid)


def resync_message():
    """Tells a socket to resend its session's state from the database (``seqwatch``).

    It travels the consumer's own queue, in order with the events, never the channel layer.
    """
    return {"type": events.MESSAGE_TYPE, "resync": True}


#: ``repair``: tries, a second apart, while Redis or the channel layer fail.
REPAIR_TRIES = 120
REPAIR_INTERVAL = 1.0
_repairs = {}  # (event loop, session hex) -> its repair task


def repair(sid):
    """Have every socket of session ``sid`` resync from the database, in the background.

    For a push whose outcome the clients may not have seen (stored, then not delivered; or
    stored or not, unknown): it takes a sequence number (a gap, which ``seqwatch`` also finds)
    and sends a resync order to the session, so each socket shows the stored state, with the
    push exactly when it is stored. Retried while Redis or the channel layer fail; at most one
    per session at a time.
    """
    if prom.ON:
        prom.repairs.add()
    loop = asyncio.get_running_loop()
    key = (loop, sid.hex)  # per loop: a loop that ended (async_to_sync) never finishes its task
    if key in _repairs:
        return _repairs[key]
    task = loop.create_task(_repair(sid))
    _repairs[key] = task
    task.add_done_callback(lambda _: _repairs.pop(key, None))
    return task


async def _repair(sid):
    for _ in range(REPAIR_TRIES):
        try:
            seq, _, sockets = await sequence.take(sid)
            await send(sid, seq, sockets, resync_message())
            return True
        except Exception:
            await asyncio.sleep(REPAIR_INTERVAL)
    log.warning("a2ui: session %s could not be told to resync: its sockets show a push when "
                "they next resync or reconnect", sid)
    return False
