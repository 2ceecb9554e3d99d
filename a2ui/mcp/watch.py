"""``resources/subscribe`` (2025-11-25): ``notifications/resources/updated`` (and
``list_changed``) when an agent changes a watched session, in whichever process the agent
pushed. :class:`Watcher` is also what a ``subscriptions/listen`` stream (2026-07-28,
``a2ui.mcp.listen``) reads sessions with.

Each MCP connection that subscribes gets a :class:`Watcher`: per watched session, one fresh
channel of the channel layer in the session's group (``a2ui.s.<session>``, the group every
user socket of the session is in) and a task reading it. A watcher counts as one of the
session's sockets (``sessions.asocket_opened``) while it lives: the session stays attached,
and pushes are published rather than delivered only to the pushing process's sockets. The events are mapped to resource URIs
(``a2ui.mcp.changes``); subscribed ones get ``notifications/resources/updated`` on the
connection's GET stream, and a component or surface that appears or goes sends
``notifications/resources/list_changed``. The watcher ends with the MCP connection (its exit
stack), which leaves the groups.
"""

import asyncio
import logging

import mcp_types as types
from channels.layers import get_channel_layer

from ..services import groups, outages, sessions
from . import changes, person, uris

log = logging.getLogger("a2ui.mcp")


class Watcher:
    """Reads the channel-layer groups of watched sessions and hands each event, with its
    session, to ``on_event(session_id, event)`` (an async callable that must not raise)."""

    def __init__(self, on_event):
        self.on_event = on_event
        self.readers = {}  # session UUID -> (channel, task, epoch)
        self.layer = get_channel_layer()

    def watching(self, session_id):
        return session_id in self.readers

    async def watch(self, session_id):
        if session_id in self.readers:
            return
        # Counted as one of the session's sockets first, so that a push is published to the
        # group instead of handed only to the consumers of the pushing process (direct
        # delivery goes direct only when those are all the session's sockets).
        epoch = await sessions.asocket_opened(session_id)
        try:
            channel = await self.layer.new_channel()
            await self.layer.group_add(groups.session_group(session_id), channel)
        except BaseException:
            await sessions.asocket_closed(session_id, epoch)
            raise
        task = asyncio.get_running_loop().create_task(self._read(session_id, channel))
        self.readers[session_id] = (channel, task, epoch)

    async def _read(self, session_id, channel):
        while True:
            event = await self.layer.receive(channel)
            await self.on_event(session_id, event)

    async def unwatch(self, session_id):
        reader = self.readers.pop(session_id, None)
        if reader is None:
            return
        channel, task, epoch = reader
        task.cancel()
        try:
            await self.layer.group_discard(groups.session_group(session_id), channel)
            await sessions.asocket_closed(session_id, epoch)
        except Exception:
            outages.warning(log, "leaving a session", "a2ui: leaving %s failed", session_id,
                            session=session_id)

    async def close(self):
        for session_id in list(self.readers):
            await self.unwatch(session_id)


class Subscriptions:
    """``resources/subscribe`` of one MCP connection (2025-11-25): notifications go to the
    SDK's ServerSession, i.e. the connection's GET stream."""

    def __init__(self, session):
        self.session = session
        self.subscribed = set()
        self.watcher = Watcher(self._notify)

    async def _notify(self, session_id, event):
        updated, listed = changes.notices(session_id, event, self.subscribed)
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
