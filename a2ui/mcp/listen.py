"""``subscriptions/listen`` (2026-07-28, SEP-2575): one request whose SSE response is the
stream of the caller's change notifications, fed across processes by the channel layer.

The SDK's own ``ListenHandler`` fans one bus out to every open stream, filtered only by event
kind and URI; this handler is per caller instead:

* every requested URI is checked against the caller before anything is sent (a person's
  ``stream_mcp`` token: a live session of theirs with that agent, as ``resources/subscribe``
  checks; an agent key reads no session resources, only the test-only conformance fixtures);
  one that is not theirs refuses the whole request with -32602 and ``data.path``
  (``notifications.resourceSubscriptions[i]``), before the acknowledgement;
* the stream reads the channel-layer groups of the sessions it needs (``watch.Watcher``,
  counted as one of each session's sockets while it lives, as a subscription is) and sends
  ``notifications/resources/updated`` for its own URIs only;
* with ``resourcesListChanged`` it watches all of the person's live sessions with the agent
  and the agent's group for sessions opening and closing (a session that opens is checked to
  be the person's before it counts), and sends ``notifications/resources/list_changed`` only
  when that person's resource list changes;
* it ends (gracefully: the ``SubscriptionsListenResult``) when the credential is revoked, when
  the process stops (:func:`close_all`), or when its client stops reading
  (``filters.MAX_BUFFERED`` events waiting). A stream is not resumable: the client listens
  again and refetches, as the SEP says.
"""

import asyncio
import logging
import uuid

import anyio
import mcp_types as types
from channels.layers import get_channel_layer
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import (
    SUBSCRIPTION_ID_META_KEY,
    ResourcesListChanged,
    ResourceUpdated,
    event_to_notification,
)

from a2ui import surfaces as surface_service
from a2ui.core.errors import DomainError
from a2ui.infra import groups, outages
from a2ui.mcp import changes, filters
from a2ui.mcp.watch import Watcher, session_uris
from a2ui.rpc.errors import ErrorCode
from a2ui.sessions import lifecycle as sessions
from a2ui.sessions import presence

log = logging.getLogger("a2ui.mcp")

_open = set()  # the send ends of this process's open streams (close_all)


def close_all():
    """End every open listen stream of this process gracefully (the process stops)."""
    for stream in list(_open):
        stream.close()


async def check(who, plan, fixtures=None):
    """Refuse (``filters.Invalid``) the first requested URI the caller may not read."""
    for index, uri, ref in plan.uris:
        if fixtures is not None and fixtures.is_fixture(uri):
            if fixtures.read(uri) is None:
                raise filters.refused(index)
            continue  # nothing changes them: never notified
        if ref is None or who.kind != "person":
            raise filters.refused(index)
        try:
            await surface_service.acheck_stream_session(who.token, ref.session_id)
        except DomainError:
            raise filters.refused(index) from None


