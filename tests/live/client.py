"""A small JSON-RPC client over a real WebSocket (the ``websockets`` library), for tier 2."""

import asyncio
import json
import urllib.error
import urllib.request

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

TIMEOUT = 10.0  # generous: two Daphne processes, PostgreSQL and Redis on a 2-core machine

INIT = {
    "jsonrpc": "2.0",
    "method": "a2ui.init",
    "id": "init",
    "params": {
        "client_info": {"name": "live-test", "version": "1.0"},
        "capabilities": {"supported_components": ["card", "table", "markdown"]},
    },
}


class Client:
    def __init__(self, ws):
        self.ws = ws

    @classmethod
    async def open(cls, url, headers=None):
        ws = await connect(url, additional_headers=headers or {}, open_timeout=TIMEOUT,
                           max_size=2**21)
        return cls(ws)

    async def send(self, obj):
        await self.ws.send(json.dumps(obj))

    async def send_text(self, text):
        await self.ws.send(text)

    async def recv(self, timeout=TIMEOUT):
        return json.loads(await asyncio.wait_for(self.ws.recv(), timeout))

    async def recv_until(self, pred, timeout=TIMEOUT, limit=200):
        """The first message matching ``pred``; the ones before it are left in ``self.skipped``."""
        skipped = []
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        for _ in range(limit):
            msg = await self.recv(max(0.01, deadline - loop.time()))
            if pred(msg):
                self.skipped = skipped
                return msg
            skipped.append(msg)
        raise AssertionError(f"no matching message in {limit}: {skipped[-5:]}")

    async def call(self, method, params, rpc_id, timeout=TIMEOUT):
        await self.send({"jsonrpc": "2.0", "id": rpc_id, "method": method, "params": params})
        return await self.recv_until(lambda m: m.get("id") == rpc_id and "method" not in m,
                                     timeout=timeout)

    async def expect_close(self, timeout=TIMEOUT):
        """Wait for the server to close the socket; return (code, reason, messages before)."""
        before = []
        try:
            async with asyncio.timeout(timeout):
                while True:
                    before.append(json.loads(await self.ws.recv()))
        except ConnectionClosed as exc:
            rcvd = exc.rcvd
            return (rcvd.code if rcvd else None), (rcvd.reason if rcvd else ""), before

    async def close(self):
        await self.ws.close()


async def open_user(server, token):
    return await Client.open(f"{server.ws_url}/ws/v4/a2ui?token={token}")


class PingingAgent(Client):
    """An agent socket that answers the server's ``a2ui.ping`` by itself, as the SDK does (an
    agent that answers none leaves its presence: its people see it offline). Everything else
    is read with ``recv`` as usual."""

    def __init__(self, ws):
        super().__init__(ws)
        self.inbox = asyncio.Queue()
        self.reader = asyncio.get_running_loop().create_task(self._read())

    async def _read(self):
        try:
            async for raw in self.ws:
                msg = json.loads(raw)
                if isinstance(msg, dict) and msg.get("method") == "a2ui.ping" and "id" in msg:
                    await self.send({"jsonrpc": "2.0", "id": msg["id"], "result": {}})
                    continue
                self.inbox.put_nowait(msg)
            await self.ws.recv()  # raises the ConnectionClosed the loop swallowed
        except ConnectionClosed as exc:
            self.inbox.put_nowait(exc)

    async def recv(self, timeout=TIMEOUT):
        item = await asyncio.wait_for(self.inbox.get(), timeout)
        if isinstance(item, ConnectionClosed):
            self.inbox.put_nowait(item)
            raise item
        return item

    async def expect_close(self, timeout=TIMEOUT):
        before = []
        try:
            async with asyncio.timeout(timeout):
                while True:
                    before.append(await self.recv(timeout))
        except ConnectionClosed as exc:
            rcvd = exc.rcvd
            return (rcvd.code if rcvd else None), (rcvd.reason if rcvd else ""), before

    async def close(self):
        await self.ws.close()
        self.reader.cancel()


async def open_agent(server, key, answer_pings=True):
    """An agent socket that answers the server's pings as a real agent does (an idle one would
    otherwise leave its presence after ``A2UI['AGENT_PING_TIMEOUT_SECONDS']``, and with it the
    routing of its sessions); ``answer_pings=False`` for a frozen agent."""
    return await (PingingAgent if answer_pings else Client).open(
        f"{server.ws_url}/ws/v4/a2ui/agent", headers={"Authorization": f"Bearer {key}"})


async def init(client, rpc_id="init", **params):
    msg = json.loads(json.dumps(INIT))
    msg["id"] = rpc_id
    msg["params"].update(params)
    await client.send(msg)
    reply = await client.recv_until(lambda m: m.get("id") == rpc_id)
    return reply


async def init_session(client, **params):
    reply = await init(client, **params)
    assert "result" in reply, reply
    return reply["result"]["session_id"]


def http(method, url, body=None, headers=None, timeout=TIMEOUT):
    """(status, decoded JSON or text) for one HTTP request; errors are returned, not raised."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method)
    req.add_header("Content-Type", "application/json")
    for name, value in (headers or {}).items():
        req.add_header(name, value)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            status, raw = resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        status, raw = exc.code, exc.read()
    try:
        return status, json.loads(raw)
    except ValueError:
        return status, raw.decode(errors="replace")


async def ahttp(*args, **kwargs):
    return await asyncio.to_thread(http, *args, **kwargs)
