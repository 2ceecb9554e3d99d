"""What agents show beside components: the activity of a session, as a pure reducer. Sans-I/O.

The kinds ``message``, ``tool_call``, ``state.delta``, ``plan``, ``resources``, ``roster`` and
``artifact`` (``a2ui.core.events``) fold into one :class:`Activity`; ``a2ui.core.state`` keeps it
in the session's state and ``a2ui.surfaces.activity`` stores the same fold in PostgreSQL, so
the snapshot invariant holds for these kinds as for the others. ``apply`` never refuses: the
service checks each event (old values, limits, unknown artifacts) before it emits it.

* ``message``: appended to the transcript (a known ``message_id`` is replaced in place); the
  oldest messages go beyond ``Limits.transcript``. ``message.batch``: each of its
  ``messages`` so, in order.
* ``tool_call``: the call's record by ``call_id``: ``requested`` replaces it, ``status`` and
  ``result`` merge their fields into it (a record is created for an unknown id); the oldest
  calls go beyond ``Limits.tool_calls``.
* ``state.delta``: ``new_value`` set at the dot ``path`` of the state document (objects created
  on the way), or the value there removed (``removed: true``).
* ``plan``: the plan by ``plan_id`` (a known id keeps its place); a new plan beyond
  ``Limits.plans`` pushes out the oldest plan that is no longer ACTIVE.
* ``resources`` / ``roster``: replace the resource tree / the agent roster.
* ``artifact``: ``opened`` replaces the artifact; ``updated`` changes its content by
  ``change_type``: ``full_replace`` (``content`` is the new content), ``partial`` (``content``
  is appended: streamed text), ``diff`` (``content`` is a unified diff; the service applied it
  with :func:`apply_unified_diff` and put the result in ``full_content``).
"""

import copy
from dataclasses import dataclass, field, replace

import whatthepatch
from whatthepatch.exceptions import WhatThePatchException

from a2ui.core.events import Kind

KINDS = frozenset({Kind.MESSAGE, Kind.MESSAGE_BATCH, Kind.TOOL_CALL, Kind.STATE_DELTA,
                   Kind.PLAN, Kind.RESOURCES, Kind.ROSTER, Kind.ARTIFACT})
ROLES = ("agent", "user", "system")
TOOL_PHASES = ("requested", "status", "result")
TOOL_STATUSES = ("PENDING", "RUNNING", "COMPLETED", "FAILED", "CANCELLED")
PLAN_STATUSES = ("ACTIVE", "COMPLETED", "FAILED", "CANCELLED")
AGENT_STATUSES = ("ONLINE", "BUSY", "IDLE", "OFFLINE")
ARTIFACT_PHASES = ("opened", "updated")
CHANGE_TYPES = ("full_replace", "partial", "diff")
ARTIFACT_FIELDS = ("title", "content_type", "read_only", "language")


@dataclass(frozen=True)
class Limits:
    """The bounds of a session's activity (the service reads them from ``A2UI['ACTIVITY_*']``,
    docs/settings.md). The reducer trims by the first three; the checks
    (``a2ui.core.activitycheck``) refuse by the others."""

    transcript: int = 200
    tool_calls: int = 100
    plans: int = 50
    artifacts: int = 20
    message_length: int = 16000
    value_size: int = 65536
    artifact_size: int = 262144
    state_size: int = 262144
    state_depth: int = 16
    tree_nodes: int = 2000
    roster: int = 100


@dataclass(frozen=True)
class Activity:
    """The state document, transcript, tool calls, plans, tree, roster and artifacts.

    Ordered dicts by id (insertion order is display order); ``resources`` and ``roster`` are
    None until an agent sends one.
    """

    state: dict = field(default_factory=dict)
    transcript: dict = field(default_factory=dict)
    tool_calls: dict = field(default_factory=dict)
    plans: dict = field(default_factory=dict)
    resources: dict | None = None
    roster: list | None = None
    artifacts: dict = field(default_factory=dict)


def _trim(items, limit):
    if len(items) <= limit:
        return items
    return dict(list(items.items())[len(items) - limit:])


# The state document --------------------------------------------------------------------------


def split_path(path):
    return path.split(".")


_ABSENT = object()


def get_path(document, path):
    """The value at the dot path, or ``ABSENT``."""
    node = document
    for segment in split_path(path):
        if not isinstance(node, dict) or segment not in node:
            return _ABSENT
        node = node[segment]
    return node


ABSENT = _ABSENT


def path_problem(document, path, removed):
    """Why the delta cannot be applied to ``document`` (a string), or None."""
    segments = split_path(path)
    node = document
    for i, segment in enumerate(segments[:-1]):
        if segment not in node:
            return "there is no value to remove" if removed else None  # created on the way
        node = node[segment]
        if not isinstance(node, dict):
            return f"{'.'.join(segments[:i + 1])} is not an object"
    if removed and segments[-1] not in node:
        return "there is no value to remove"
    return None


def set_path(document, path, value, removed=False):
    """A copy of ``document`` with ``value`` at the dot path (or the value there removed);
    only the objects along the path are copied."""
    segments = split_path(path)
    root = dict(document)
    node = root
    for segment in segments[:-1]:
        child = node.get(segment)
        child = dict(child) if isinstance(child, dict) else {}
        node[segment] = child
        node = child
    if removed:
        node.pop(segments[-1], None)
    else:
        node[segments[-1]] = value
    return root


def json_equal(a, b):
    """Equality of JSON values: booleans are not numbers, 1 equals 1.0, key order is free."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


# Artifacts -----------------------------------------------------------------------------------


class DiffError(ValueError):
    """A unified diff that does not parse or does not apply to the artifact's content."""


