"""Session events: what happens in a session, in no protocol's words.

Services emit these; each protocol adapter (``a2ui.core.adapters``) translates the kinds it
knows into its own wire and ignores the rest. Sans-I/O: plain data, no Django, no network.

On the channel layer an event travels to the session group ``a2ui.s.<session>`` as one message
(``to_message``)::

    {"type": "a2ui.event", "kind": "component.rendered", "data": {...},
     "seq": 17, "epoch": "k3f..."}

``seq`` is the event's place in the session's one order (the per-session counter of
``a2ui.infra.shared``; every adapter sees the same numbers) and ``epoch`` names the counter it
came from: a socket that sees a gap in ``seq`` or another epoch resyncs from the database.

The data of each kind (all JSON values, already validated and sanitized by whoever emitted it):

=====================  =============================================================================
kind                   data
=====================  =============================================================================
component.rendered     ``component_id``, ``component_type``, ``data``, ``metadata`` (optional)
component.updated      ``component_id``, ``operation`` (replace|merge|append), ``data``
component.removed      ``component_id`` (gone: expired or withdrawn)
request.opened         ``kind`` (input|confirm), ``params`` (the request: ``request_id``, prompt...)
request.closed         ``request_id``, ``status`` (answered|timed_out|cancelled)
progress               ``task_id``, ``progress_type``, ``value``, ``total``, ``message`` (transient:
                       no snapshot keeps it)
navigate               ``url``, ``new_tab`` (transient)
notify                 ``level``, ``title``, ``message``, ``duration_ms`` (transient)
consent.required       ``consent_types`` (what the person is asked to grant; transient)
surface.batch          ``first_seq`` (the surface store's number of the first message), ``messages``
                       (A2UI v0.9 server messages, validated)
run.ended              ``run_id``, ``status`` (finished|error), ``result``, ``message``, ``code``: the
                       agent ended a run (``a2ui.runs.records``; transient)
message                ``message_id``, ``role`` (agent|user|system), ``sender``, ``content``,
                       ``metadata`` (optional): the session's transcript (the person's chat
                       messages from any client are recorded too, role user)
message.batch          ``messages``: several ``message`` data at once, in order (a person's new
                       messages of one AG-UI 1.0 run: one event, not one per message)
tool_call              ``call_id``, ``phase`` (requested|status|result), ``tool_name``,
                       ``parameters``, ``agent_id``, ``status`` (PENDING|RUNNING|COMPLETED|FAILED|
                       CANCELLED), ``progress`` (0..100), ``message``, ``result``, ``error`` (all
                       but call_id and phase optional; ``requested`` has tool_name and
                       parameters, every phase a status)
state.delta            ``path`` (dot path into the session's state document), ``old_value``
                       (optional: what was there, checked by the service), ``new_value``
                       (optional), ``removed`` (bool: the value at path is removed)
plan                   ``plan_id``, ``title``, ``content`` (markdown), ``status`` (ACTIVE|COMPLETED|
                       FAILED|CANCELLED)
resources              ``root``: a tree node ``{id, name, node_type, children?}`` (replaces the tree)
roster                 ``agents``: ``[{id, name, status (ONLINE|BUSY|IDLE|OFFLINE), metadata?}]``
artifact               ``artifact_id``, ``phase`` (opened|updated), ``content``, ``title``,
                       ``content_type``, ``read_only``, ``language`` (optional), ``change_type``
                       (updated: full_replace|partial|diff), ``full_content`` (diff only: the
                       content after it)
=====================  =============================================================================

The last seven (and ``message.batch``) are the session's *activity* (``a2ui.core.activity`` says what each does to it;
``a2ui.surfaces.activity`` checks and stores them); all seven are kept for snapshots.

Session-level notices (session opened/resumed/closed, consent changed) are not in a session's
order: they go to the agent's and person's groups (``a2ui.infra.groups``) and are listed in
``NOTICES`` for the adapters that translate them.
"""

from enum import StrEnum

MESSAGE_TYPE = "a2ui.event"


class Kind(StrEnum):
    COMPONENT_RENDERED = "component.rendered"
    COMPONENT_UPDATED = "component.updated"
    COMPONENT_REMOVED = "component.removed"
    REQUEST_OPENED = "request.opened"
    REQUEST_CLOSED = "request.closed"
    PROGRESS = "progress"
    NAVIGATE = "navigate"
    NOTIFY = "notify"
    SURFACE_BATCH = "surface.batch"
    CONSENT_REQUIRED = "consent.required"
    RUN_ENDED = "run.ended"
    MESSAGE = "message"
    MESSAGE_BATCH = "message.batch"
    TOOL_CALL = "tool_call"
    STATE_DELTA = "state.delta"
    PLAN = "plan"
    RESOURCES = "resources"
    ROSTER = "roster"
    ARTIFACT = "artifact"


#: Kinds that change what a snapshot holds; the others are shown once and forgotten.
STATEFUL = frozenset({
    Kind.COMPONENT_RENDERED, Kind.COMPONENT_UPDATED, Kind.COMPONENT_REMOVED,
    Kind.REQUEST_OPENED, Kind.REQUEST_CLOSED, Kind.SURFACE_BATCH,
    Kind.MESSAGE, Kind.MESSAGE_BATCH, Kind.TOOL_CALL, Kind.STATE_DELTA, Kind.PLAN,
    Kind.RESOURCES, Kind.ROSTER, Kind.ARTIFACT,
})
TRANSIENT = frozenset(Kind) - STATEFUL


class Notice(StrEnum):
    """Session-level notices, outside the per-session order."""

    SESSION_OPENED = "session.opened"
    SESSION_RESUMED = "session.resumed"
    SESSION_CLOSED = "session.closed"
    CONSENT_CHANGED = "consent.changed"


NOTICES = frozenset(Notice)


def to_message(kind, data, seq=None, epoch=None):
    """The channel-layer message for one session event."""
    return {"type": MESSAGE_TYPE, "kind": str(kind), "data": data, "seq": seq, "epoch": epoch}


def kind_of(message):
    """The event's ``Kind``, or None for a kind this version does not know (ignored by all)."""
    kind = message.get("kind")
    return _KINDS.get(kind) if isinstance(kind, str) else None


_KINDS = {kind.value: kind for kind in Kind}  # a lookup per delivery: not Kind(value)
