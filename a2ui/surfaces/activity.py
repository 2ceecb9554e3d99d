"""A session's activity: chat transcript, tool calls, state document, plans, resource tree,
roster and artifacts (the kinds of ``a2ui.core.activity``). No wire format here.

``apush`` is what every agent path calls (agent WebSocket, REST, Python API, MCP): the event is
checked and sanitized on its own (``a2ui.core.activitycheck.check``, before anything else),
then ``delivery.aemit`` checks the session, and :func:`store` checks it against the stored
activity (a ``state.delta`` whose ``old_value`` differs from the current value, an unknown
artifact, a diff that does not apply, the limits) and writes it, in one transaction holding the
session's ``SessionActivity`` row, before it is numbered and delivered. A refusal is a
``DomainError`` (``invalid_input`` with the field's path) and changes nothing.

:func:`arecord_person_message` records a person's chat message (any client) in the transcript
as role ``user`` and emits it, so every client of the session shows it;
:func:`arecord_person_messages` records several at once (one ``message.batch`` event).
"""

import uuid

from django.db import transaction
from django.utils import timezone

from a2ui.conf import a2ui_settings
from a2ui.core import activity as A
from a2ui.core.activitycheck import check as _check
from a2ui.core.activitycheck import check_against
from a2ui.core.events import Kind
from a2ui.infra import dbthreads
from a2ui.models import SessionActivity

KINDS = A.KINDS

#: The ``SessionActivity`` column each kind changes (and reads).
PART = {
    Kind.MESSAGE: "transcript", Kind.MESSAGE_BATCH: "transcript", Kind.TOOL_CALL: "tool_calls", Kind.STATE_DELTA: "state",
    Kind.PLAN: "plans", Kind.RESOURCES: "resources", Kind.ROSTER: "roster",
    Kind.ARTIFACT: "artifacts",
}


def limits():
    """The configured :class:`~a2ui.core.activity.Limits` (``A2UI['ACTIVITY_*']``)."""
    s = a2ui_settings
    return A.Limits(
        transcript=s.ACTIVITY_TRANSCRIPT_LENGTH, tool_calls=s.ACTIVITY_MAX_TOOL_CALLS,
        plans=s.ACTIVITY_MAX_PLANS, artifacts=s.ACTIVITY_MAX_ARTIFACTS,
        message_length=s.ACTIVITY_MAX_MESSAGE_LENGTH, value_size=s.ACTIVITY_MAX_VALUE_SIZE,
        artifact_size=s.ACTIVITY_MAX_ARTIFACT_SIZE, state_size=s.ACTIVITY_MAX_STATE_SIZE,
        state_depth=s.ACTIVITY_MAX_STATE_DEPTH, tree_nodes=s.ACTIVITY_MAX_TREE_NODES,
        roster=s.ACTIVITY_MAX_ROSTER,
    )


def check(kind, data, prefix=""):
    """The clean data of one activity event (sans-I/O; DomainError ``invalid_input``)."""
    return _check(kind, data, limits(), prefix)


def _locked_row(session_id, part):
    rows = SessionActivity.objects.select_for_update(no_key=True).only(part)
    row = rows.filter(session_id=session_id).first()
    if row is None:
        SessionActivity.objects.bulk_create([SessionActivity(session_id=session_id)],
                                            ignore_conflicts=True)
        row = rows.get(session_id=session_id)
    return row


def store(session_id, kind, data, prefix=""):
    """Check ``data`` (clean) against the stored activity and apply it; return the data to
    emit (a diff update gets ``full_content``). Nothing changes when it is refused."""
    kind = Kind(kind)
    part = PART[kind]
    bounds = limits()
    with transaction.atomic():
        row = _locked_row(session_id, part)
        current = A.from_dict({part: getattr(row, part)})
        data = check_against(current, kind, data, bounds, prefix)
        after = A.to_dict(A.apply(current, kind, data, bounds))
        setattr(row, part, after[part])
        row.updated_at = timezone.now()
        row.save(update_fields=[part, "updated_at"])
    return data


def load(session_id):
    """The session's activity in snapshot form (``a2ui.core.activity.to_dict``)."""
    row = SessionActivity.objects.filter(session_id=session_id).first()
    if row is None:
        return A.to_dict(A.Activity())
    return {part: getattr(row, part) for part in SessionActivity.PARTS}


aload = dbthreads.wrap(load)


def person_message(sender, content, metadata=None, prefix=""):
    """The clean ``message`` data of a person's chat message (role user, a new id)."""
    data = {"message_id": uuid.uuid4().hex, "role": "user", "sender": sender,
            "content": content}
    if metadata:
        data["metadata"] = metadata
    return check(Kind.MESSAGE, data, prefix)