def apply_unified_diff(text, diff):
    """``text`` with the unified diff applied (whatthepatch); DiffError if it does not apply.

    The result's lines are joined with ``\\n``; it ends with a newline when ``text`` did.
    """
    try:
        patches = list(whatthepatch.parse_patch(diff))
    except (WhatThePatchException, ValueError, IndexError) as exc:
        raise DiffError(f"not a unified diff: {exc}") from None
    patches = [p for p in patches if p.changes]
    if len(patches) != 1:
        raise DiffError("must be a unified diff of one file with at least one hunk")
    try:
        lines = whatthepatch.apply_diff(patches[0], text)
    except (WhatThePatchException, ValueError, IndexError) as exc:
        raise DiffError(f"does not apply: {exc}") from None
    result = "\n".join(lines)
    return result + "\n" if text.endswith("\n") and lines else result


def artifact_content(current, change_type, content, full_content=None):
    """The artifact's content after one update (``full_content``: the service's result of a
    diff)."""
    if change_type == "full_replace":
        return content
    if change_type == "partial":
        return current + content
    return full_content if full_content is not None else apply_unified_diff(current, content)


# The reducer ---------------------------------------------------------------------------------


def _message(activity, data, limits):
    record = {k: data[k] for k in ("message_id", "role", "sender", "content")}
    record["metadata"] = data.get("metadata") or {}
    transcript = dict(activity.transcript)
    transcript[data["message_id"]] = record
    return replace(activity, transcript=_trim(transcript, limits.transcript))


def _message_batch(activity, data, limits):
    for message in data["messages"]:
        activity = _message(activity, message, limits)
    return activity


def _tool_call(activity, data, limits):
    fields = {k: v for k, v in data.items() if k != "phase"}
    calls = dict(activity.tool_calls)
    if data["phase"] == "requested":
        calls.pop(data["call_id"], None)  # a new request of the same id starts over, last
        calls[data["call_id"]] = fields
    else:
        calls[data["call_id"]] = {**calls.get(data["call_id"], {}), **fields}
    return replace(activity, tool_calls=_trim(calls, limits.tool_calls))


def _delta(activity, data, limits):
    return replace(activity, state=set_path(activity.state, data["path"], data.get("new_value"),
                                            data.get("removed", False)))


def _plan(activity, data, limits):
    plans = dict(activity.plans)
    if data["plan_id"] not in plans and len(plans) >= limits.plans:
        done = next((pid for pid, p in plans.items() if p["status"] != "ACTIVE"), None)
        if done is not None:
            del plans[done]
    plans[data["plan_id"]] = {k: data[k] for k in ("plan_id", "title", "content", "status")}
    return replace(activity, plans=plans)


def _resources(activity, data, limits):
    return replace(activity, resources=data["root"])


def _roster(activity, data, limits):
    return replace(activity, roster=data["agents"])


def _artifact(activity, data, limits):
    artifacts = dict(activity.artifacts)
    aid = data["artifact_id"]
    if data["phase"] == "opened":
        artifacts[aid] = {"artifact_id": aid, "content": data["content"],
                          **{k: data[k] for k in ARTIFACT_FIELDS if k in data}}
        return replace(activity, artifacts=artifacts)
    current = artifacts.get(aid)
    if current is None:
        return activity  # the service refuses updates of unknown artifacts
    content = artifact_content(current["content"], data["change_type"], data["content"],
                               data.get("full_content"))
    artifacts[aid] = {**current, **{k: data[k] for k in ARTIFACT_FIELDS if k in data},
                      "content": content}
    return replace(activity, artifacts=artifacts)


_REDUCERS = {
    Kind.MESSAGE: _message, Kind.MESSAGE_BATCH: _message_batch, Kind.TOOL_CALL: _tool_call,
    Kind.STATE_DELTA: _delta, Kind.PLAN: _plan, Kind.RESOURCES: _resources, Kind.ROSTER: _roster,
    Kind.ARTIFACT: _artifact,
}


DEFAULT_LIMITS = Limits()


def apply(activity, kind, data, limits=DEFAULT_LIMITS):
    """The activity after one event of an activity kind (others: ``activity`` itself)."""
    reducer = _REDUCERS.get(kind)
    return activity if reducer is None else reducer(activity, data, limits)


# Snapshots -----------------------------------------------------------------------------------


def to_dict(activity):
    """The snapshot form: ``{"state", "transcript", "tool_calls", "plans", "resources",
    "roster", "artifacts"}`` with lists in display order (what the database keeps)."""
    return {
        "state": activity.state,
        "transcript": list(activity.transcript.values()),
        "tool_calls": list(activity.tool_calls.values()),
        "plans": list(activity.plans.values()),
        "resources": activity.resources,
        "roster": activity.roster,
        "artifacts": list(activity.artifacts.values()),
    }


def from_dict(stored):
    """The :class:`Activity` of a ``to_dict`` value (None or ``{}``: an empty one)."""
    stored = copy.deepcopy(stored or {})
    return Activity(
        state=stored.get("state") or {},
        transcript={m["message_id"]: m for m in stored.get("transcript") or []},
        tool_calls={c["call_id"]: c for c in stored.get("tool_calls") or []},
        plans={p["plan_id"]: p for p in stored.get("plans") or []},
        resources=stored.get("resources"),
        roster=stored.get("roster"),
        artifacts={a["artifact_id"]: a for a in stored.get("artifacts") or []},
    )
