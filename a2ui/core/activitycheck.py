"""Checking activity events before they change anything. Sans-I/O.

:func:`check` validates and sanitizes one event's data on its own (types, ids, text through
``a2ui.core.content.sanitize``, free JSON values under the one URL policy, sizes); it returns the
clean data the services store and emit. :func:`check_against` then checks it against the
session's current :class:`~a2ui.core.activity.Activity`: a ``state.delta`` whose
``old_value`` differs from the value at its path, a path through a value that is not an
object, a removal of nothing, an update of an unknown artifact, a diff that does not apply, too
many plans or artifacts, a state document over its size or depth. Every refusal is a
:class:`~a2ui.core.errors.DomainError` ``invalid_input`` naming the field (``prefix`` + the
field, e.g. ``params.event.old_value``) and the reason.

Text: names, titles and messages are display text (``sanitize_text``: no markup, bidi
controls removed); message and plan ``content`` is markdown (``sanitize_markdown``: links
vetted by the URL policy). Artifact ``content`` is code or a document shown as text, never
HTML: it is cleaned (``clean_display_string``: control and bidi characters removed, lone
surrogates replaced), not HTML-escaped, so ``a < b`` stays as written; clients put it in the
page as text only.
"""

import json
import re

from a2ui.core import activity as A
from a2ui.core.content import fields as F
from a2ui.core.content.sanitize import (
    clean_display_string,
    sanitize_markdown,
    sanitize_text,
    sanitize_tree,
)
from a2ui.core.errors import invalid_input
from a2ui.core.events import Kind

NAME_LENGTH = 200
PATH_SEGMENT = re.compile(r"[A-Za-z0-9_\-:$@]{1,128}")
LANGUAGE = re.compile(r"[A-Za-z0-9+#._-]{1,32}")
MAX_PATH_LENGTH = 1024
#: Top-level keys of the state document no agent may use: seed 003's STATE_DELTA says the
#: changes of components and requests under them (a2ui.agui.mapping).
RESERVED_KEYS = ("components", "requests")


def _join(prefix, name):
    return f"{prefix}.{name}" if prefix else name


class _Checker:
    def __init__(self, data, limits, prefix):
        if not isinstance(data, dict):
            raise invalid_input(prefix or "data", "must be an object")
        self.data, self.limits, self.prefix, self.out = data, limits, prefix, {}

    def path(self, name):
        return _join(self.prefix, name)

    def has(self, name):
        return self.data.get(name) is not None

    def ident(self, name, required=True):
        value = F.identifier(self.data, name, self.prefix, required=required)
        F.set_default(self.out, name, value)

    def enum(self, name, choices, required=True):
        value = F.enum(self.data, name, choices, self.prefix, required=required)
        F.set_default(self.out, name, value)

    def text(self, name, required=True, max_length=NAME_LENGTH, clean=sanitize_text):
        value = F.string(self.data, name, self.prefix, required=required)
        if F.is_missing(value):
            return
        if len(value) > max_length:
            raise invalid_input(self.path(name), f"longer than {max_length} characters")
        self.out[name] = clean(value)

    def value(self, name, required=False, as_object=False):
        """A free JSON value (sanitized, URL keys vetted), at most ``value_size`` as JSON."""
        if name not in self.data or (self.data[name] is None and not required):
            if required:
                raise invalid_input(self.path(name), "is required")
            return
        value = self.data[name]
        if as_object and not isinstance(value, dict):
            raise invalid_input(self.path(name), "must be an object")
        clean = sanitize_tree(value, path=self.path(name))
        if _size(clean) > self.limits.value_size:
            raise invalid_input(self.path(name), f"larger than {self.limits.value_size} bytes "
                                "as JSON")
        self.out[name] = clean


def _size(value):
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def _depth(value):
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


def _message(c):
    c.ident("message_id")
    c.enum("role", A.ROLES)
    c.text("sender")
    c.text("content", max_length=c.limits.message_length, clean=sanitize_markdown)
    c.value("metadata", as_object=True)


def _message_batch(c):
    messages = c.data.get("messages")
    if not isinstance(messages, list) or not messages:
        raise invalid_input(c.path("messages"), "must be a non-empty list of messages")
    if len(messages) > c.limits.transcript:
        raise invalid_input(c.path("messages"), f"more than {c.limits.transcript} messages")
    c.out["messages"] = [check(Kind.MESSAGE, m, c.limits, c.path(f"messages.{i}"))
                         for i, m in enumerate(messages)]


