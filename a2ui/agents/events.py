"""What an agent running inside a Django process hears: the notifications an agent socket would
get (:class:`AgentEvents`, ``agents.events``) and the person's v0.9 actions
(:class:`SurfaceEvents`, ``agents.surface_events``), across every process."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from channels.layers import get_channel_layer
from django.utils import timezone

from a2ui.infra import groups
from a2ui.rpc.answers import AgentEvent, SurfaceEvent
from a2ui.sessions import agentroute, presence
from a2ui.sessions import lifecycle as sessions

if TYPE_CHECKING:
    from typing import Self
    from uuid import UUID

    from a2ui.models import Agent

#: ``events="one"`` (a session's events reach one socket or listener of the agent) or
#: ``"all"`` (an observer of every session).
Mode = Literal["one", "all"]


def _agent_id(agent: Agent | int) -> int:
    return agent if isinstance(agent, int) else agent.pk


class AgentEvents:
    """The notifications an agent socket would get (session.opened, user.cancel, ...), as an
    async iterator of ``{"method", "params"}``, across every process (a channel-layer group)::

        async with agents.events(agent) as events:
            async for event in events:          # or: await events.next(timeout=30)
                if event["method"] == "session.opened": ...

    Like a socket, a listener in the default mode ``events="one"`` gets a session's events only
    while no other socket or listener of the agent holds that session (``agentroute``): run the
    same agent twice and each session's events reach one of them. ``events="all"`` observes
    everything. Pass ``session_id`` to see only that session's events.
    """

    methods: ClassVar[frozenset[str] | None] = None  # every method

    def __init__(self, agent: Agent | int, session_id: UUID | str | None = None, *,
                 events: Mode = agentroute.ONE) -> None:
        if events not in agentroute.MODES:
            raise ValueError("events must be 'one' or 'all'")
        self.agent_id = _agent_id(agent)
        self.group = groups.agent_group(self.agent_id)
        # the sessions it is told of on start (sessions.aannouncements)
        self.backlog: list[dict[str, Any]] = []
        self.session_id = str(session_id) if session_id is not None else None
        self.mode = events
        self.layer: Any = get_channel_layer()
        self.channel: str | None = None
        # each session told once, as the backlog's session.resumed or its own notice
        self.told_once = sessions.ToldOnce(0.0)

    async def start(self) -> Self:
        if self.channel is None:
            # The default prefix: channels_redis reads one "specific." queue per process, and a
            # channel of another prefix would wait behind the sockets' reader forever.
            self.channel = await self.layer.new_channel()
            listening_since = timezone.now()
            self.told_once = sessions.ToldOnce(listening_since.timestamp())
            await agentroute.ajoin(self.channel, self.mode)
            await self.layer.group_add(self.group, self.channel)
            await presence.ajoin(self.agent_id, self.channel)  # the agent's people are told
            if self.methods is None or "session.resumed" in self.methods:
                # As a socket is: the live sessions nobody else of the agent holds, first.
                self.backlog = [
                    {"method": "session.resumed", "params": p}
                    for p in self.told_once.announce(await sessions.aannouncements(
                        self.agent_id, self.channel, self.mode, listening_since))
                    if self.session_id is None or p["session_id"] == self.session_id]
        return self

    async def stop(self) -> None:
        if self.channel is not None:
            await presence.aleave(self.channel)
            await self.layer.group_discard(self.group, self.channel)
            await agentroute.aleave(self.channel)
            self.channel = None

    async def __aenter__(self) -> Self:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> AgentEvent:
        await self.start()
        if self.backlog:
            return self.item(self.backlog.pop(0))
        while True:
            event = await self.layer.receive(self.channel)
            if event.get("type") != "a2ui.agent_event":
                continue
            if self.methods is not None and event.get("method") not in self.methods:
                continue
            params = event["params"]
            if self.session_id is not None and params.get("session_id") != self.session_id:
                continue
            if (await agentroute.atake(self.agent_id, self.channel, self.mode, event)
                    and self.told_once.relayed(event)):
                return self.item(event)

    def item(self, event: dict[str, Any]) -> AgentEvent:
        return {"method": event["method"], "params": event["params"]}

    async def next(self, timeout: float | None = None) -> AgentEvent:
        """The next event, waiting at most ``timeout`` seconds (TimeoutError)."""
        return await asyncio.wait_for(self.__anext__(), timeout)


class SurfaceEvents(AgentEvents):
    """The person's v0.9 actions and errors for one agent, as an async iterator.

    Each item is the ``a2ui.v09`` notification's params: ``{"session_id", "messages": [...],
    "dataModel"?}``. Listening starts on ``async with`` (or the first ``async for``) and covers
    every process (a channel-layer group)::

        async with agents.surface_events(agent) as events:
            await agents.asurfaces(agent, sid, booking_surface())
            async for event in events:
                for message in event["messages"]:
                    if "action" in message: ...

    Pass ``session_id`` to see only that session's events. An observer: it gets every action
    of the agent whichever socket holds the session (``events="one"`` to take part instead).
    """

    methods = frozenset({"a2ui.v09"})

    def __init__(self, agent: Agent | int, session_id: UUID | str | None = None, *,
                 events: Mode = agentroute.ALL) -> None:
        super().__init__(agent, session_id, events=events)

    # Its items are the notification's params: the type checker is told so (the methods are
    # AgentEvents' at run time).
    def item(self, event: dict[str, Any]) -> SurfaceEvent:  # type: ignore[override]
        return event["params"]

    if TYPE_CHECKING:
        async def __anext__(self) -> SurfaceEvent: ...  # type: ignore[override]

        async def next(self, timeout: float | None = None) -> SurfaceEvent: ...  # type: ignore[override]


def events(agent: Agent | int, session_id: UUID | str | None = None, *,
           events: Mode = agentroute.ONE) -> AgentEvents:
    """The notifications an agent socket would get, as an async iterator (:class:`AgentEvents`)."""
    return AgentEvents(agent, session_id, events=events)


def surface_events(agent: Agent | int, session_id: UUID | str | None = None, *,
                   events: Mode = agentroute.ALL) -> SurfaceEvents:
    """The person's v0.9 actions and errors, as an async iterator (:class:`SurfaceEvents`)."""
    return SurfaceEvents(agent, session_id, events=events)
