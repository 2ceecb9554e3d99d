"""An agent's AG-UI event through the activity service: the one call every agent path makes
(agent socket ``agui.event``, REST, Python API, MCP). The translation is ``inbound`` (sans-I/O);
refusals come back as ``invalid_input`` naming the field as the agent wrote it."""

import uuid

from a2ui.agui import inbound
from a2ui.core.errors import DomainError
from a2ui.surfaces import activity


async def apush(agent_id, session_id, event, prefix="event", key=None):
    """Check, store and deliver one AG-UI event of an agent; returns its sequence number
    (``key``: an idempotency key; a TEXT_MESSAGE without ``message_id`` then gets one derived
    from it, so that a retry pushes the same message)."""
    if (key is not None and isinstance(event, dict) and event.get("type") == "TEXT_MESSAGE"
            and not event.get("message_id")):
        event = {**event,
                 "message_id": uuid.uuid5(uuid.NAMESPACE_URL, f"a2ui:push:{key.value}").hex}
    kind, data = inbound.to_core(event, prefix)
    try:
        return await activity.apush(agent_id, session_id, kind, data, key=key)
    except DomainError as exc:
        if key is not None and isinstance(exc.data, dict) and exc.data.get("path") == key.path:
            raise  # the key's own refusal names it already
        raise inbound.in_seed_words(exc, prefix) from None
