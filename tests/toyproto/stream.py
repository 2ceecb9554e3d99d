"""The toy listener: an HTTP stream on the connection base every listener shares."""

from channels.db import database_sync_to_async
from django.http import JsonResponse

from a2ui import handoff, tokens
from a2ui import surfaces as surface_service
from a2ui.consumers.streams import SessionStream
from a2ui.core.errors import DomainError
from a2ui.infra import caps
from a2ui.rpc.errors import ProtocolError
from a2ui.sessions import lifecycle as sessions
from tests.toyproto import TOKEN_TYPE, wire


def _refuse(status, message):
    return JsonResponse({"error": message}, status=status)


async def events(request, session_id):
    raw = request.GET.get("token") or ""
    try:
        token = await database_sync_to_async(tokens.verify_stream_token)(raw, TOKEN_TYPE)
    except tokens.TokenError as exc:
        return _refuse(401, exc.reason)
    try:
        session = await surface_service.acheck_stream_session(token, session_id)
    except DomainError as exc:
        return _refuse(404, ProtocolError.of(exc).message)
    try:
        lease = await caps.acquire_stream(token, caps.address_of_request(request))
    except caps.CapReached as exc:
        return _refuse(429, exc.message)
    stream = ToyStream(token, session.session_id)
    return handoff.event_stream(caps.holding(lease, stream.frames()))


class ToyStream(SessionStream):
    adapter_name = "toy"
    client_protocol = "toy"
    idle_seconds = 15

    async def open(self):
        await self.send_state()

    async def send_state(self):
        snap = await sessions.asnapshot(self.session_id)
        self.write(wire.snapshot(snap.components))

    async def show(self, kind, message):
        self.write(wire.event(kind, message["data"]))

    async def idle(self):
        self.write(b"\n")
