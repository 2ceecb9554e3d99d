"""``resources/subscribe``: ``notifications/resources/updated`` (and ``list_changed``) when an
agent changes a watched session, in whichever process the agent pushed.

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

from ..services import groups, sessions
from . import changes, person, uris

log = logging.getLogger("a2ui.mcp")


class Watcher:
    def __init__(self, session):
        self.session = session  # the SDK's ServerSession: notifications go to its GET stream
        self.subscribed = set()
        self.readers = {}  # session UUID -> (channel, task)
        self.layer = get_channel_layer()

    async def watch(self, session_id):
        if session_id in self.readers:
            return
        # Counted as one of the session's sockets first, so that a push is published to the
        # group instead of handed only to the consumers of the pushing process (direct
        # delivery goes direct only when those are all the session's sockets).
        epoch = await sessions.asocket_opened(session_id)
        channel = await self.layer.new_channel()
        await self.layer.group_add(groups.session_group(session_id), channel)
        task = asyncio.get_running_loop().create_task(self._read(session_id, channel))
        self.readers[session_id] = (channel, task, epoch)

    async def _read(self, session_id, channel):
        while True:
            event = await self.layer.receive(channel)
            changed, listed = changes.affected(event)
            try:
                for kind, item in sorted(changed):
                    kinds = ("components", "apps") if kind == "components" else (kind,)
                    for name in kinds:
                        uri = uris.build(name, session_id, item)
                        if uri in self.subscribed:
                            await self.session.send_resource_updated(uri)
                if listed:
                    await self.session.send_notification(types.ResourceListChangedNotification())
            except Exception:  # the connection went away: its exit stack ends this watcher
                log.debug("a2ui: MCP notification not sent", exc_info=True)

    async def close(self):
        for session_id, (channel, task, epoch) in list(self.readers.items()):
            task.cancel()
            try:
                await self.layer.group_discard(groups.session_group(session_id), channel)
                await sessions.asocket_closed(session_id, epoch)
            except Exception:
                log.warning("a2ui: leaving %s failed", session_id, exc_info=True)
        self.readers.clear()


def _watcher(ctx):
    connection = ctx.session._connection
    watcher = connection.state.get("a2ui_watcher")
    if watcher is None:
        watcher = connection.state["a2ui_watcher"] = Watcher(ctx.session)
        connection.exit_stack.push_async_callback(watcher.close)
    return watcher


async def subscribe(ctx, who, uri):
    ref = uris.parse(uri)
    if ref is None or who.kind != "person":
        raise person.not_found(uri)
    await person.session_or_404(who, ref.session_id, uri)
    watcher = _watcher(ctx)
    await watcher.watch(ref.session_id)
    watcher.subscribed.add(ref.uri())


async def unsubscribe(ctx, who, uri):
    ref = uris.parse(uri)
    if ref is not None:
        _watcher(ctx).subscribed.discard(ref.uri())
