"""The network side of the A2A client: the agent card fetched, the official SDK's client built on
the runtime's outbound ``httpx.AsyncClient`` (the one that connects only where
``A2UI['REMOTE_AGENT_HOSTS']`` allows), and the byte limits applied to what the agent streams.

Why the SDK (a2a-sdk 1.x): it speaks both A2A 1.0 (``SendStreamingMessage``, ``SubscribeToTask``,
``CancelTask``, ``A2A-Extensions``) and 0.3 (``message/stream``, ``tasks/resubscribe``,
``tasks/cancel``, ``X-A2A-Extensions``) and converts 0.3 into 1.0's objects, so one code path
reads both; it takes our ``httpx.AsyncClient``. We build its JSON-RPC transport directly (not with
``ClientFactory``, which would set a default header on the shared client) for the interface
:func:`a2ui.remote.a2a.card.choose` picked.

Limits: the SDK reads the SSE stream itself, so the bytes are counted under it: a response hook
on the outbound client wraps the body of every response read inside :func:`metered` (a context
variable: other users of the client are untouched) and raises :class:`TooLarge` when an event
(the bytes between two blank lines) or the whole run passes its cap.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
from a2a.client.base_client import BaseClient
from a2a.client.card_resolver import parse_agent_card
from a2a.client.client import ClientConfig
from a2a.client.transports.jsonrpc import JsonRpcTransport
from a2a.compat.v0_3.jsonrpc_transport import CompatJsonRpcTransport
from a2a.types import a2a_pb2 as pb
from google.protobuf import json_format

from a2ui.core.content import jsonvalue
from a2ui.remote.a2a.card import MAX_CARD_BYTES, CardError, CardInfo, card_url, read_card


class TooLarge(Exception):
    """The agent sent more than a limit allows; the message names the limit."""


class Meter:
    """Bytes of one run: per event (between SSE blank lines) and in all."""

    def __init__(self, event_bytes: int, run_bytes: int) -> None:
        self.event_bytes, self.run_bytes = event_bytes, run_bytes
        self.total = 0
        self._event = 0  # bytes of the event being read
        self._newline = False  # the last chunk ended with a newline

    def count(self, chunk: bytes) -> None:
        self.total += len(chunk)
        if self.total > self.run_bytes:
            raise TooLarge(f"The agent's run passed {self.run_bytes} bytes.")
        data = chunk.replace(b"\r\n", b"\n")
        if self._newline and data.startswith(b"\n"):  # a blank line split between chunks
            self._event, data = 0, data[1:]
        pieces = data.split(b"\n\n")
        for i, piece in enumerate(pieces):
            if (len(piece) if i else self._event + len(piece)) > self.event_bytes:
                raise TooLarge(f"An event of the agent passed {self.event_bytes} bytes.")
        self._event = len(pieces[-1]) + (self._event if len(pieces) == 1 else 0)
        self._newline = data.endswith(b"\n")


class _MeteredStream(httpx.AsyncByteStream):
    def __init__(self, stream: Any, meter: Meter) -> None:
        self._stream, self._meter = stream, meter

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._stream:
            self._meter.count(chunk)
            yield chunk

    async def aclose(self) -> None:
        await self._stream.aclose()


_METER: contextvars.ContextVar[Meter | None] = contextvars.ContextVar("a2a_meter", default=None)


async def _meter_hook(response: httpx.Response) -> None:
    meter = _METER.get()
    if meter is not None:
        response.stream = _MeteredStream(response.stream, meter)


def install(http: httpx.AsyncClient) -> None:
    """Add the metering hook to ``http`` (once; it does nothing outside :func:`metered`)."""
    hooks = http.event_hooks
    if _meter_hook not in hooks.get("response", []):
        hooks.setdefault("response", []).append(_meter_hook)
        http.event_hooks = hooks


@contextlib.contextmanager
def metered(meter: Meter) -> Iterator[Meter]:
    token = _METER.set(meter)
    try:
        yield meter
    finally:
        _METER.reset(token)


async def fetch_card(url: str, http: httpx.AsyncClient, headers: dict[str, str] | None = None
                     ) -> CardInfo:
    """Read the agent card for a registered URL (the card's own URL or the agent's base)."""
    where = card_url(url)
    try:
        opener = getattr(http, "open_stream", None)  # the runtime's client checks the URL too
        if opener is not None:
            response = await opener("GET", where, headers=headers or {})
        else:
            response = await http.send(http.build_request("GET", where, headers=headers or {}),
                                       stream=True)
        try:
            if response.status_code != 200:
                raise CardError(f"No agent card at {where[:200]} (HTTP {response.status_code}).")
            body = b""
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > MAX_CARD_BYTES:
                    raise CardError(f"The agent card is larger than {MAX_CARD_BYTES} bytes.")
        finally:
            await response.aclose()
    except httpx.HTTPError as e:
        raise CardError(f"The agent card at {where[:200]} could not be read: "
                        f"{type(e).__name__}.") from None
    try:
        card = jsonvalue.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise CardError(f"The agent card at {where[:200]} is not JSON.") from None
    info = read_card(card)
    sdk_card(info)  # the SDK must read it too
    return info


def sdk_card(info: CardInfo) -> pb.AgentCard:
    """The SDK's card for ``info``, its interfaces narrowed to the one chosen."""
    try:
        card = parse_agent_card(json.loads(json.dumps(info.card)))
    except (json_format.ParseError, ValueError, TypeError) as e:
        raise CardError(f"The agent card is not a valid A2A card: {str(e)[:200]}") from None
    del card.supported_interfaces[:]
    card.supported_interfaces.append(pb.AgentInterface(
        url=info.rpc_url, protocol_binding="JSONRPC", protocol_version=info.protocol_version))
    return card


def sdk_client(info: CardInfo, http: httpx.AsyncClient) -> BaseClient:
    """The SDK's client for the agent (JSON-RPC, the version chosen), on ``http``."""
    card = sdk_card(info)
    cls = CompatJsonRpcTransport if info.legacy else JsonRpcTransport
    transport = cls(http, card, info.rpc_url, is_shared_httpx=True)
    return BaseClient(card, ClientConfig(streaming=True, httpx_client=http), transport, [])
