"""One AG-UI 1.0 run: the core's session events as AG-UI 1.0 events. Sans-I/O.

:class:`Run` is the state of one run's stream: what it opened (steps, tool calls), which
activity messages it has shown, the state document (for STATE_DELTA as RFC 6902 patches made
by ``jsonpatch``), and how it ends (:meth:`Run.finish`, :meth:`Run.interrupt`,
:meth:`Run.error`, each closing what the run opened first). Events are the ``ag_ui.core``
models of the official ``ag-ui-protocol`` package; docs/protocol-agui.md has the table.

=====================  =========================================================================
session event          AG-UI 1.0
=====================  =========================================================================
notify                 TEXT_MESSAGE_START (assistant) / CONTENT / END
message (native),      TEXT_MESSAGE_START (its role: agent assistant, system, user: the person's
message.batch          words from another client) / CONTENT / END, ``messageId`` its message_id;
                       a message still being written (``metadata.streaming``, a remote agent's
                       reply: a2ui.remote) is START once, then CONTENT of what each version adds,
                       END with its final version (or when the run ends)
progress               STEP_STARTED ``stepName`` = task_id (once), ACTIVITY_SNAPSHOT
                       ``a2ui-progress``, STEP_FINISHED when value >= total
tool_call (native)     requested: TOOL_CALL_START / ARGS / END; result: TOOL_CALL_RESULT;
                       status: ACTIVITY_SNAPSHOT ``a2ui-tool-status``
state.delta (native)   STATE_DELTA, the JSON Patch between the document before and after
surface.batch          ACTIVITY_SNAPSHOT ``a2ui-surface`` ``{"a2ui_operations": [...]}`` the first
                       time a surface is touched in the run, ACTIVITY_DELTA appending after
component.rendered     ACTIVITY_SNAPSHOT ``a2ui-component`` ``{componentType, data, metadata?}``
component.updated      ACTIVITY_DELTA (the patch between old and new content), or a snapshot
component.removed      ACTIVITY_SNAPSHOT ``a2ui-component`` ``{componentType, removed: true}``
plan, resources,       ACTIVITY_SNAPSHOT ``a2ui-plan`` / ``a2ui-resources`` / ``a2ui-roster`` /
roster, artifact       ``a2ui-artifact`` (content: the event's data)
request.opened         ends the run: RUN_FINISHED ``outcome: interrupt`` (:meth:`Run.interrupt`)
navigate               CUSTOM ``a2ui.navigate``
consent.required       CUSTOM ``a2ui.consent_required``
request.closed         CUSTOM ``a2ui.request_closed``
run.ended              the run's own: RUN_FINISHED / RUN_ERROR (``a2ui.agui1.stream``); another
                       run's: not shown (its own stream ends it)
=====================  =========================================================================

The run's snapshot (:meth:`Run.screen`, after RUN_STARTED and STATE_SNAPSHOT): what the session
holds that the client does not (its ``messages`` say what it has): every surface, component,
plan, artifact, the tree, the roster and each kept tool call's status as the ACTIVITY_SNAPSHOT
a live event gives, and the agent's transcript messages whose id the client lacks.
"""

import copy
import json
import uuid

import jsonpatch
from ag_ui.core import (
    ActivityDeltaEvent,
    ActivitySnapshotEvent,
    CustomEvent,
    Interrupt,
    RunErrorEvent,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunStartedEvent,
    StateDeltaEvent,
    StateSnapshotEvent,
    StepFinishedEvent,
    StepStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)
from ag_ui.core.version import PROTOCOL_VERSION

from a2ui.agui1 import interrupts
from a2ui.core import activity as A

SURFACE = "a2ui-surface"
OPERATIONS = "a2ui_operations"  # @ag-ui/a2ui-middleware's A2UI_OPERATIONS_KEY
NATIVE_ACTIVITIES = {"plan": "a2ui-plan", "resources": "a2ui-resources",
                     "roster": "a2ui-roster", "artifact": "a2ui-artifact"}
ROLES = {"agent": "assistant", "system": "system", "user": "user"}


