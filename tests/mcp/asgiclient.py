"""The official MCP SDK's client against /mcp in-process: an httpx2 transport that calls the
ASGI app (``a2ui.mcp.app.MCPApp``) and streams its response, so that SSE answers and the GET
stream of notifications arrive as they are sent (httpx's own ASGI transport buffers a response
whole, which never ends for a stream)."""

import asyncio
import contextlib

import httpx2
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client


class _Body(httpx2.AsyncByteStream):
    def __init__(self, chunks, hang_up, task):
        self.chunks, self.hang_up, self.task = chunks, hang_up, task

    async def __aiter__(self):
        while True:
            chunk = await self.chunks.get()
            if chunk is None:
                return
            yield chunk

    async def aclose(self):
        self.hang_up.set()
        if not self.task.done():
            try:
                await asyncio.wait_for(asyncio.shield(self.task), 2)
            except (TimeoutError, Exception):
                self.task.cancel()


class StreamingASGI(httpx2.AsyncBaseTransport):
    def __init__(self, app):
        self.app = app
        self.tasks = set()

    async def handle_async_request(self, request):
        body = await request.aread()
        headers = [(k.lower(), v) for k, v in request.headers.raw]
        scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
                 "method": request.method, "scheme": "http", "path": request.url.path,
                 "raw_path": request.url.raw_path.split(b"?")[0],
                 "query_string": request.url.query, "root_path": "", "headers": headers,
                 "client": ("127.0.0.1", 50000), "server": ("localhost", 80)}
        sent, hang_up = False, asyncio.Event()
        started, chunks = asyncio.get_running_loop().create_future(), asyncio.Queue()

        async def receive():
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            await hang_up.wait()
            return {"type": "http.disconnect"}

        async def send(message):
            if message["type"] == "http.response.start" and not started.done():
                started.set_result(message)
            elif message["type"] == "http.response.body":
                if message.get("body"):
                    await chunks.put(message["body"])
                if not message.get("more_body"):
                    await chunks.put(None)

        async def run():
            try:
                await self.app(scope, receive, send)
            except Exception as exc:
                if not started.done():
                    started.set_exception(exc)
            finally:
                await chunks.put(None)

        task = asyncio.get_running_loop().create_task(run())
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        start = await started
        return httpx2.Response(start["status"], headers=start.get("headers", []),
                               stream=_Body(chunks, hang_up, task), request=request)


@contextlib.asynccontextmanager
async def sdk_session(app, credential, *, message_handler=None, extensions=None):
    """An initialized ``ClientSession`` (the handshake era) on the in-process app
    (``extensions``: the host's declared capability extensions, e.g. A2UI's catalogs)."""
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {credential}"},
                              base_url="http://localhost", transport=StreamingASGI(app),
                              timeout=httpx2.Timeout(30.0, read=60.0))
    async with http, streamable_http_client("http://localhost/mcp", http_client=http) as (r, w):
        kwargs = {"read_timeout_seconds": 30}
        if message_handler is not None:
            kwargs["message_handler"] = message_handler
        if extensions is not None:
            kwargs["extensions"] = extensions
        async with ClientSession(r, w, **kwargs) as session:
            await session.initialize()
            yield session


def build_app():
    from django.conf import settings

    from a2ui.mcp.app import MCPApp
    from a2ui.mcp.server import build_server

    return MCPApp(build_server(), settings.ALLOWED_HOSTS, max_request_body_size=1_048_576)
