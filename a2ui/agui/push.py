"""An agent's AG-UI event through the activity service: the one call every agent path makes
(agent socket ``agui.event``, REST, Python API, MCP). The translation is ``inbound`` (sans-I/O);
refusals come back as ``invalid_input`` naming the field as the agent wrote it."""

from ..core.errors import DomainError
from ..services import activity
from . import inbound


async def apush(agent_id, session_id, event, prefix="event"):
    """Check, store and deliver one AG-UI event of an agent; returns its sequence number."""
    kind, data = inbound.to_core(event, prefix)
    try:
        return await activity.apush(agent_id, session_id, kind, data)
    except DomainError as exc:
        raise inbound.in_seed_words(exc, prefix) from None