def known_messages(messages):
    """``Run.screen``'s ``known``: each message's id, with its content when it is an activity
    message (a ``RunAgentInput``'s ``messages``)."""
    return {str(m.id): (m.content if getattr(m, "role", None) == "activity" else None)
            for m in messages or ()}


def new_id():
    return uuid.uuid4().hex


def _text(value):
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))


def _delete(key):
    """The deleteSurface of the surface activity ``key`` (``a2ui-surface-<surfaceId>``)."""
    return {"version": "v0.9", "deleteSurface": {"surfaceId": key[len(SURFACE) + 1:]}}


def _surface_gone(key, content, surfaces):
    """A surface activity a client holds (``known``) that the session no longer has and
    whose operations do not end by deleting it: it was deleted while the client was away."""
    if not key.startswith(f"{SURFACE}-") or key[len(SURFACE) + 1:] in surfaces:
        return False
    operations = content.get(OPERATIONS) if isinstance(content, dict) else None
    return bool(operations) and isinstance(operations, list) and not (
        isinstance(operations[-1], dict) and "deleteSurface" in operations[-1])


class Run:
    """The AG-UI 1.0 stream of one run (``thread_id``, ``run_id``)."""

    def __init__(self, thread_id, run_id, *, activity=None, components=(), surfaces=None,
                 make_id=new_id):
        self.thread_id, self.run_id = thread_id, run_id
        # The session's activity (a2ui.core.activity) when the run started, folded forward
        # with each activity event: its state document is what STATE_DELTA patches.
        self.activity = activity if activity is not None else A.Activity()
        # What the session held when the run started: a component or surface touched in the
        # run is shown whole the first time, so a frontend never patches what it lacks.
        self.components = {c["component_id"]: self._component_content(c) for c in components}
        self.surfaces = {k: list(v) for k, v in (surfaces or {}).items()}
        self.shown = {}  # activity message id -> content as the client has it
        self.kinds = {}  # activity message id -> its activityType
        self.steps = []  # open steps, in order
        self.calls = {}  # tool call id -> True once ended
        self.pending = []  # Interrupts waiting to end the run
        self.streams = {}  # message id -> its text shown so far, while it is being written
        self.ended = False
        self.make_id = make_id

    # Start and end ---------------------------------------------------------------------------

    def start(self):
        return [RunStartedEvent(thread_id=self.thread_id, run_id=self.run_id,
                                protocol_version=PROTOCOL_VERSION),
                StateSnapshotEvent(snapshot=copy.deepcopy(self.activity.state))]

    def screen(self, known=None):
        """What the session holds, for a client that lacks it: ``known`` maps the ids of the
        messages the client sent to their content (an activity message's content, else
        None). Every surface, component, plan, artifact, the tree, the roster and each kept
        tool call's status as an ACTIVITY_SNAPSHOT (left out when the client holds the same
        content under that id), then the agent's and system's transcript messages whose id it
        lacks. The person's own earlier messages are not replayed: they are the client's
        history (recorded under ids of the session's own)."""
        known = known or {}
        out = []

        def show(key, kind, content):
            if key in known and known[key] == content:
                self.shown[key], self.kinds[key] = copy.deepcopy(content), kind
                return
            out.extend(self._snapshot(key, kind, content))

        for surface_id, operations in self.surfaces.items():
            show(f"{SURFACE}-{surface_id}", SURFACE, {OPERATIONS: list(operations)})
        for key, content in known.items():  # a surface it holds, deleted while it was away
            if _surface_gone(key, content, self.surfaces):
                out.extend(self._snapshot(key, SURFACE, {OPERATIONS: [_delete(key)]}))
        for cid, content in self.components.items():
            show(f"a2ui-component-{cid}", "a2ui-component", copy.deepcopy(content))
        act = self.activity
        for plan_id, plan in act.plans.items():
            show(f"{NATIVE_ACTIVITIES['plan']}-{plan_id}", NATIVE_ACTIVITIES["plan"],
                 copy.deepcopy(plan))
        for artifact_id, artifact in act.artifacts.items():
            show(f"{NATIVE_ACTIVITIES['artifact']}-{artifact_id}", NATIVE_ACTIVITIES["artifact"],
                 copy.deepcopy(artifact))
        if act.resources is not None:
            show(NATIVE_ACTIVITIES["resources"], NATIVE_ACTIVITIES["resources"],
                 {"root": copy.deepcopy(act.resources)})
        if act.roster is not None:
            show(NATIVE_ACTIVITIES["roster"], NATIVE_ACTIVITIES["roster"],
                 {"agents": copy.deepcopy(act.roster)})
        for call_id, call in act.tool_calls.items():
            content = {k: call[k] for k in ("call_id", "tool_name", "status", "progress",
                                             "message", "error") if call.get(k) is not None}
            show(f"a2ui-tool-{call_id}", "a2ui-tool-status", content)
        for message in act.transcript.values():
            if message.get("role") != "user" and str(message.get("message_id")) not in known:
                out += self._message(message)
        return out

    def _close(self):
        out = [TextMessageEndEvent(message_id=m) for m in self.streams]
        self.streams = {}
        out += [ToolCallEndEvent(tool_call_id=c) for c, ended in self.calls.items() if not ended]
        self.calls = dict.fromkeys(self.calls, True)
        out += [StepFinishedEvent(step_name=s) for s in reversed(self.steps)]
        self.steps = []
        return out

    def finish(self, result=None):
        out = self._close()
        self.ended = True
        return [*out, RunFinishedEvent(thread_id=self.thread_id, run_id=self.run_id,
                                       result=result)]

    def interrupt(self, found=None):
        """End the run waiting for ``found`` (default: what the events asked for)."""
        out = self._close()
        self.ended = True
        outcome = RunFinishedInterruptOutcome(interrupts=list(found or self.pending))
        return [*out, RunFinishedEvent(thread_id=self.thread_id, run_id=self.run_id,
                                       outcome=outcome)]

    def error(self, message, code=None):
        self.ended = True
        return [RunErrorEvent(message=message or "The run failed.", code=code)]

    def resync(self, *, activity, components=(), surfaces=None):
        """After a lost event (a gap in the session's order, or a sequence counter Redis lost):
        the state document and everything this run has shown, whole again from the session's
        state (a snapshot replaces what the client holds). Text, steps and tool calls already
        sent stay as they are; progress snapshots are transient and stay as shown."""
        if self.ended:
            return []
        self.activity = activity if activity is not None else A.Activity()
        self.components = {c["component_id"]: self._component_content(c) for c in components}
        self.surfaces = {k: list(v) for k, v in (surfaces or {}).items()}
        out = [StateSnapshotEvent(snapshot=copy.deepcopy(self.activity.state))]
        for key in list(self.shown):
            content = self._current(key)
            if content is not None and content != self.shown[key]:
                out += self._snapshot(key, self.kinds[key], content)
        return out

    def _current(self, key):
        """What activity ``key`` shows now, from the run's (resynced) state; None: unchanged."""
        kind = self.kinds.get(key)
        if kind == "a2ui-component":
            cid = key[len("a2ui-component-"):]
            return self.components.get(cid) or {
                "componentType": self.shown[key].get("componentType", ""), "removed": True}
        if kind == SURFACE:
            surface_id = key[len(SURFACE) + 1:]
            operations = self.surfaces.get(surface_id)
            if operations is None:  # deleted meanwhile
                operations = [_delete(key)]
            return {OPERATIONS: list(operations)}
        act = self.activity
        item = key[len(kind) + 1:] if kind and key != kind else None
        content = {
            NATIVE_ACTIVITIES["plan"]: lambda: act.plans.get(item),
            NATIVE_ACTIVITIES["artifact"]: lambda: act.artifacts.get(item),
            NATIVE_ACTIVITIES["resources"]: lambda: {"root": act.resources},
            NATIVE_ACTIVITIES["roster"]: lambda: {"agents": act.roster},
        }.get(kind, lambda: None)()
        return copy.deepcopy(content) if isinstance(content, dict) else None

    # Events ----------------------------------------------------------------------------------

    def translate(self, kind, data):
        """AG-UI events for one session event (``kind`` its name); [] when not shown."""
        if self.ended or not isinstance(data, dict):
            return []
        tagged = data.get("run_id")
        if tagged is not None and tagged != self.run_id:
            return []  # the agent said it belongs to another run
        handler = getattr(self, "_" + str(kind).replace(".", "_"), None)
        before = self.activity
        if str(kind) in A.KINDS:
            self.activity = A.apply(before, kind, data)
        if handler is None:
            name = NATIVE_ACTIVITIES.get(str(kind))
            return self._activity(str(kind), name, data) if name else []
        return handler(data) if str(kind) != "state.delta" else self._state_delta(before)

    def _text_message(self, message_id, role, text):
        out = [TextMessageStartEvent(message_id=message_id, role=role)]
        if text:
            out.append(TextMessageContentEvent(message_id=message_id, delta=text))
        return [*out, TextMessageEndEvent(message_id=message_id)]

    def _notify(self, data):
        title, message = data.get("title"), data.get("message")
        text = f"{title}\n\n{message}" if title and message else (message or title or "")
        return self._text_message(self.make_id(), "assistant", _text(text))

    own_messages = frozenset()  # the transcript ids of the run's own new messages

    def _message(self, data):
        # A person's message heard live came from another client: the client lacks it. The
        # run's own are recorded before its stream joins, but their event may be numbered
        # after: those are the client's already.
        role = ROLES.get(data.get("role"))
        if role is None or data.get("message_id") in self.own_messages:
            return []
        message_id = str(data.get("message_id") or self.make_id())
        text = _text(data.get("content"))
        metadata = data.get("metadata")
        streaming = isinstance(metadata, dict) and metadata.get("streaming") is True
        shown = self.streams.get(message_id)
        if shown is None and not streaming:
            return self._text_message(message_id, role, text)
        out = []
        if shown is None:
            out.append(TextMessageStartEvent(message_id=message_id, role=role))
            shown = ""
        added = text[len(shown):] if text.startswith(shown) else text
        if added:
            out.append(TextMessageContentEvent(message_id=message_id, delta=added))
        if streaming:
            self.streams[message_id] = text
        else:
            self.streams.pop(message_id, None)
            out.append(TextMessageEndEvent(message_id=message_id))
        return out

    def _message_batch(self, data):
        return [event for m in data.get("messages") or () for event in self._message(m)]

    def _progress(self, data):
        task = str(data.get("task_id"))
        out = []
        if task not in self.steps:
            self.steps.append(task)
            out.append(StepStartedEvent(step_name=task))
        content = {k: data[k] for k in ("task_id", "progress_type", "value", "total", "message")
                   if data.get(k) is not None}
        out += self._snapshot(f"a2ui-progress-{task}", "a2ui-progress", content)
        value, total = data.get("value"), data.get("total")
        if (isinstance(value, int | float) and isinstance(total, int | float)
                and not isinstance(value, bool) and total > 0 and value >= total):
            self.steps.remove(task)
            out.append(StepFinishedEvent(step_name=task))
        return out

    def _tool_call(self, data):
        call = str(data.get("call_id"))
        phase = data.get("phase")
        if phase == "requested":
            return self._start_call(call, data, data.get("parameters"))
        if phase == "result":
            out = [] if call in self.calls else self._start_call(call, data, None)
            if not self.calls.get(call):
                out.append(ToolCallEndEvent(tool_call_id=call))
                self.calls[call] = True
            failed = data.get("error")
            content = {"error": failed} if failed is not None else data.get("result")
            return [*out, ToolCallResultEvent(message_id=self.make_id(), tool_call_id=call,
                                              content=_text(content), role="tool")]
        content = {k: data[k] for k in ("call_id", "tool_name", "status", "progress", "message",
                                         "error") if data.get(k) is not None}
        return self._snapshot(f"a2ui-tool-{call}", "a2ui-tool-status", content)

    def _start_call(self, call, data, parameters):
        self.calls[call] = False
        out = [ToolCallStartEvent(tool_call_id=call,
                                  tool_call_name=str(data.get("tool_name") or "tool"))]
        if parameters is not None:
            out.append(ToolCallArgsEvent(tool_call_id=call, delta=_text(parameters)))
        if data.get("phase") == "requested":
            out.append(ToolCallEndEvent(tool_call_id=call))
            self.calls[call] = True
        return out

    def _state_delta(self, before):
        patch = jsonpatch.make_patch(before.state, self.activity.state).patch
        return [StateDeltaEvent(delta=patch)] if patch else []

    def _surface_batch(self, data):
        by_surface = {}
        for message in data.get("messages") or []:
            body = next((v for k, v in message.items() if k != "version"), None)
            if isinstance(body, dict) and body.get("surfaceId") is not None:
                by_surface.setdefault(str(body["surfaceId"]), []).append(message)
        out = []
        for surface_id, messages in by_surface.items():
            key = f"{SURFACE}-{surface_id}"
            known = self.surfaces.get(surface_id, [])
            created = [i for i, m in enumerate(messages) if "createSurface" in m]
            if created:  # a new surface (or one deleted and created again) starts from nothing
                self.surfaces[surface_id] = messages[created[-1]:]
            else:
                self.surfaces[surface_id] = known + messages
            if key in self.shown:
                out.append(ActivityDeltaEvent(
                    message_id=key, activity_type=SURFACE,
                    patch=[{"op": "add", "path": f"/{OPERATIONS}/-", "value": m}
                           for m in messages]))
                self.shown[key][OPERATIONS].extend(messages)
            else:
                out += self._snapshot(key, SURFACE, {OPERATIONS: list(self.surfaces[surface_id])})
        return out

    @staticmethod
    def _component_content(c):
        content = {"componentType": c["component_type"], "data": c.get("data")}
        if c.get("metadata"):
            content["metadata"] = c["metadata"]
        return content

    def _component_rendered(self, data):
        content = self._component_content(data)
        self.components[data["component_id"]] = content
        return self._snapshot(f"a2ui-component-{data['component_id']}", "a2ui-component",
                              content)

    def _component_updated(self, data):
        from a2ui.core.content.updates import _OPERATIONS  # pure: the operation applied to a copy

        cid = data["component_id"]
        before = self.components.get(cid)
        apply = _OPERATIONS.get(data.get("operation"))
        if before is None or apply is None or not isinstance(data.get("data"), dict):
            return []  # not known to this run: nothing to patch
        after = {**before, "data": apply(before.get("data") or {}, data["data"])}
        self.components[cid] = after
        key = f"a2ui-component-{cid}"
        if key not in self.shown:
            return self._snapshot(key, "a2ui-component", after)
        patch = jsonpatch.make_patch(self.shown[key], after).patch
        self.shown[key] = copy.deepcopy(after)
        return [ActivityDeltaEvent(message_id=key, activity_type="a2ui-component",
                                   patch=patch)] if patch else []

    def _component_removed(self, data):
        cid = data["component_id"]
        before = self.components.pop(cid, None) or {}
        content = {"componentType": before.get("componentType", ""), "removed": True}
        return self._snapshot(f"a2ui-component-{cid}", "a2ui-component", content)

    def _activity(self, kind, name, data):
        """plan, resources, roster, artifact: the whole reduced record, each time."""
        act = self.activity
        if kind == "plan":
            item, content = data.get("plan_id"), act.plans.get(data.get("plan_id"))
        elif kind == "artifact":
            item, content = data.get("artifact_id"), act.artifacts.get(data.get("artifact_id"))
        elif kind == "resources":
            item, content = None, {"root": act.resources}
        else:
            item, content = None, {"agents": act.roster}
        if not isinstance(content, dict):
            return []
        key = f"{name}-{item}" if item is not None else name
        return self._snapshot(key, name, copy.deepcopy(content))

    def _snapshot(self, key, activity, content):
        self.shown[key] = copy.deepcopy(content)
        self.kinds[key] = activity
        return [ActivitySnapshotEvent(message_id=key, activity_type=activity, content=content)]

    def _request_opened(self, data):
        found = interrupts.of_request(data["kind"], data["params"])
        if all(i.id != found.id for i in self.pending):  # read at the start and heard again
            self.pending.append(found)
        return []

    def _navigate(self, data):
        return [CustomEvent(name="a2ui.navigate", value=data)]

    def _consent_required(self, data):
        return [CustomEvent(name="a2ui.consent_required", value=data)]

    def _request_closed(self, data):
        return [CustomEvent(name="a2ui.request_closed", value=data)]


__all__ = ["Run", "Interrupt", "new_id"]
