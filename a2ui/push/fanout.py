"""A session's event stream: number each event and deliver it to every socket of the session.

Every change a person can see goes through here as one ``a2ui.core.events`` event: it takes
the session's next sequence number (``shared``: one Redis round trip, which also reads the
open-socket count), then goes straight to this process's consumers when they are all the
session has (``direct``), else as one group send to ``a2ui.s.<session>``. Each protocol's
consumers translate the kinds they know and ignore the rest; all of them see every number, so
a gap means a loss whatever the kind.
"""

import asyncio
import logging

from a2ui.compliance import replay as replaylog
from a2ui.core import events, replay
from a2ui.infra import groups, prom, shared, tracing
from a2ui.push import direct
from a2ui.sessions.clients import Sent, count

log = logging.getLogger("a2ui.services")


async def emit(sid, kind, data, clients=False):
    """Number and deliver one event of session ``sid`` (a UUID); returns its sequence number.

    ``clients``: a ``clients.Sent``, the number with the session's attached clients per
    protocol (read in the same round trip), for the push's answer.
    """
    seq, epoch, sockets, *members = await shared.next_seq_and_sockets(
        sid.hex, direct.wanted(sid.hex), clients)
    await send(sid, seq, sockets, events.to_message(kind, data, seq, epoch))
    return Sent(seq, count(members[0])) if clients else seq


async def send(sid, seq, sockets, message):
    """Straight to this process's consumers when they are all the session has, else the group.

    An event of a kind replay folds is kept (``replaylog``); the current trace context rides
    along in the message (``tracing.inject``; none when off)."""
    if message.get("kind") in replay.KINDS:
        await replaylog.arecord(sid, seq, message["kind"], message["data"])
    tracing.inject(message)
    if sockets is not None and await direct.deliver(sid.hex, sockets, message):
        return
    direct.published(sid.hex, seq)  # before the publish: a direct push must not overtake it
    await groups.send_group(groups.session_group(sid), message)


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
            seq, _, sockets = await shared.next_seq_and_sockets(sid.hex, direct.wanted(sid.hex))
            await send(sid, seq, sockets, resync_message())
            return True
        except Exception:
            await asyncio.sleep(REPAIR_INTERVAL)
    log.warning("a2ui: session %s could not be told to resync: its sockets show a push when "
                "they next resync or reconnect", sid)
    return False
