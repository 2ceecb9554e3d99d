"""A tiny HTTP/1.1 proxy that adds ``Authorization: Bearer <credential>`` to every request,
for clients that cannot send a header (the MCP conformance suite's ``server --url`` has no
header option). Everything else passes through byte for byte (Host and Origin included, so
the server's own checks still decide); one request per connection (``Connection: close`` both
ways), responses streamed as they come (SSE)."""

import asyncio
import contextlib

DROP = (b"authorization", b"connection", b"keep-alive", b"proxy-connection")


def _rewrite(head, extra):
    lines = head.rstrip(b"\r\n").split(b"\r\n")
    kept = [lines[0]] + [line for line in lines[1:]
                         if line.split(b":", 1)[0].strip().lower() not in DROP]
    return b"\r\n".join(kept + extra) + b"\r\n\r\n"


async def _pipe(reader, writer):
    try:
        while chunk := await reader.read(65536):
            writer.write(chunk)
            await writer.drain()
    except (ConnectionError, asyncio.IncompleteReadError):
        pass
    finally:
        with contextlib.suppress(Exception):
            writer.write_eof()


class AuthProxy:
    def __init__(self, upstream_port, credential):
        self.upstream_port = upstream_port
        self.header = f"Authorization: Bearer {credential}".encode()
        self.server = None
        self.port = None
        self.tasks = set()

    async def start(self):
        self.server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    async def stop(self):
        self.server.close()
        for task in list(self.tasks):  # open streams (GET /mcp) end with the proxy
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        await self.server.wait_closed()

    async def _handle(self, client_r, client_w):
        task = asyncio.current_task()
        self.tasks.add(task)
        try:
            await self._forward(client_r, client_w)
        except asyncio.CancelledError:
            pass
        finally:
            self.tasks.discard(task)
            client_w.close()

    async def _forward(self, client_r, client_w):
        try:
            head = await client_r.readuntil(b"\r\n\r\n")
            up_r, up_w = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            client_w.close()
            return
        up_w.write(_rewrite(head, [self.header, b"Connection: close"]))
        await up_w.drain()
        upload = asyncio.ensure_future(_pipe(client_r, up_w))
        try:
            response = await up_r.readuntil(b"\r\n\r\n")
            client_w.write(_rewrite(response, [b"Connection: close"]))
            await client_w.drain()
            await _pipe(up_r, client_w)
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            pass
        finally:
            upload.cancel()
            for writer in (up_w, client_w):
                writer.close()
