"""A session's event stream: number each event and deliver it to every socket of the session.

Every change a person can see goes through here as one ``a2ui.core.events`` event: it takes
the session's next sequence number (``shared``: one Redis round trip, which also reads the
open-socket count), then goes straight to this process's consumers when they are all the
session has (``direct``), else as one group send to ``a2ui.s.<session>``. Each protocol's
consumers translate the kinds they know and ignore the rest; all of them see every number, so
a gap means a loss whatever the kind.
"""

from ..core import events
from . import direct, groups, shared


async def emit(sid, kind, data):
    """Number and deliver one event of session ``sid`` (a UUID); returns its sequence number."""
    seq, epoch, sockets = await shared.next_seq_and_sockets(sid.hex, direct.wanted(sid.hex))
    await send(sid, seq, sockets, events.to_message(kind, data, seq, epoch))
    return seq


async def send(sid, seq, sockets, message):
    """Straight to this process's consumers when they are all the session has, else the group."""
    if sockets is not None and await direct.deliver(sid.hex, sockets, message):
        return
    direct.published(sid.hex, seq)  # before the publish: a direct push must not overtake it
    await groups.send_group(groups.session_group(sid), message)


def resync_message():
    """Tells a socket to resend its session's state from the database (``seqwatch``).

    It travels the consumer's own queue, in order with the events, never the channel layer.
    """
    return {"type": events.MESSAGE_TYPE, "resync": True}
