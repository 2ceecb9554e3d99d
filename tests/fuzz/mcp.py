"""What every MCP fuzz case checks (the in-process tier and its live part), and an in-process
HTTP client for ``/mcp``.

An answer of /mcp is JSON or SSE whose ``data:`` lines are strict JSON; a JSON-RPC error carries
a code of the protocol (the spec's or ours, never -32603 "Internal error"); a tool error
(``isError``) says what is wrong without a traceback; no HTTP 5xx.
"""

from __future__ import annotations

import asyncio
import json

from tests.fuzz.harness import strict_loads

#: JSON-RPC codes an MCP server may answer a hostile request with: the spec's and ours (-320xx).
MCP_CODES = {-32700, -32600, -32601, -32602, -32002, *range(-32099, -32000 + 1)} - {-32603}

PROTOCOL_VERSION = "2025-11-25"
INIT_BODY = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": PROTOCOL_VERSION, "clientInfo": {"name": "fuzz", "version": "1"},
               "capabilities": {}},
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream",
               "Content-Type": "application/json"}


def messages(text):
    """The JSON-RPC messages of an MCP answer: a JSON body, or SSE ``data:`` lines."""
    if not text.strip():
        return []
    if text.lstrip().startswith(("{", "[")):
        return [strict_loads(text)]
    return [strict_loads(line[5:].strip()) for line in text.splitlines()
            if line.startswith("data:") and line[5:].strip()]


def check_mcp(label, status, text, problems):
    """Problems of one answer (appended to ``problems``); returns its JSON-RPC messages."""
    if status >= 500:
        problems.append(f"{label} -> HTTP {status}: {text[:200]!a}")
        return []
    if "Traceback" in text:
        problems.append(f"{label} -> traceback in the answer: {text[:300]!a}")
    try:
        found = messages(text)
    except ValueError as exc:
        problems.append(f"{label} -> not strict JSON ({exc}): {text[:200]!a}")
        return []
    flat = []
    for message in found:
        for one in message if isinstance(message, list) else [message]:
            flat.append(one)
            error = one.get("error") if isinstance(one, dict) else None
            if isinstance(error, dict):
                if error.get("code") not in MCP_CODES:
                    problems.append(f"{label} -> error code {error.get('code')}: "
                                    f"{json.dumps(one)[:200]}")
                elif not isinstance(error.get("message"), str) or not error["message"]:
                    problems.append(f"{label} -> error without a message: "
                                    f"{json.dumps(one)[:200]}")
            result = one.get("result") if isinstance(one, dict) else None
            if isinstance(result, dict) and result.get("isError"):
                content = json.dumps(result.get("content"))
                if "Traceback" in content or "Internal error" in content:
                    problems.append(f"{label} -> tool error leaks or is internal: {content[:200]}")
                elif not any(isinstance(c, dict) and c.get("text") for c in
                             result.get("content") or []):
                    problems.append(f"{label} -> tool error without a message: {content[:200]}")
    return flat


class Response:
    def __init__(self, status, headers, body):
        self.status, self.body = status, body
        self.headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in headers}

    @property
    def text(self):
        return self.body.decode("utf-8", "replace")


class AsgiHttp:
    """HTTP requests to an ASGI app, in-process. A response that does not end within
    ``timeout`` (an open SSE stream) is cut there: the client disconnects."""

    def __init__(self, app, path="/mcp"):
        self.app, self.path = app, path

    async def request(self, method, headers, body=b"", *, timeout=10.0):
        raw = [(k.lower().encode("latin-1"), v.encode("latin-1", "surrogateescape")
                if isinstance(v, str) else v) for k, v in headers.items()]
        raw.append((b"host", b"localhost"))
        if body:
            raw.append((b"content-length", str(len(body)).encode()))
        scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
                 "method": method, "scheme": "http", "path": self.path,
                 "raw_path": self.path.encode(), "query_string": b"", "root_path": "",
                 "headers": raw, "client": ("127.0.0.1", 50000), "server": ("localhost", 80)}
        sent_body = False
        hang_up = asyncio.Event()
        start, chunks, ended = {}, [], asyncio.Event()

        async def receive():
            nonlocal sent_body
            if not sent_body:
                sent_body = True
                return {"type": "http.request", "body": body, "more_body": False}
            await hang_up.wait()
            return {"type": "http.disconnect"}

        async def send(message):
            if message["type"] == "http.response.start":
                start.update(message)
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))
                if not message.get("more_body"):
                    ended.set()

        task = asyncio.ensure_future(self.app(scope, receive, send))
        waiter = asyncio.ensure_future(ended.wait())
        try:
            await asyncio.wait({task, waiter}, timeout=timeout,
                               return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiter.cancel()
            hang_up.set()
            if not task.done():
                try:
                    await asyncio.wait_for(asyncio.shield(task), 2)
                except TimeoutError:
                    task.cancel()
        if task.done() and not task.cancelled() and task.exception() is not None:
            raise task.exception()
        return Response(start.get("status", 0), start.get("headers", []), b"".join(chunks))
