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
import collections
import itertools
import json
import logging
import random
import uuid
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal, cast

from a2ui.rpc.answers import Approval, Delivered, PendingItem, RunEnd, SurfacesDelivered
from a2ui.rpc.errors import REQUEST_CANCELLED, ProtocolError

if TYPE_CHECKING:
    from websockets.asyncio.client import ClientConnection

log = logging.getLogger("a2ui.sdk")


#: A notification handler: ``await handler(params)``.
Handler = Callable[[dict[str, Any]], Awaitable[Any]]
_Outcome = tuple[str, dict[str, Any]]


def _keyed(params: dict[str, Any], idempotency_key: str | None) -> dict[str, Any]:
    if idempotency_key is not None:
        params["idempotency_key"] = idempotency_key
    return params


#: What a reconnected socket sends again: a question is its own idempotency key (its request_id).
RESENT = ("ui.request_input", "ui.confirm", "a2ui.sessions")
#: The close code of a refused key: reconnecting would not help.
KEY_REFUSED = 4006


class AgentClient:
    def __init__(self, url: str, key: str, *, open_timeout: float = 10,
                 events: Literal["one", "all"] = "one", reconnect: bool = False,
                 max_backoff: float = 10.0) -> None:
        """``events="all"``: an observer that gets every session's events (by default a
        session's events reach one socket of the agent; see docs/agents.md).
        ``reconnect=True``: connect again after the socket closes (module docstring)."""
        if events not in ("one", "all"):
            raise ValueError("events must be 'one' or 'all'")
        if events == "all":
            url += ("&" if "?" in url else "?") + "events=all"
        self.url = url
        self.key = key
        self.open_timeout = open_timeout
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._handlers: dict[str, list[Handler]] = {}
        # (session_id, request_id) -> future, for wait_request
        self._requests: dict[tuple[Any, Any], asyncio.Future[_Outcome]] = {}
        # outcomes nobody waited for yet
        self._outcomes: collections.OrderedDict[tuple[Any, Any], _Outcome] = (
            collections.OrderedDict())
        self._ws: ClientConnection | None = None
        self._reader: asyncio.Task[None] | None = None
        #: Set when the socket closed for good (None before ``connect``).
        self.closed: asyncio.Event | None = None
        self.reconnect = reconnect
        self.max_backoff = max_backoff
        self.reconnects = 0  # sockets opened after the first
        # rpc id -> [request, number of the socket it went out on]
        self._sent: dict[int, list[Any]] = {}
        self._socket_no = 0
        self._connected: asyncio.Event | None = None
        self._stopping = False
        self._supervisor: asyncio.Task[None] | None = None

    async def __aenter__(self) -> AgentClient:
        await self.connect()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def connect(self) -> None:
        """Open the socket; with ``reconnect`` retry until it opens, and keep it open."""
        self.closed = asyncio.Event()
        self._connected = asyncio.Event()
        self._stopping = False
        if not self.reconnect:
            return await self._open()
        await self._open_with_backoff()
        self._supervisor = asyncio.get_running_loop().create_task(self._supervise())

    async def _open(self) -> None:
        import websockets

        self._ws = await websockets.connect(
            self.url, additional_headers={"Authorization": f"Bearer {self.key}"},
            open_timeout=self.open_timeout, max_size=2 * 1024 * 1024)
        self._socket_no += 1
        self._reader = asyncio.get_running_loop().create_task(self._read())
        cast(asyncio.Event, self._connected).set()

    async def _open_with_backoff(self) -> None:
        for attempt in itertools.count():
            try:
                return await self._open()
            except Exception as exc:  # refused, 503 draining, a handshake timeout, ...
                delay = min(self.max_backoff, 0.5 * 2 ** attempt) * random.uniform(0.5, 1)
                log.info("a2ui agent socket: %s; connecting again in %.1f s", exc, delay)
                await asyncio.sleep(delay)

    async def _supervise(self) -> None:
        """Reconnect each time the socket closes, until ``close()`` or a refused key."""
        try:
            while True:
                await asyncio.gather(cast("asyncio.Task[None]", self._reader),
                                     return_exceptions=True)
                cast(asyncio.Event, self._connected).clear()
                if self._stopping or getattr(self._ws, "close_code", None) == KEY_REFUSED:
                    break
                await self._open_with_backoff()
                self.reconnects += 1
                for rpc_id, sent in list(self._sent.items()):
                    if rpc_id in self._waiting and sent[1] < self._socket_no:
                        sent[1] = self._socket_no  # the same request again: a retry
                        try:
                            await self._send(sent[0])
                        except ConnectionError:
                            sent[1] = 0
                            break  # closed again: the next round sends it
        finally:
            self._stopping = True
            self._fail(list(self._waiting) + list(self._sent))
            cast(asyncio.Event, self.closed).set()

    async def close(self) -> None:
        self._stopping = True
        if self._ws is not None:
            await self._ws.close()
        if self._supervisor is not None and not cast(asyncio.Event, self._connected).is_set():
            self._supervisor.cancel()  # still backing off
        await asyncio.gather(*[task for task in (self._reader, self._supervisor) if task],
                             return_exceptions=True)

    def _fail(self, rpc_ids: list[int]) -> None:  # these requests get no answer
        for rpc_id in rpc_ids:
            self._sent.pop(rpc_id, None)
            future = self._waiting.pop(rpc_id, None)
            if future is not None and not future.done():
                future.set_exception(ConnectionError("agent socket closed"))

    def _resent(self, rpc_id: int) -> bool:
        """Whether a request in flight when the socket closed is sent again on the next."""
        message: dict[str, Any] = self._sent.get(rpc_id, [{}])[0]
        return self.reconnect and not self._stopping and (
            message.get("method") in RESENT or "idempotency_key" in message.get("params", {}))

    def on(self, method: str, handler: Handler) -> None:
        """Call ``handler(params)`` (a coroutine function) for each such notification."""
        self._handlers.setdefault(method, []).append(handler)

    async def _read(self) -> None:
        try:
            async for raw in cast("ClientConnection", self._ws):  # connect() set it
                msg = json.loads(raw)
                if msg.get("method") == "a2ui.ping" and msg.get("id") is not None:
                    # The server's liveness check (a2ui.jsonrpc.liveness): answer at once.
                    await self._send({"jsonrpc": "2.0", "id": msg["id"], "result": {}})
                    continue
                if "method" in msg:
                    self._outcome(msg["method"], msg.get("params") or {})
                    for handler in self._handlers.get(msg["method"], []):
                        asyncio.get_running_loop().create_task(
                            self._run_handler(handler, msg.get("params") or {})
                        )
                    continue
                self._sent.pop(msg.get("id"), None)
                future = self._waiting.pop(msg.get("id"), None)
                if future is not None and not future.done():
                    future.set_result(msg)
                elif msg.get("error"):
                    log.warning("a2ui server error: %s", msg["error"])
        except Exception as exc:  # connection gone: fail every waiter
            log.info("agent socket closed: %s", exc)
        finally:
            self._fail([rpc_id for rpc_id in list(self._waiting) if not self._resent(rpc_id)])
            for asked in self._requests.values():
                if not asked.done():
                    asked.set_exception(ConnectionError("agent socket closed"))
            self._requests.clear()
            if not self.reconnect:
                cast(asyncio.Event, self.closed).set()

    OUTCOMES = ("user.respond", "user.approve", "request.closed")

    def _outcome(self, method: str, params: dict[str, Any]) -> None:
        """The outcome of a request taken over with ``pending()`` arrives as a notification."""
        if method not in self.OUTCOMES or "component_id" in params:
            return
        key = (params.get("session_id"), params.get("request_id"))
        future = self._requests.pop(key, None)
        if future is not None and not future.done():
            future.set_result((method, params))
            return
        self._outcomes[key] = (method, params)
        while len(self._outcomes) > 1000:
            self._outcomes.popitem(last=False)

    async def _run_handler(self, handler: Handler, params: dict[str, Any]) -> None:
        try:
            await handler(params)
        except Exception:
            log.exception("handler failed")

    async def call(self, method: str, params: dict[str, Any]) -> Any:
        """Send a request and return its result, or raise ProtocolError."""
        await self._wait_connected()
        rpc_id = next(self._ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[rpc_id] = future
        message = {"jsonrpc": "2.0", "id": rpc_id, "method": method, "params": params}
        if self.reconnect:
            self._sent[rpc_id] = [message, self._socket_no]
        try:
            await self._send(message)
        except ConnectionError:
            if not self._resent(rpc_id):  # else the next socket sends it
                self._fail([rpc_id])
                raise
        reply = await future
        if "error" in reply:
            err = reply["error"]
            raise ProtocolError(err.get("code"), err.get("message"), err.get("data"), rpc_id)
        return reply.get("result")

    async def _wait_connected(self) -> None:
        """With ``reconnect``, a call made between two sockets waits for the next one."""
        if self.reconnect and self._connected is not None and not self._stopping:
            await self._connected.wait()

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        await self._wait_connected()
        await self._send({"jsonrpc": "2.0", "method": method, "params": params})

    async def _send(self, message: dict[str, Any]) -> None:
        """Send one message; a socket that closed (cleanly or not) is a ``ConnectionError``,
        like a request whose socket closed while it waited."""
        from websockets.exceptions import ConnectionClosed

        try:
            await cast("ClientConnection", self._ws).send(json.dumps(message))
        except ConnectionClosed as exc:
            raise ConnectionError(f"agent socket closed: {exc}") from None

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
