"""The SSE event store of /mcp's Streamable HTTP streams (2025-11-25): resumable with
``Last-Event-ID``, kept in Redis.

Every event of a stream (the priming event the SDK sends first, then each JSON-RPC message)
is stored under the MCP session it belongs to: one :class:`SessionEventStore` per MCP session
(``a2ui.mcp.manager.SessionManager`` gives each new session its own), so one session's ``Last-Event-ID``
never finds another session's events (the SDK's stream ids are request ids, which every
session reuses). A stream keeps its last ``MAX_EVENTS`` events for ``TTL`` seconds after its
last one.

Event ids are ``<seq>-<stream key>``: ``seq`` counts the session's events in this process (the
SDK's MCP session lives in one process), the stream key is a hash of the stream id. A replay
finds the event named by ``Last-Event-ID`` and sends what follows it; when that event is not
there (Redis lost the keys, they expired, or the stream was trimmed past it) the loss is
detected, not papered over (an event Redis could not store is such a gap too, and the stream
goes on without it): nothing is replayed, a warning is logged, and the SDK ends the
resumed stream, so the client's request fails and is sent again rather than silently missing
messages.
"""

import hashlib
import itertools
import json
import logging
import re

from mcp.server.streamable_http import EventMessage, EventStore
from mcp_types import jsonrpc_message_adapter

from a2ui.infra import outages

log = logging.getLogger("a2ui.mcp")

TTL = 600
MAX_EVENTS = 1000
#: Suggested reconnection delay of the priming event (``retry``, milliseconds).
RETRY_MS = 1000
_EVENT_ID = re.compile(r"([1-9][0-9]{0,17})-([0-9a-f]{32})")


def stream_key(stream_id):
    return hashlib.sha256(str(stream_id).encode("utf-8", "surrogatepass")).hexdigest()[:32]


def event_id(seq, key):
    return f"{seq}-{key}"


def parse_event_id(text):
    """``(seq, stream key)`` of an event id of ours, else None."""
    found = _EVENT_ID.fullmatch(text) if isinstance(text, str) else None
    return (int(found.group(1)), found.group(2)) if found else None


def entry(seq, stream_id, message_json):
    return json.dumps({"q": seq, "s": stream_id, "m": message_json})


def after(entries, seq):
    """``(stream id, [(seq, message JSON)...])`` following event ``seq`` among a stream's
    stored ``entries`` (oldest first); None when event ``seq`` is not among them (lost)."""
    decoded = [json.loads(e) for e in entries]
    for index, item in enumerate(decoded):
        if item["q"] == seq:
            return item["s"], [(e["q"], e["m"]) for e in decoded[index + 1:]
                               if e["m"] is not None]
    return None


class SessionEventStore(EventStore):
    """The events of one MCP session's streams, in Redis."""

    def __init__(self, session_id, client_factory):
        self.prefix = f"a2ui:mcp:sse:{session_id}"
        self.client = client_factory
        self.seq = itertools.count(1)

    def _key(self, key):
        return f"{self.prefix}:{key}"

    async def store_event(self, stream_id, message):
        seq, key = next(self.seq), stream_key(stream_id)
        text = None
        if message is not None:
            text = message.model_dump_json(by_alias=True, exclude_unset=True)
        redis_key = self._key(key)
        try:
            async with self.client().pipeline(transaction=False) as pipe:
                pipe.rpush(redis_key, entry(seq, str(stream_id), text))
                pipe.ltrim(redis_key, -MAX_EVENTS, -1)
                pipe.expire(redis_key, TTL)
                await pipe.execute()
        except Exception:  # Redis away: the stream goes on; a replay past here finds the gap
            outages.warning(log, "MCP stream event store",
                            "a2ui: an MCP stream event was not stored")
        return event_id(seq, key)

    async def replay_events_after(self, last_event_id, send_callback):
        parsed = parse_event_id(last_event_id)
        if parsed is None:
            return None
        seq, key = parsed
        try:
            found = after(await self.client().lrange(self._key(key), 0, -1), seq)
        except Exception:
            outages.warning(log, "MCP stream events read",
                            "a2ui: MCP stream events could not be read")
            found = None
        if found is None:
            log.warning("a2ui: MCP stream events after %s are lost (expired, trimmed or "
                        "Redis lost them): nothing replayed", last_event_id[:64])
            return None
        stream_id, messages = found
        for number, text in messages:
            await send_callback(EventMessage(jsonrpc_message_adapter.validate_json(text),
                                             event_id(number, key)))
        return stream_id
