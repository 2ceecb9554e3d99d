"""``resources/subscribe`` (2025-11-25): ``notifications/resources/updated`` (and
``list_changed``) when an agent changes a watched session, in whichever process the agent
pushed. :class:`Watcher` is also what a ``subscriptions/listen`` stream (2026-07-28,
``a2ui.mcp.listen``) reads sessions with.

Each MCP connection that subscribes gets a :class:`Watcher`: per watched session, one
:class:`WatchedSession`, a listener of the session on the one loop every person-side listener
runs (``a2ui.consumers.streams.ChannelListener``): counted as one of the session's sockets while
it lives (the session stays attached), in the session's group (``a2ui.s.<session>``), keeping the
session's order (sequence numbers, epochs, gaps), registered for direct delivery (a push to a
session whose listeners are all in the pushing process, this watcher included, skips the
channel layer) and watched by the sequence watch. It shows the kinds of the MCP adapter
(``a2ui.mcp.adapter``): the events are mapped to resource URIs (``a2ui.mcp.changes``);
subscribed ones get ``notifications/resources/updated`` on the connection's GET stream, and a
component or surface that appears or goes sends ``notifications/resources/list_changed``. A
lost event (a gap, a new epoch) is every subscribed resource of the session updated, and the
list changed: the host reads them again. The watcher ends with the MCP connection (its exit
stack), which leaves the groups and uncounts.
"""

import asyncio
import logging

import mcp_types as types

from a2ui.consumers.streams import ChannelListener
from a2ui.mcp import changes, person, uris

log = logging.getLogger("a2ui.mcp")

#: A watched session has nothing to do while idle; the loop wakes this rarely to check.
IDLE_SECONDS = 3600.0


class WatchedSession(ChannelListener):
    """One session of a :class:`Watcher`: its events, in the session's order, to the watcher."""

    adapter_name = "mcp"
    idle_seconds = IDLE_SECONDS
    client_protocol = "mcp"  # among the session's clients (a2ui.sessions.clients): no catalogs

    def __init__(self, watcher, session_id):
        super().__init__(None, session_id)
        self.watcher = watcher

    async def show(self, kind, message):
        await self.watcher.on_event(self.session_id, message)

    async def send_state(self):
        await self.watcher.on_lost(self.session_id)


class Watcher:
    """Listens to watched sessions and hands each event, with its session, to
    ``on_event(session_id, event)``, and a lost event to ``on_lost(session_id)`` (async
    callables that must not raise)."""

    def __init__(self, on_event, on_lost=None):
        self.on_event = on_event
        self.on_lost = on_lost or _nothing
        self.readers = {}  # session UUID -> (WatchedSession, task)

    def watching(self, session_id):
        return session_id in self.readers

    async def watch(self, session_id):
        """Counted, joined and registered when this returns (or it raised, undone)."""
        if session_id in self.readers:
            return
        listener = WatchedSession(self, session_id)
        loop = listener.listen()
        await loop.__anext__()  # attach: a failure is raised here, and undone by ``listen``
        task = asyncio.get_running_loop().create_task(_drain(loop))
        self.readers[session_id] = (listener, task)

    async def unwatch(self, session_id):
        reader = self.readers.pop(session_id, None)
        if reader is None:
            return
        _, task = reader
        task.cancel()  # ``listen`` leaves: unregisters, leaves the group, uncounts
        await asyncio.wait([task])

    async def close(self):
        for session_id in list(self.readers):
            await self.unwatch(session_id)


async def _drain(loop):
    async for _ in loop:
        pass


async def _nothing(session_id):
    pass


def session_uris(session_id, subscribed):
    """The URIs among ``subscribed`` that are of session ``session_id``, in order."""
    found = []
    for uri in sorted(subscribed):
        ref = uris.parse(uri)
        if ref is not None and ref.session_id == session_id:
            found.append(uri)
    return found


class Subscriptions:
    """``resources/subscribe`` of one MCP connection (2025-11-25): notifications go to the
    SDK's ServerSession, i.e. the connection's GET stream."""

    def __init__(self, session):
        self.session = session
        self.subscribed = set()
        self.watcher = Watcher(self._notify, self._lost)

    async def _notify(self, session_id, event):
        updated, listed = changes.notices(session_id, event, self.subscribed)
        await self._send(updated, listed)

    async def _lost(self, session_id):
        await self._send(session_uris(session_id, self.subscribed), True)

    async def _send(self, updated, listed):
        try:
            for uri in updated:
                await self.session.send_resource_updated(uri)
            if listed:
                await self.session.send_notification(types.ResourceListChangedNotification())
        except Exception:  # the connection went away: its exit stack ends this watcher
            log.debug("a2ui: MCP notification not sent", exc_info=True)


def _watcher(ctx):
    connection = ctx.session._connection
    subs = connection.state.get("a2ui_watcher")
    if subs is None:
        subs = connection.state["a2ui_watcher"] = Subscriptions(ctx.session)
        connection.exit_stack.push_async_callback(subs.watcher.close)
    return subs


async def subscribe(ctx, who, uri):
    ref = uris.parse(uri)
    if ref is None or who.kind != "person":
        raise person.not_found(uri)
    await person.session_or_404(who, ref.session_id, uri)
    subs = _watcher(ctx)
    await subs.watcher.watch(ref.session_id)
    subs.subscribed.add(ref.uri())


async def unsubscribe(ctx, who, uri):
    ref = uris.parse(uri)
    if ref is not None:
        _watcher(ctx).subscribed.discard(ref.uri())
