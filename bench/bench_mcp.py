"""MCP at /mcp beside a seed-000 WebSocket push, in one run. Not a test.

    python bench/bench_mcp.py [--clients 4] [--calls 500] [--database-url ...] [--redis-db 9]

Starts our server (``manage.py a2ui_serve``, PostgreSQL + Redis) on 127.0.0.1 and measures, with
``--clients`` concurrent closed loops of ``--calls`` each:

* **ws push** (the baseline): an agent WebSocket sends ``ui.notify`` with an id and waits for
  its result (``{"delivered": true}``);
* **mcp ping**: the SDK client's ``ping`` (auth, the SDK's transport and dispatch, no tool);
* **mcp tool call**: the official SDK's client (Streamable HTTP) calls the ``notify`` tool and
  waits for its result: the same push, through MCP;
* **mcp resources/read**: a person's MCP client (``stream_mcp`` token, catalogs declared) reads
  a v0.9 surface of 50 components.

Per scenario: calls per second, p50 and p99 latency (ms), and the ratio of its rate to the ws
push's. One person session (its web client a WebSocket) receives the pushes.
"""

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

import bench_push as bp  # noqa: E402


def surface_of(n, sid="big"):
    from a2ui.core.surfaces.catalog import BASIC_CATALOG_ID

    children = [f"t{i}" for i in range(n - 1)]
    return [
        {"version": "v0.9", "createSurface": {"surfaceId": sid, "catalogId": BASIC_CATALOG_ID}},
        {"version": "v0.9", "updateComponents": {"surfaceId": sid, "components": [
            {"id": "root", "component": "Column", "children": children},
            *({"id": c, "component": "Text", "text": f"Line {c} of the report"}
              for c in children)]}},
    ]


async def loops(clients, calls, make_client, call):
    """``clients`` closed loops of ``calls`` calls each: (calls per second, latencies)."""
    latencies = []

    async def one(index):
        async with make_client(index) as client:
            await call(client)  # warm-up
            for _ in range(calls):
                started = time.perf_counter()
                await call(client)
                latencies.append(time.perf_counter() - started)

    started = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(clients)))
    return len(latencies) / (time.perf_counter() - started), latencies


async def run(args, url, ws_url, agent_key, user_token, mcp_token):
    import contextlib

    import httpx2
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from websockets.asyncio.client import connect

    from a2ui.core.surfaces.catalog import BASIC_CATALOG_ID

    person = await connect(f"{ws_url}/ws/v4/a2ui?token={user_token}", max_size=2**22)
    await person.send(json.dumps({"jsonrpc": "2.0", "id": "i", "method": "a2ui.init", "params": {
        "client_info": {"name": "bench", "version": "1"},
        "capabilities": {"v0.9": {"supportedCatalogIds": [BASIC_CATALOG_ID]}}}}))
    reply = json.loads(await person.recv())
    assert "result" in reply, reply
    sid = reply["result"]["session_id"]

    async def drain():
        async for _ in person:
            pass

    drainer = asyncio.ensure_future(drain())

    @contextlib.asynccontextmanager
    async def agent_socket(index):
        async with connect(f"{ws_url}/ws/v4/a2ui/agent", max_size=2**22,
                           additional_headers={"Authorization": f"Bearer {agent_key}"}) as ws:
            ws.counter = 0
            yield ws

    async def ws_push(ws):
        ws.counter += 1
        await ws.send(json.dumps({"jsonrpc": "2.0", "id": ws.counter, "method": "ui.notify",
                                  "params": {"session_id": sid, "level": "info", "title": "t"}}))
        while json.loads(await ws.recv()).get("id") != ws.counter:
            pass

    def mcp_client(credential, capabilities=None):
        @contextlib.asynccontextmanager
        async def make(index):
            http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {credential}"},
                                      timeout=httpx2.Timeout(30.0, read=120.0))
            async with http, streamable_http_client(f"{url}/mcp", http_client=http) as (r, w):
                extensions = {"a2ui": {"clientCapabilities": capabilities}} if capabilities \
                    else None
                async with ClientSession(r, w, extensions=extensions) as session:
                    await session.initialize()
                    yield session
        return make

    async def tool_call(session):
        result = await session.call_tool("notify", {"session_id": sid, "title": "t"})
        assert not result.is_error, result

    surface_uri = f"a2ui://sessions/{sid}/surfaces/big"

    async def read(session):
        result = await session.read_resource(surface_uri)
        assert len(json.loads(result.contents[0].text)[1]["updateComponents"]["components"]) \
            == args.components

    async with mcp_client(agent_key)(0) as bot:
        pushed = await bot.call_tool("push_surfaces", {
            "session_id": sid, "messages": surface_of(args.components)})
        assert not pushed.is_error, pushed

    rows = []
    caps = {"v0.9": {"supportedCatalogIds": [BASIC_CATALOG_ID]}}
    for label, make, call in (
        ("ws push (ui.notify)", agent_socket, ws_push),
        ("mcp ping (transport only)", mcp_client(agent_key), lambda session: session.send_ping()),
        ("mcp tool call (notify)", mcp_client(agent_key), tool_call),
        (f"mcp resources/read ({args.components} comp.)", mcp_client(mcp_token, caps), read),
    ):
        rate, latencies = await loops(args.clients, args.calls, make, call)
        rows.append((label, rate, bp.pct(latencies, 50) * 1000, bp.pct(latencies, 99) * 1000))
    drainer.cancel()
    await person.close()
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--calls", type=int, default=500, help="calls per client")
    parser.add_argument("--components", type=int, default=50)
    parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/a2ui_bench")
    parser.add_argument("--redis-db", type=int, default=7,
                        help="a Redis database of the bench's own (flushed)")
    args = parser.parse_args()
    import logging

    logging.getLogger("httpx2").setLevel(logging.WARNING)
    logging.getLogger("mcp").setLevel(logging.WARNING)
    env = bp.server_env(args.database_url, f"redis://127.0.0.1:6379/{args.redis_db}")
    bp.prepare_database(args.database_url, env)
    agent_key, toks = bp.make_fixtures(1)
    from a2ui import tokens
    from a2ui.models import Agent, StreamToken

    agent = Agent.objects.get(name="bench-agent")
    user = StreamToken.objects.filter(agent=agent).first().user
    mcp_token = tokens.issue_stream_token(user, agent, "stream_mcp").token
    port = bp.free_port()
    server = bp.Proc("a2ui", [sys.executable, "manage.py", "a2ui_serve", "-b", bp.HOST, "-p",
                              str(port)], env, port).wait_ready()
    try:
        rows = asyncio.run(run(args, f"http://{bp.HOST}:{port}", f"ws://{bp.HOST}:{port}",
                               agent_key, toks[0], mcp_token))
    finally:
        server.stop()
    base = rows[0][1]
    print(f"{args.clients} clients x {args.calls} calls, one Daphne process")
    print(f"{'scenario':40} {'per s':>9} {'p50 ms':>8} {'p99 ms':>8} {'vs ws':>7}")
    for label, rate, p50, p99 in rows:
        print(f"{label:40} {rate:9.0f} {p50:8.2f} {p99:8.2f} {rate / base:7.2f}")


if __name__ == "__main__":
    main()
