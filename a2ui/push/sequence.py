"""Stage 5 of a push: the session's next sequence number. The only place events are numbered.

Every event a person can see takes the session's next number (with its *epoch*, which
changes when Redis lost the counter), so all of a session's events, whatever their kind, have
one place in one order and a client that sees a gap or a new epoch resyncs. One round trip
(``a2ui.infra.shared``: Redis, or process-local dicts without it) also reads what the
fan-out needs: the open-socket count (for direct delivery) and the session's attached
clients (for the answer).
"""

from a2ui.infra import shared
from a2ui.push import direct


async def take(sid, clients=False):
    """``(seq, epoch, open sockets or None[, client members])`` of the next event of session
    ``sid`` (a UUID). The socket count is read only when a direct push is possible."""
    return await shared.next_seq_and_sockets(sid.hex, direct.wanted(sid.hex), clients)


async def take_owned(sid):
    """``(cached owner or None, seq, epoch, open sockets or None, client members)``: the
    owner check of a stateless push and its number in one round trip (a number taken for a
    session that then fails the check is never sent; only a session that is not live, or not
    the agent's, fails it, and such a session has no socket to see the gap)."""
    return await shared.cached_session_and_next_seq(sid.hex, direct.wanted(sid.hex),
                                                    clients=True)