def _tool_call(c):
    c.ident("call_id")
    c.enum("phase", A.TOOL_PHASES)
    requested = c.out["phase"] == "requested"
    c.text("tool_name", required=requested)
    c.value("parameters", as_object=True)
    if requested:
        c.out.setdefault("parameters", {})
    c.text("agent_id", required=False)
    c.enum("status", A.TOOL_STATUSES, required=False)
    progress = F.number(c.data, "progress", c.prefix, minimum=0, maximum=100)
    F.set_default(c.out, "progress", progress)
    c.text("message", required=False, max_length=c.limits.message_length)
    c.value("result")
    c.text("error", required=False, max_length=c.limits.message_length)
    if "status" not in c.out:
        c.out["status"] = {"requested": "PENDING", "status": "RUNNING"}.get(
            c.out["phase"], "FAILED" if "error" in c.out else "COMPLETED")


def _delta(c):
    path = F.string(c.data, "path", c.prefix, required=True)
    segments = path.split(".")
    if len(path) > MAX_PATH_LENGTH or not all(PATH_SEGMENT.fullmatch(s) for s in segments):
        raise invalid_input(c.path("path"), "must be a dot path of keys of 1-128 characters "
                            "of [A-Za-z0-9_-:$@]")
    if segments[0] in RESERVED_KEYS:
        raise invalid_input(c.path("path"), f"{segments[0]} is reserved (the AG-UI socket says "
                            "components' and requests' changes under it)")
    if len(segments) > c.limits.state_depth:
        raise invalid_input(c.path("path"), f"deeper than {c.limits.state_depth} levels")
    c.out["path"] = path
    removed = F.boolean(c.data, "removed", c.prefix, default=False)
    c.out["removed"] = removed
    if "old_value" in c.data:  # null: the value there must be null
        old = c.data["old_value"]
        c.out["old_value"] = None if old is None else sanitize_tree(old, path=c.path("old_value"))
    if removed:
        if "new_value" in c.data and c.data["new_value"] is not None:
            raise invalid_input(c.path("new_value"), "must be left out when removed is true")
    else:
        if "new_value" not in c.data:
            raise invalid_input(c.path("new_value"), "is required unless removed is true")
        c.out["new_value"] = (None if c.data["new_value"] is None
                              else sanitize_tree(c.data["new_value"], path=c.path("new_value")))
        if _size(c.out["new_value"]) > c.limits.value_size:
            raise invalid_input(c.path("new_value"),
                                f"larger than {c.limits.value_size} bytes as JSON")


def _plan(c):
    c.ident("plan_id")
    c.text("title")
    c.text("content", max_length=c.limits.message_length, clean=sanitize_markdown)
    c.enum("status", A.PLAN_STATUSES)


def _tree(node, c, path, depth, count):
    if not isinstance(node, dict):
        raise invalid_input(path, "must be an object")
    if depth > 32:
        raise invalid_input(path, "nested deeper than 32 levels")
    count[0] += 1
    if count[0] > c.limits.tree_nodes:
        raise invalid_input(_join(c.prefix, "root"), f"more than {c.limits.tree_nodes} nodes")
    out = {}
    for name in ("id", "name", "node_type"):
        value = node.get(name)
        if not isinstance(value, str) or not value.strip():
            raise invalid_input(_join(path, name), "must be a non-empty string")
        if len(value) > NAME_LENGTH:
            raise invalid_input(_join(path, name), f"longer than {NAME_LENGTH} characters")
        out[name] = sanitize_text(value)
    children = node.get("children")
    if children is not None:
        if not isinstance(children, list):
            raise invalid_input(_join(path, "children"), "must be a list")
        out["children"] = [_tree(child, c, f"{_join(path, 'children')}[{i}]", depth + 1, count)
                           for i, child in enumerate(children)]
    return out


def _resources(c):
    if not c.has("root"):
        raise invalid_input(c.path("root"), "is required")
    c.out["root"] = _tree(c.data["root"], c, c.path("root"), 0, [0])


def _roster(c):
    agents = F.array(c.data, "agents", c.prefix, required=True)
    if len(agents) > c.limits.roster:
        raise invalid_input(c.path("agents"), f"more than {c.limits.roster} agents")
    out = []
    for i, agent in enumerate(agents):
        sub = _Checker(agent, c.limits, f"{c.path('agents')}[{i}]")
        sub.text("id")
        sub.text("name")
        sub.enum("status", A.AGENT_STATUSES)
        sub.value("metadata", as_object=True)
        out.append(sub.out)
    c.out["agents"] = out