class Feed:
    """The events of one stream: channel-layer groups in, ``ServerEvent``s out."""

    def __init__(self, who, plan, send):
        self.who, self.plan, self.send = who, plan, send
        self.subscribed = plan.subscribed()
        self.watcher = Watcher(self._session_event, self._session_lost)
        self.layer = get_channel_layer()
        self.control = None
        self.control_groups = []
        self.task = None

    def _put(self, event):
        try:
            self.send.send_nowait(event)
        except anyio.WouldBlock:
            log.warning("a2ui: MCP listen stream backlog full; ending it")
            self.send.close()
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass

    async def _session_event(self, session_id, event):
        updated, listed = changes.notices(session_id, event, self.subscribed)
        for uri in updated:
            self._put(ResourceUpdated(uri=uri))
        if listed and self.plan.want_list:
            self._put(ResourcesListChanged())

    async def _session_lost(self, session_id):
        """An event of the session was lost (a gap, a new epoch): all of it may have changed."""
        for uri in session_uris(session_id, self.subscribed):
            self._put(ResourceUpdated(uri=uri))
        if self.plan.want_list:
            self._put(ResourcesListChanged())

    async def start(self):
        who = self.who
        if who.kind == "person":
            self.control_groups.append(groups.token_group(who.token.jti))
            if self.plan.want_list:
                self.control_groups.append(groups.agent_group(who.token.agent_id))
        else:
            self.control_groups.append(groups.agent_key_group(who.agent))
        self.control = await self.layer.new_channel()
        for group in self.control_groups:
            await self.layer.group_add(group, self.control)
        if who.kind != "person":  # an agent listening is the agent being there (presence)
            await presence.ajoin(who.agent.id, self.control)
        self.task = asyncio.get_running_loop().create_task(self._read_control())
        # Joined the agent's group first: a session opening from here on is announced.
        wanted = self.plan.sessions()
        if who.kind == "person" and self.plan.want_list:
            wanted |= {row["session_id"] for row in
                       await sessions.aperson_sessions(who.token.user_id, who.token.agent_id)}
        for session_id in wanted:
            await self.watcher.watch(session_id)

    async def _read_control(self):
        while True:
            event = await self.layer.receive(self.control)
            try:
                await self._control_event(event)
            except Exception:
                outages.warning(log, "MCP listen event",
                                "a2ui: MCP listen: an event was not handled")

    async def _control_event(self, event):
        if event.get("type") == "a2ui.close":  # the token or the key was revoked
            self.send.close()
            return
        notice = changes.session_notice(event)
        if notice is None or self.who.kind != "person" or not self.plan.want_list:
            return
        what, raw = notice
        try:
            session_id = uuid.UUID(raw)
        except ValueError:
            return
        if what == "closed":
            if self.watcher.watching(session_id):
                self._put(ResourcesListChanged())
                if session_id not in self.plan.sessions():
                    await self.watcher.unwatch(session_id)
            return
        if self.watcher.watching(session_id):
            return
        try:  # another person's session of the same agent is none of this stream's business
            await surface_service.acheck_stream_session(self.who.token, session_id)
        except DomainError:
            return
        await self.watcher.watch(session_id)
        self._put(ResourcesListChanged())

    async def close(self):
        if self.task is not None:
            self.task.cancel()
        if self.control is not None:
            await presence.aleave(self.control)
            for group in self.control_groups:
                try:
                    await self.layer.group_discard(group, self.control)
                except Exception:
                    outages.warning(log, "leaving a group", "a2ui: leaving %s failed", group)
        await self.watcher.close()


async def serve(ctx, who, params, fixtures=None):
    """Serve one listen stream: check, acknowledge, forward until it ends."""
    subscription_id = ctx.request_id
    if subscription_id is None:
        raise MCPError(int(ErrorCode.INVALID_REQUEST), "subscriptions/listen requires a request id")
    wanted = params.notifications
    try:
        plan = filters.plan(wanted.resources_list_changed, wanted.resource_subscriptions)
        await check(who, plan, fixtures)
    except filters.Invalid as exc:
        raise MCPError(exc.code, exc.message, exc.data) from None
    meta = {SUBSCRIPTION_ID_META_KEY: subscription_id}
    send, recv = anyio.create_memory_object_stream(filters.MAX_BUFFERED)
    feed = Feed(who, plan, send)
    _open.add(send)
    try:
        await feed.start()
        honored = types.SubscriptionFilter.model_validate(plan.honored())
        await ctx.session.send_notification(
            types.SubscriptionsAcknowledgedNotification(
                params=types.SubscriptionsAcknowledgedNotificationParams(
                    notifications=honored, _meta=meta)),
            related_request_id=subscription_id)
        async with recv:
            async for event in recv:
                await ctx.session.send_notification(
                    event_to_notification(event, meta), related_request_id=subscription_id)
    finally:
        _open.discard(send)
        send.close()
        with anyio.CancelScope(shield=True):  # the client went away: still leave the groups
            await feed.close()
    return types.SubscriptionsListenResult(_meta=meta)
