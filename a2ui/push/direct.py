"""Direct delivery: a push for a session whose sockets are all in this process skips the layer.

Why: through the channel layer a push costs a PUBLISH, the pubsub read of it, and a wake-up of
every receiving consumer's dispatch loop (a task and an ``asyncio.wait`` per message). When the
sender and every open socket of the session share a process, which is the common case with one
Daphne process and one in N with N, the sender hands the event to those consumers itself
(docs/performance.md has the figures).

The rules that keep it exactly as safe as the group send:

* **No socket missed.** A socket counts itself in the shared open-socket count
  (``shared.socket_opened``) before it joins the session group and reads its snapshot, registers
  here only once the snapshot is out, and unregisters before it uncounts. So when the count
  equals the sockets registered here, no counted socket is elsewhere; one not counted yet reads
  its snapshot after the sender stored the change, as with the group send.
* **Order kept.** This process remembers, for a minute, the newest sequence number it published
  to each session's group (before publishing it); until every consumer here has seen it, pushes
  keep going through the layer, so a direct push never overtakes a published one still in
  flight; the collection after sockets closed forgets sooner those of sessions no consumer
  here watches (:func:`forget_unwatched`). (Pushes from senders in other processes are
  concurrent with ours, as they are with the group send alone: the sequence numbers and resync
  cover them.)
* **One message at a time per socket.** A consumer takes a direct push only when it is idle (see
  ``consumers.base.DirectDeliveryMixin``); otherwise the push waits in the consumer's own queue
  and is handled right after its current message.

Anything else (the count unknown, a socket of another kind, ``A2UI['DIRECT_DELIVERY']`` off)
falls back to the group send.
"""

import asyncio
import time

from a2ui.conf import a2ui_settings
from a2ui.infra import memory

#: A publish older than this has arrived or is lost; it can no longer be overtaken.
IN_FLIGHT_SECONDS = 60.0
#: At the collection after sockets closed, a publish this old to a session no consumer here is
#: registered for is forgotten (:func:`forget_unwatched`).
SETTLED_SECONDS = 5.0

_sessions = {}  # session hex -> [consumers], only sessions with a registered consumer here
_published = {}  # session hex -> (newest seq published from here, time.monotonic() of it)
_next_prune = [0.0]


def register(session_hex, consumer):
    """``consumer`` (counted already, snapshot sent) takes direct pushes from now on.

    It needs ``loop`` (the event loop it runs on), ``last_seq`` (the newest sequence number it
    has handled) and ``take_direct(event)``.
    """
    _sessions.setdefault(session_hex, []).append(consumer)


def unregister(session_hex, consumer):
    """Called before the socket is uncounted; unknown consumers are ignored."""
    consumers = _sessions.get(session_hex)
    if consumers is None or consumer not in consumers:
        return
    consumers.remove(consumer)
    if not consumers:
        del _sessions[session_hex]


def consumers_of(session_hex):
    """The consumers registered here for the session (a list; empty when none or when
    ``A2UI['DIRECT_DELIVERY']`` is off): a published push arriving at this process is handed
    to them the same way (``a2ui.layer``)."""
    if not a2ui_settings.DIRECT_DELIVERY:
        return ()
    return _sessions.get(session_hex, ())


def any_registered():
    """True while a consumer is registered here (of any session)."""
    return bool(_sessions)


def registered():
    """``[(session hex, [consumers])]`` of every session with a consumer registered here."""
    return [(key, list(consumers)) for key, consumers in _sessions.items()]


def wanted(session_hex):
    """True when a direct push is possible at all, so the sender should read the socket count."""
    return session_hex in _sessions and a2ui_settings.DIRECT_DELIVERY


async def deliver(session_hex, socket_count, event):
    """Hand ``event`` (an ``a2ui.push`` with ``seq``) to this process's consumers of the session.

    Returns False, having done nothing, when the push must go through the channel layer; the
    caller then publishes it and reports that with ``published``.
    """
    consumers = _sessions.get(session_hex)
    if consumers is None or socket_count != len(consumers):
        return False
    loop = asyncio.get_running_loop()
    for consumer in consumers:
        if consumer.loop is not loop:  # a sender on another thread's loop: use the layer
            return False
    published = _published.get(session_hex)
    if published is not None:
        for consumer in consumers:
            if consumer.last_seq < published[0]:
                return False
    for consumer in tuple(consumers):
        await consumer.take_direct(event)
    return True


def published(session_hex, seq):
    """This process is about to publish push ``seq`` to the session's group."""
    now = time.monotonic()
    previous = _published.get(session_hex)
    if previous is None or seq > previous[0]:
        _published[session_hex] = (seq, now)
    if now >= _next_prune[0]:
        _prune(now)


def _prune(now):
    """Drop publishes older than IN_FLIGHT_SECONDS (at most once per IN_FLIGHT_SECONDS)."""
    _next_prune[0] = now + IN_FLIGHT_SECONDS
    cutoff = now - IN_FLIGHT_SECONDS
    for key in [k for k, (_, at) in _published.items() if at < cutoff]:
        del _published[key]


def forget_unwatched():
    """Forget the publishes of SETTLED_SECONDS ago or more to sessions that no consumer here is
    registered for (``a2ui.infra.memory``, at the collection after sockets closed).

    Pruning by age happens only when the next publish comes, so after a mass close the
    publishes of the last minute stayed: an entry each (its key, tuple and float), made while
    the sockets were busy and so scattered over the pages they used, each page kept from the
    trim by it (2,000 AG-UI 1.0 runs left 1,503, and RSS 1.16 of before instead of 1.07:
    docs/performance.md). An entry only holds back direct pushes to the session's consumers
    here (:func:`deliver`); a consumer that registers for the session later and is overtaken
    by a publish still in flight after that long sees a gap and resyncs."""
    cutoff = time.monotonic() - SETTLED_SECONDS
    for key in [k for k, (_, at) in _published.items() if at <= cutoff and k not in _sessions]:
        del _published[key]


def registries():
    """What grows with the sessions of this process (``memory.shrink``)."""
    return [_sessions, _published]


memory.register(registries)
memory.on_collect(forget_unwatched)


def clear():
    """Forget every registration and publish (tests)."""
    _sessions.clear()
    _published.clear()
    _next_prune[0] = 0.0
