"""The AG-UI 1.0 form of each session-event kind, for one run (:class:`Kinds`, the half of
``a2ui.agui1.translate.Run`` that says each kind; the table is in that module's docstring).
Sans-I/O."""

import copy
import json
import uuid

import jsonpatch
from ag_ui.core import (
    ActivityDeltaEvent,
    ActivitySnapshotEvent,
    CustomEvent,
    ReasoningEndEvent,
    ReasoningMessageContentEvent,
    ReasoningMessageEndEvent,
    ReasoningMessageStartEvent,
    ReasoningStartEvent,
    StateDeltaEvent,
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

from a2ui.agui1 import interrupts

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


def delete_patch(key):
    """The deleteSurface of the surface activity ``key`` (``a2ui-surface-<surfaceId>``)."""
    return {"version": "v0.9", "deleteSurface": {"surfaceId": key[len(SURFACE) + 1:]}}


def surface_gone(key, content, surfaces):
    """A surface activity a client holds (``known``) that the session no longer has and
    whose operations do not end by deleting it: it was deleted while the client was away."""
    if not key.startswith(f"{SURFACE}-") or key[len(SURFACE) + 1:] in surfaces:
        return False
    operations = content.get(OPERATIONS) if isinstance(content, dict) else None
    return bool(operations) and isinstance(operations, list) and not (
        isinstance(operations[-1], dict) and "deleteSurface" in operations[-1])


class Kinds:
    """What each session-event kind is in AG-UI 1.0 events, given the run's state (a mixin of
    ``a2ui.agui1.translate.Run``: ``self.activity``, ``self.streams``, ``self.make_id``...)."""

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
        if isinstance(metadata, dict) and metadata.get("reasoning") is True:
            return self._reasoning(message_id, text, streaming)
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

    def _reasoning(self, message_id, text, streaming):
        """An agent's reasoning (a remote agent's ``REASONING_*`` events, kept as a message
        marked ``metadata.reasoning``: ``REMOTE_AGENT_SHOW_REASONING``) in AG-UI 1.0's own
        reasoning events, streamed as a text message is."""
        shown = self.streams.get(message_id)
        out = []
        if shown is None:
            out += [ReasoningStartEvent(message_id=message_id),
                    ReasoningMessageStartEvent(message_id=message_id, role="reasoning")]
            shown = ""
            self.reasoning_ids.add(message_id)
        added = text[len(shown):] if text.startswith(shown) else text
        if added:
            out.append(ReasoningMessageContentEvent(message_id=message_id, delta=added))
        if streaming:
            self.streams[message_id] = text
        else:
            self.streams.pop(message_id, None)
            out += self._end_stream(message_id)
        return out

    def _end_stream(self, message_id):
        """The events that end a message still being written (text or reasoning)."""
        if message_id in self.reasoning_ids:
            self.reasoning_ids.discard(message_id)
            return [ReasoningMessageEndEvent(message_id=message_id),
                    ReasoningEndEvent(message_id=message_id)]
        return [TextMessageEndEvent(message_id=message_id)]

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



