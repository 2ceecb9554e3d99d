"""The agent socket of ``a2ui.sdk.AgentClient``: connecting and reconnecting, JSON-RPC calls
and their answers, notification handlers, the server's pings (the package's docstring says
what a reconnect keeps)."""

from __future__ import annotations

import asyncio
import collections
import itertools
import json
import logging
import random
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal, Self, cast

from a2ui.rpc.errors import ProtocolError

if TYPE_CHECKING:
    from websockets.asyncio.client import ClientConnection

log = logging.getLogger("a2ui.sdk")


#: A notification handler: ``await handler(params)``.
Handler = Callable[[dict[str, Any]], Awaitable[Any]]
_Outcome = tuple[str, dict[str, Any]]


#: What a reconnected socket sends again: a question is its own idempotency key (its request_id).
RESENT = ("ui.request_input", "ui.confirm", "a2ui.sessions")
#: The close code of a refused key: reconnecting would not help.
KEY_REFUSED = 4006


class Connection:
    """The agent socket itself: connecting (again), JSON-RPC calls and their answers, the
    handlers of notifications, the server's pings. ``AgentClient`` adds the agent's calls."""

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

    async def __aenter__(self) -> Self:
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