def _artifact(c):
    c.ident("artifact_id")
    c.enum("phase", A.ARTIFACT_PHASES)
    opened = c.out["phase"] == "opened"
    c.text("content", max_length=c.limits.artifact_size, clean=clean_display_string)
    c.text("title", required=False)
    c.text("content_type", required=False, max_length=64)
    language = F.string(c.data, "language", c.prefix)
    if not F.is_missing(language):
        if not LANGUAGE.fullmatch(language):
            raise invalid_input(c.path("language"), "must be 1-32 characters of "
                                "[A-Za-z0-9+#._-]")
        c.out["language"] = language
    F.set_default(c.out, "read_only", F.boolean(c.data, "read_only", c.prefix))
    if opened:
        if c.has("change_type"):
            raise invalid_input(c.path("change_type"), "is for updates only")
    else:
        c.enum("change_type", A.CHANGE_TYPES)


_CHECKS = {
    Kind.MESSAGE: _message, Kind.MESSAGE_BATCH: _message_batch, Kind.TOOL_CALL: _tool_call, Kind.STATE_DELTA: _delta,
    Kind.PLAN: _plan, Kind.RESOURCES: _resources, Kind.ROSTER: _roster,
    Kind.ARTIFACT: _artifact,
}


def check(kind, data, limits=A.DEFAULT_LIMITS, prefix=""):
    """The clean data of one activity event, or DomainError ``invalid_input``."""
    checker = _Checker(data, limits, prefix)
    _CHECKS[Kind(kind)](checker)
    return checker.out


def check_against(activity, kind, data, limits=A.DEFAULT_LIMITS, prefix=""):
    """``data`` (already through :func:`check`) if it may apply to ``activity``; a diff
    update gets the artifact's resulting ``full_content``."""
    if kind == Kind.STATE_DELTA:
        return _delta_against(activity, data, limits, prefix)
    if kind == Kind.PLAN and data["plan_id"] not in activity.plans and \
            len(activity.plans) >= limits.plans and \
            all(p["status"] == "ACTIVE" for p in activity.plans.values()):
        raise invalid_input(_join(prefix, "plan_id"), f"the session has {limits.plans} active "
                            "plans already: finish one first")
    if kind == Kind.ARTIFACT:
        return _artifact_against(activity, data, limits, prefix)
    return data


def _delta_against(activity, data, limits, prefix):
    current = A.get_path(activity.state, data["path"])
    if "old_value" in data:
        if current is A.ABSENT or not A.json_equal(current, data["old_value"]):
            raise invalid_input(_join(prefix, "old_value"), "does not match the current value "
                                f"at {data['path']}" + (" (there is none)"
                                                        if current is A.ABSENT else ""))
    problem = A.path_problem(activity.state, data["path"], data["removed"])
    if problem:
        raise invalid_input(_join(prefix, "path"), problem)
    if not data["removed"]:
        depth = len(data["path"].split(".")) + _depth(data["new_value"])
        if depth > limits.state_depth:
            raise invalid_input(_join(prefix, "new_value"), "the state document would be "
                                f"deeper than {limits.state_depth} levels")
        document = A.set_path(activity.state, data["path"], data["new_value"])
        if _size(document) > limits.state_size:
            raise invalid_input(_join(prefix, "new_value"), "the state document would be "
                                f"larger than {limits.state_size} bytes")
    return data


def _artifact_against(activity, data, limits, prefix):
    aid = data["artifact_id"]
    current = activity.artifacts.get(aid)
    if data["phase"] == "opened":
        if current is None and len(activity.artifacts) >= limits.artifacts:
            raise invalid_input(_join(prefix, "artifact_id"), f"the session has {limits.artifacts}"
                                " artifacts already")
        return data
    if current is None:
        raise invalid_input(_join(prefix, "artifact_id"), "no artifact of this id is open")
    if data["change_type"] == "diff":
        try:
            result = A.apply_unified_diff(current["content"], data["content"])
        except A.DiffError as exc:
            raise invalid_input(_join(prefix, "content"), f"the diff {exc}") from None
        data = {**data, "full_content": result}
    else:
        result = A.artifact_content(current["content"], data["change_type"], data["content"])
    if len(result) > limits.artifact_size:
        raise invalid_input(_join(prefix, "content"), "the artifact would be longer than "
                            f"{limits.artifact_size} characters")
    return data

