"""What the answer to a request that opens an MCP session says, read as it streams. Sans-I/O.

The SDK gives a session-less POST a new session and sends its ``Mcp-Session-Id`` with the
answer's headers, before the answer is known: an ``initialize`` it refuses (``-32602`` for a
``protocolVersion`` that is not a string) still handed out a working session id, and a
notification without a session got 202 and a session kept until it idled out.
``a2ui.mcp.manager`` holds the answer back until :class:`Opening` has decided:

* ``OPENED``: the first JSON-RPC message of the answer is a result (the session is
  established): what was held goes out, the rest streams through.
* ``REFUSED``: the answer is an HTTP error, a JSON-RPC error, or ends with no result: the
  session is discarded and the client gets :meth:`Opening.refusal` instead, a JSON body with no
  session id.
"""

import json

OPENED, REFUSED, UNDECIDED = "opened", "refused", "undecided"
SESSION_HEADER = b"mcp-session-id"


class Opening:
    """Feed it the ASGI messages of the SDK's answer; ``state`` says when it is decided."""

    def __init__(self):
        self.state = UNDECIDED
        self.status = None
        self.headers = []
        self.body = b""
        self.error = None  # the JSON-RPC error the SDK answered, when it refused

    def start(self, message):
        self.status = message["status"]
        self.headers = list(message.get("headers", []))

    def chunk(self, body, more):
        """One body chunk (``more``: more follow). Returns ``state``."""
        self.body += body
        if self.status is None or self.status >= 400:
            if not more:
                self.state = REFUSED
            return self.state
        found = _first_message(self.body, self.content_type(), complete=not more)
        if isinstance(found, dict):
            if isinstance(found.get("error"), dict):
                self.error = found
                self.state = REFUSED
            elif "result" in found:
                self.state = OPENED
        if self.state == UNDECIDED and not more:
            self.state = REFUSED  # ended with no result: nothing was opened
        return self.state

    def content_type(self):
        for name, value in self.headers:
            if name.lower() == b"content-type":
                return value.split(b";")[0].strip().lower()
        return b""

    def refusal(self):
        """``(status, JSON body)`` to answer instead of what the SDK sent."""
        if self.error is not None:
            return 400, self.error
        if self.status is not None and self.status >= 400:
            return self.status, json_error(self.status, self.content_type(), self.body)
        return 400, {"jsonrpc": "2.0", "id": None, "error": {
            "code": -32600, "message": "Invalid request: a session is opened by an "
                                       "initialize request (send Mcp-Session-Id otherwise)"}}


def _first_message(body, content_type, complete):
    """The first JSON-RPC message of an answer so far (an SSE ``data:`` line or a JSON body),
    or None when none is complete yet."""
    if content_type == b"text/event-stream":
        text = body.decode("utf-8", "replace").replace("\r\n", "\n")
        events = text.split("\n\n")
        if not complete:
            events = events[:-1]  # the last one may be cut
        for event in events:
            data = "\n".join(line[5:].lstrip(" ") for line in event.split("\n")
                             if line.startswith("data:"))
            if data.strip():
                try:
                    return json.loads(data)
                except ValueError:
                    return {}
        return None
    if not complete:
        return None
    try:
        return json.loads(body) if body.strip() else None
    except ValueError:
        return None


def json_error(status, content_type, body):
    """An HTTP error answer as a JSON-RPC error body: the SDK's own when it is JSON, else its
    text (e.g. the 413 "Request body too large") as the message."""
    if content_type == b"application/json":
        try:
            parsed = json.loads(body)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict) and isinstance(parsed.get("error"), dict):
            return parsed
    text = body.decode("utf-8", "replace").strip()[:300] or f"HTTP {status}"
    code = -32600
    return {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": text}}
