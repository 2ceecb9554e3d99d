"""The SDK's Streamable HTTP session manager, as /mcp runs it.

What the SDK's ``StreamableHTTPSessionManager`` does not do:

* each MCP session gets an event store of its own (``a2ui.mcp.eventstore``; the SDK shares
  one store across sessions, keyed only by stream ids that every session reuses);
* a request that would open a session only gets one if the answer establishes it
  (``a2ui.mcp.opening``): the answer is held until that is known, a refused ``initialize`` (or
  any other session-less request) is answered with a JSON error and no ``Mcp-Session-Id``, and
  its session is discarded at once;
* each session holds the cap lease its opening request took (``a2ui.infra.caps``, taken by
  ``a2ui.mcp.app``), released when the session ends however it ends (DELETE, idle timeout,
  crash, shutdown);
* each session's transport is ``a2ui.mcp.transport.Transport``: the SDK's, with a GET stream
  that holds far less memory while it idles.
"""

import json
import logging
from uuid import uuid4

import anyio
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

from a2ui.infra import memory
from a2ui.mcp.eventstore import RETRY_MS, SessionEventStore
from a2ui.mcp.opening import OPENED, REFUSED, SESSION_HEADER, Opening
from a2ui.mcp.transport import Transport

log = logging.getLogger("a2ui.mcp")

#: The ASGI scope key under which ``a2ui.mcp.app`` hands a session's cap lease over.
LEASE = "a2ui_cap_lease"


class SessionManager(StreamableHTTPSessionManager):
    def __init__(self, *args, client_factory=None, **kwargs):
        self.client_factory = client_factory
        if client_factory is not None:
            kwargs.setdefault("retry_interval", RETRY_MS)
        super().__init__(*args, **kwargs)
        self._leases = {}  # MCP session id -> its cap lease
        memory.register(self.registries)

    def registries(self):
        """What grows with the sessions (``memory.shrink``): the leases."""
        return [self._leases]

    def _admit_session(self, requestor):
        """The SDK's ``_admit_session`` with our transport and the session's own event store."""
        if self.max_sessions is not None and len(self._server_instances) >= self.max_sessions:
            return None
        session_id = uuid4().hex
        event_store = self.event_store
        if self.client_factory is not None:
            event_store = SessionEventStore(session_id, self.client_factory)
        transport = Transport(
            mcp_session_id=session_id, is_json_response_enabled=self.json_response,
            event_store=event_store, security_settings=self.security_settings,
            retry_interval=self.retry_interval, idle_timeout=self.session_idle_timeout)
        if requestor is not None:
            self._session_owners[session_id] = requestor
        self._server_instances[session_id] = transport
        log.debug("a2ui: MCP session %s opened", session_id)
        return transport

    async def _serve_opening_request(self, http_transport, scope, receive, send):
        session_id = http_transport.mcp_session_id
        lease = scope.get(LEASE)
        if lease is not None:
            lease.adopted = True
            self._leases[session_id] = lease
        gate = _Gate(send)
        try:
            await super()._serve_opening_request(http_transport, scope, receive, gate.send)
        finally:
            refused = await gate.finish()
            if refused and session_id in self._server_instances:
                await self._discard_session(session_id, http_transport)
            elif refused or session_id not in self._server_instances:
                await self._release(session_id)

    async def _discard_session(self, session_id, transport):
        await super()._discard_session(session_id, transport)
        await self._release(session_id)

    async def _release(self, session_id):
        lease = self._leases.pop(session_id, None)
        if lease is not None:
            with anyio.CancelScope(shield=True):
                await lease.release()

    def open_sessions(self):
        return len(self._server_instances)


class _Gate:
    """Holds the opening request's answer until :class:`Opening` decides, then sends it on (or
    the refusal instead, then drops what the SDK still sends)."""

    def __init__(self, send):
        self.downstream = send
        self.opening = Opening()
        self.held = []
        self.sent_refusal = False

    async def send(self, message):
        state = self.opening.state
        if state == OPENED:
            await self.downstream(message)
            return
        if state == REFUSED:
            return  # the refusal went out instead
        if message["type"] == "http.response.start":
            self.opening.start(message)
            self.held.append(message)
            return
        if message["type"] != "http.response.body":
            self.held.append(message)
            return
        self.held.append(message)
        state = self.opening.chunk(message.get("body", b""), bool(message.get("more_body")))
        if state == OPENED:
            held, self.held = self.held, []
            for one in held:
                await self.downstream(one)
        elif state == REFUSED:
            await self._refuse()

    async def _refuse(self):
        self.held = []
        self.sent_refusal = True
        status, body = self.opening.refusal()
        payload = json.dumps(body, separators=(",", ":")).encode()
        headers = [(k, v) for k, v in self.opening.headers
                   if k.lower() not in (SESSION_HEADER, b"content-type", b"content-length",
                                        b"cache-control", b"connection", b"x-accel-buffering")]
        await self.downstream({
            "type": "http.response.start", "status": status,
            "headers": [(b"content-type", b"application/json"),
                        (b"content-length", str(len(payload)).encode()), *headers]})
        await self.downstream({"type": "http.response.body", "body": payload})

    async def finish(self):
        """The SDK is done with the request: True when no session was opened. An answer still
        undecided (cut short) is refused, if its start has not gone out."""
        if self.opening.state == OPENED:
            return False
        if self.opening.state != REFUSED:
            self.opening.state = REFUSED
            if self.held or self.opening.status is not None:
                try:
                    await self._refuse()
                except Exception:  # the client has gone
                    pass
        return True
