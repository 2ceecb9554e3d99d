"""A small asyncio client for agents that live outside Django: the agent WebSocket in Python.

    async with AgentClient("ws://127.0.0.1:8000/ws/v4/a2ui/agent", key) as agent:
        agent.on("session.opened", handle_new_session)
        await agent.render(session_id, "card", {"title": "Hello"})
        name = await agent.request_input(session_id, "text", "Your name?")

Requests get their JSON-RPC response (the user's answer for ``request_input``/``confirm``);
notifications from the server (session.opened, session.closed, user.cancel, consent.changed,
user.respond for form components, a2ui.v09 actions, a person's chat ``user.message`` and
``user.action``: ``on_message`` / ``on_action``) go to handlers registered with ``on``.
AG-UI activity (chat, tool calls, state deltas, plans, tree, roster, artifacts) goes out with
``agui_event`` (``say`` for a chat message). A call or notification on a socket that closed
raises ``ConnectionError``. Needs the ``websockets`` package.

After a reconnect (the process that held the old socket died while a request waited; the
server then opens with an ``a2ui.pending`` ``{"outcomes": n}`` notification), call
``pending()``: it returns what waits for the agent, hands this socket the answers nobody
received, and moves the still-open requests here; ``wait_request(session_id, request_id)``
then returns the answer of such a request when the person gives it::

    for item in await agent.pending():
        if item["status"] == "pending":
            answer = await agent.wait_request(item["session_id"], item["request_id"])
        elif item["status"] == "answered":
            answer = item["answer"]

``reconnect=True``: ``connect()`` retries until the server answers and, each time the socket
closes (a server restart), connects again with backoff and jitter (0.5 s doubling up to
``max_backoff``); calls wait for the new socket; waiting questions and pushes with an
``idempotency_key`` are sent again as they were (a retry: nothing asked or shown twice), other
calls in flight raise ``ConnectionError``; sessions come back as ``session.resumed``. A refused
key (close 4006) ends it (``closed`` set). docs/agents.md, "A complete agent"."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any, cast

from a2ui.rpc.answers import Approval, Delivered, PendingItem, RunEnd, SurfacesDelivered
from a2ui.rpc.errors import REQUEST_CANCELLED, ProtocolError
from a2ui.sdk.connection import (  # noqa: F401 (re-exported)
    KEY_REFUSED,
    RESENT,
    Connection,
    Handler,
    _Outcome,
)


def _keyed(params: dict[str, Any], idempotency_key: str | None) -> dict[str, Any]:
    if idempotency_key is not None:
        params["idempotency_key"] = idempotency_key
    return params


class AgentClient(Connection):
    """An agent's calls on its socket (:class:`Connection`): pushes, questions, runs."""

    # The seven ui.* methods ------------------------------------------------------------------

    # Every push takes ``idempotency_key=`` (progress and toast through ``**extra``): a retry
    # with the same key, on this socket or a new one, is answered ``{"delivered": true,
    # "seq": null, "replayed": true}`` and shows nothing twice (docs/agents.md, "Retrying").

    async def render(self, session_id: str, component_type: str, data: dict[str, Any], *,
                     component_id: str | None = None, metadata: dict[str, Any] | None = None,
                     idempotency_key: str | None = None) -> str:
        """Render a component; return its ``component_id``."""
        if component_id is None:
            component_id = (uuid.uuid4().hex if idempotency_key is None else
                            uuid.uuid5(uuid.NAMESPACE_URL, f"a2ui:push:{idempotency_key}").hex)
        params = _keyed({"session_id": session_id, "component_id": component_id,
                         "component_type": component_type, "data": data}, idempotency_key)
        if metadata:
            params["metadata"] = metadata
        await self.call("ui.render", params)
        return cast(str, params["component_id"])

    async def update(self, session_id: str, component_id: str, data: dict[str, Any],
                     operation: str = "merge", *,
                     idempotency_key: str | None = None) -> Delivered:
        return await self.call("ui.update", _keyed({"session_id": session_id,
                                                    "component_id": component_id,
                                                    "operation": operation, "data": data},
                                                   idempotency_key))

    async def request_input(self, session_id: str, input_type: str, prompt: str,
                            **extra: Any) -> Any:
        """Return the person's answer (a JSON value, as the input type gives it)."""
        params = {"session_id": session_id, "request_id": uuid.uuid4().hex,
                  "input_type": input_type, "prompt": prompt, **extra}
        return await self.call("ui.request_input", params)

    async def confirm(self, session_id: str, title: str, **extra: Any) -> Approval:
        """Return ``{"approved", "reason"}``; a timeout returns approved False."""
        params = {"session_id": session_id, "request_id": uuid.uuid4().hex, "title": title,
                  **extra}
        try:
            return await self.call("ui.confirm", params)
        except ProtocolError as exc:
            if exc.code == -32004:
                return {"approved": False, "reason": "timeout"}
            raise

    async def progress(self, session_id: str, task_id: str,
                       progress_type: str = "determinate", **extra: Any) -> Delivered:
        return await self.call("ui.progress", {"session_id": session_id, "task_id": task_id,
                                               "progress_type": progress_type, **extra})

    async def navigate(self, session_id: str, url: str, new_tab: bool = False, *,
                       idempotency_key: str | None = None) -> Delivered:
        return await self.call("ui.navigate", _keyed({"session_id": session_id, "url": url,
                                                      "new_tab": new_tab}, idempotency_key))

    async def toast(self, session_id: str, title: str, level: str = "info",
                    **extra: Any) -> Delivered:
        return await self.call("ui.notify", {"session_id": session_id, "level": level,
                                             "title": title, **extra})

    async def surfaces(self, session_id: str, messages: list[dict[str, Any]], *,
                       idempotency_key: str | None = None) -> SurfacesDelivered:
        """Send A2UI v0.9 server messages for the session's surfaces."""
        return await self.call("a2ui.v09", _keyed({"session_id": session_id,
                                                   "messages": messages}, idempotency_key))

    async def agui_event(self, session_id: str, event: dict[str, Any], *,
                         idempotency_key: str | None = None) -> Delivered:
        """Push one AG-UI-native event (seed 003: TEXT_MESSAGE, TOOL_CALL_*, STATE_DELTA,
        PLAN_CARD, RESOURCE_TREE, AGENT_ROSTER, ARTIFACT_*): ``{"delivered", "seq"}``."""
        return await self.call("agui.event", _keyed({"session_id": session_id, "event": event},
                                                    idempotency_key))

    async def say(self, session_id: str, content: str, sender: str = "agent", *,
                  idempotency_key: str | None = None, **extra: Any) -> Delivered:
        """A chat message of the agent in the session's transcript (TEXT_MESSAGE)."""
        return await self.agui_event(session_id, {"type": "TEXT_MESSAGE", "sender": sender,
                                                  "content": content, **extra},
                                     idempotency_key=idempotency_key)

    def on_message(self, handler: Handler) -> None:
        """Call ``handler(params)`` for each chat message of a person (``user.message``:
        ``{session_id, user, sender, content, metadata?}``)."""
        self.on("user.message", handler)

    def on_action(self, handler: Handler) -> None:
        """Call ``handler(params)`` for each other action of a person (``user.action``:
        ``{session_id, action_type, component_id, payload?}``)."""
        self.on("user.action", handler)

    async def sessions(self) -> list[dict[str, Any]]:
        """The agent's live sessions."""
        return cast(list[dict[str, Any]], (await self.call("a2ui.sessions", {}))["sessions"])

    async def finish_run(self, session_id: str, run_id: str, result: Any = None) -> RunEnd:
        """End an AG-UI run (``agui.run_started``): RUN_FINISHED, with ``result`` if given.
        ``{"ended": true, "delivered": bool, "seq": n}``: ``delivered`` false when the run's
        stream was lost (the client did not receive the end)."""
        params: dict[str, Any] = {"session_id": session_id, "run_id": run_id}
        if result is not None:
            params["result"] = result
        return await self.call("agui.run_finish", params)

    async def error_run(self, session_id: str, run_id: str, message: str,
                        code: str | None = None) -> RunEnd:
        """End an AG-UI run as failed: RUN_ERROR ``message`` (``code`` optional)."""
        params = {"session_id": session_id, "run_id": run_id, "message": message}
        if code is not None:
            params["code"] = code
        return await self.call("agui.run_error", params)

    async def pending(self, session_id: str | None = None) -> list[PendingItem]:
        """What waits for this agent (``a2ui.pending``); this socket takes it over.

        Items: ``{session_id, request_id, method, params, status, created_at, deadline}``, with
        ``answer`` and ``resolved_at`` once resolved. Outcomes listed here are this socket's
        (no other socket gets them); open requests now answer here (see ``wait_request``).
        """
        params = {} if session_id is None else {"session_id": session_id}
        return cast(list[PendingItem], (await self.call("a2ui.pending", params))["requests"])

    async def wait_request(self, session_id: str, request_id: str) -> Any:
        """The outcome of a request taken over with ``pending()``, as ``request_input`` /
        ``confirm`` would return it (a timed-out input raises ProtocolError -32004)."""
        key = (session_id, request_id)
        if key in self._outcomes:
            method, params = self._outcomes.pop(key)
        else:
            future: asyncio.Future[_Outcome] = asyncio.get_running_loop().create_future()
            self._requests[key] = future
            method, params = await future
        if method == "user.respond":
            return params.get("value")
        if method == "user.approve":
            return {"approved": params.get("approved"), "reason": params.get("reason", "")}
        if params.get("status") == "timed_out":
            if params.get("method") == "ui.confirm":
                return {"approved": False, "reason": "timeout"}
            raise ProtocolError(-32004, "Request timeout", {"request_id": request_id})
        if params.get("cancelled_by") == "person":  # the session goes on
            raise ProtocolError(REQUEST_CANCELLED, "Request cancelled", {
                "session_id": session_id, "request_id": request_id, "cancelled_by": "person"})
        raise ProtocolError(-32000, "Session closed before the user answered",
                            {"session_id": session_id})
