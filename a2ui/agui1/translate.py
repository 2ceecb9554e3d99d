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
                       END with its final version (or when the run ends); an agent's reasoning
                       (``metadata.reasoning``) is REASONING_START, REASONING_MESSAGE_START /
                       CONTENT / END, REASONING_END, streamed alike
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

from ag_ui.core import (
    Interrupt,
    RunErrorEvent,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunStartedEvent,
    StateSnapshotEvent,
    StepFinishedEvent,
    ToolCallEndEvent,
)
from ag_ui.core.version import PROTOCOL_VERSION

from a2ui.agui1.kinds import (
    NATIVE_ACTIVITIES,
    OPERATIONS,
    SURFACE,
    Kinds,
    delete_patch,
    known_messages,
    new_id,
    surface_gone,
)
from a2ui.core import activity as A


class Run(Kinds):
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
        self.reasoning_ids = set()  # those of them that are reasoning
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
            if surface_gone(key, content, self.surfaces):
                out.extend(self._snapshot(key, SURFACE, {OPERATIONS: [delete_patch(key)]}))
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
        out = [event for m in self.streams for event in self._end_stream(m)]
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
                operations = [delete_patch(key)]
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


__all__ = ["Run", "Interrupt", "known_messages", "new_id"]
