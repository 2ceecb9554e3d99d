"""An agent's AG-UI event as a session event: the ``agui.event`` agent method's translation
(``inbound``, sans-I/O), taken through the push pipeline (``a2ui.push.entry``) by every agent
path (agent socket, REST, Python API, MCP); refusals come back as ``invalid_input`` naming the
field as the agent wrote it."""

import uuid

from a2ui.agui import inbound


def _prefix(where):
    return f"{where}.event" if where else "event"


def events(params, key, where):
    """``([(kind, data)], "")`` of the params' ``event`` (the pipeline's refusals name core
    fields: :func:`reword` says them as the agent wrote them). With an idempotency key, a
    TEXT_MESSAGE without ``message_id`` gets one derived from it, so that a retry pushes the
    same message."""
    prefix = _prefix(where)
    event = params.get("event") if isinstance(params, dict) else None
    if (key is not None and isinstance(event, dict) and event.get("type") == "TEXT_MESSAGE"
            and not event.get("message_id")):
        event = {**event,
                 "message_id": uuid.uuid5(uuid.NAMESPACE_URL, f"a2ui:push:{key.value}").hex}
    return [inbound.to_core(event, prefix)], ""


def reword(exc, key, where):
    """A refusal of the pipeline with the path as the agent wrote it (the key's own refusal
    names it already)."""
    if key is not None and isinstance(exc.data, dict) and exc.data.get("path") == key.path:
        return exc
    return inbound.in_seed_words(exc, _prefix(where))
