"""What a run's ops do to the session (:class:`Applier`): text streamed into the chat,
surfaces, questions, state, tool calls and notices, each through ``port`` with the same checks
as an agent's push; its counts and outcome when the run ends."""

import asyncio
import contextlib
import copy
import hashlib
import logging
import re
import time

import jsonpatch

from a2ui.remote import ops, port, store
from a2ui.remote.clients import Refusal

log = logging.getLogger("a2ui.remote")

SYSTEM_SENDER = "system"
TOOL_RESULT_LIMIT = 8000
Status = store.Status
_ID = re.compile(r"[A-Za-z0-9._:-]{1,100}")


def reply_channel():
    """Where the answers to a run's questions come back (``inbound`` takes them)."""
    return f"{port.REPLY_PREFIX}runtime"


def safe_id(value):
    """An upstream id as the core's ids are (1-128 of ``[A-Za-z0-9._:-]``): kept when it is
    one (with room for a suffix), else a digest of it (the same id always maps the same)."""
    text = str(value)
    if _ID.fullmatch(text):
        return text
    return "h:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:40]


async def _tell(agent_id, sid, text):
    """A system message in the session's chat (every client shows it)."""
    try:
        await port.store_activity(agent_id, sid, "message", {
            "message_id": port.new_id(), "role": "system", "sender": SYSTEM_SENDER,
            "content": text[:2000]})
    except Exception:
        log.warning("a2ui: could not tell session %s: %s", sid, text[:200], exc_info=True)


class _Text:
    __slots__ = ("id", "role", "content", "part", "shown", "flushed_at", "metadata")

    def __init__(self, message_id, role, metadata=None):
        self.id, self.role, self.content, self.part = message_id, role, "", 0
        self.shown, self.flushed_at, self.metadata = "", 0.0, metadata


class Applier:
    """One run's ops as session events, through ``port`` (the checks of an agent's push)."""

    def __init__(self, config, sid, ctx, pk=None):
        self.config, self.sid, self.ctx, self.pk = config, sid, ctx, pk
        self.agent_id = config.agent_id
        self.texts = {}
        self.state = copy.deepcopy(ctx.state)
        self.ids = dict(ctx.ids)
        self.asks = {}
        self.result = None
        self.failed = None
        self.finished = False
        self.done = False
        self.events = 0
        self.refused = 0
        self.told_refused = False
        s = port.settings
        self.flush_seconds = s.REMOTE_AGENT_TEXT_FLUSH_MS / 1000
        self.max_length = s.ACTIVITY_MAX_MESSAGE_LENGTH
        self.reasoning = s.REMOTE_AGENT_SHOW_REASONING
        self.ticker = None
        self.surfaces = None  # the session's surface ids, read on the first Surface

    async def apply(self, op):
        self.events += 1
        handler = getattr(self, "_" + type(op).__name__.lower(), None)
        if handler is None:
            return
        try:
            await handler(op)
        except port.DomainError as exc:
            if str(exc.fault) == "session_not_found":
                raise
            self.refused += 1
            detail = getattr(exc, "data", None)
            said = exc.message or str(exc.fault).replace("_", " ")
            self.ctx.refused.append(Refusal(op, str(exc.fault), said, detail))
            log.info("a2ui: a remote agent's %s was refused: %s %s", type(op).__name__,
                     said[:200], str(detail)[:300])
            if isinstance(op, ops.Surface) and not self.told_refused:
                self.told_refused = True
                await _tell(self.agent_id, self.sid, "A screen from the agent could not be "
                            f"shown ({said[:200]}).")

    # Text ---------------------------------------------------------------------------------

    async def _textdelta(self, op):
        await self._delta(op.message_id, op.role, op.delta)

    async def _reasoning(self, op):
        if self.reasoning:
            await self._delta(f"reasoning-{op.message_id}", "agent", op.delta,
                              {"reasoning": True})

    async def _delta(self, message_id, role, delta, metadata=None):
        text = self.texts.get(message_id)
        if text is None:
            text = self.texts[message_id] = _Text(message_id, role, metadata)
        text.content += delta
        while len(text.content) > self.max_length:  # the rest continues in a new message
            head, text.content = text.content[:self.max_length], text.content[self.max_length:]
            await self._store_text(text, head)
            text.part += 1
            text.shown = ""
        now = time.monotonic()
        wait = self.flush_seconds + len(text.content) / 200_000
        if now - text.flushed_at >= wait:
            await self._show_text(text)
        elif self.ticker is None:
            self.ticker = asyncio.get_running_loop().create_task(self._tick(wait))

    async def _tick(self, wait):
        try:
            await asyncio.sleep(wait)
            for text in list(self.texts.values()):
                if text.content != text.shown:
                    await self._show_text(text)
        except asyncio.CancelledError:
            pass
        except Exception as exc:
            log.info("a2ui: a streamed message could not be shown: %s", exc)
        finally:
            self.ticker = None

    def _message_id(self, text):
        base = safe_id(text.id)
        return base if text.part == 0 else f"{base}:{text.part}"

    def _data(self, text, content, streaming):
        data = {"message_id": self._message_id(text),
                "role": "system" if text.role == "system" else "agent",
                "sender": self.config.label, "content": content}
        metadata = dict(text.metadata or {})
        if streaming:
            metadata["streaming"] = True
        if metadata:
            data["metadata"] = metadata
        return data

    async def _show_text(self, text):
        text.flushed_at = time.monotonic()
        if not text.content or text.content == text.shown:
            return
        text.shown = text.content
        await port.show_message(self.sid, self._data(text, text.content, True))

    async def _store_text(self, text, content):
        if content:
            await port.store_activity(self.agent_id, self.sid, "message",
                                      self._data(text, content, False))

    async def _textend(self, op):
        text = self.texts.pop(op.message_id, None)
        if text is not None:
            await self._store_text(text, text.content)

    async def _reasoningend(self, op):
        await self._textend(ops.TextEnd(f"reasoning-{op.message_id}"))

    async def close(self):
        """The texts still open are complete (the run ended)."""
        if self.ticker is not None:
            self.ticker.cancel()
        for message_id in list(self.texts):
            with contextlib.suppress(Exception):
                await self._textend(ops.TextEnd(message_id))

    # Surfaces, questions, state, tools -----------------------------------------------------

    async def _surface(self, op):
        if self.surfaces is None:
            self.surfaces = await port.db(store.surface_ids, self.sid)
        messages = []
        for message in op.messages:
            create = message.get("createSurface") if isinstance(message, dict) else None
            if isinstance(create, dict) and create.get("surfaceId") in self.surfaces:
                continue  # shown already: snapshots repeat it (@ag-ui/a2ui-middleware)
            messages.append(message)
        if not messages:
            return
        await port.push(self.agent_id, self.sid, "a2ui.v09", {"messages": messages})
        for message in messages:
            for key in ("createSurface",):
                body = message.get(key) if isinstance(message, dict) else None
                if isinstance(body, dict) and isinstance(body.get("surfaceId"), str):
                    self.surfaces.add(body["surfaceId"])
            gone = message.get("deleteSurface") if isinstance(message, dict) else None
            if isinstance(gone, dict):
                self.surfaces.discard(gone.get("surfaceId"))

    async def _ask(self, op):
        """The question is kept with the run before the person sees it: an answer that comes
        at once (while the run still streams) finds what it resumes."""
        params = {**op.params, "request_id": op.request_id}
        await self._keep_ask(op.request_id, op.resume)
        await port.ask(self.agent_id, self.sid, op.kind, params, reply_channel())

    async def _keep_ask(self, request_id, resume):
        self.asks[request_id] = resume
        if self.pk is not None:
            await port.db(store.add_ask, self.pk, request_id, resume)

    async def offer_retry(self, turn):
        """After a lost run no client can resume: ask the person whether to try again."""
        if not isinstance(turn, dict) or turn.get("type") not in ("text", "action", "tool",
                                                                  "answer"):
            return
        request_id = port.new_id()
        await self._keep_ask(request_id, {"retry": turn})
        await port.ask(self.agent_id, self.sid, "confirm", {
            "request_id": request_id, "title": "The agent's answer was interrupted. Try again?",
            "severity": "info"}, reply_channel())

    async def _state(self, op):
        await self._set_state(op.snapshot if isinstance(op.snapshot, dict) else {})

    async def _statepatch(self, op):
        try:
            after = jsonpatch.apply_patch(self.state, list(op.ops))
        except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException, TypeError,
                ValueError, IndexError, KeyError):
            raise port.DomainError(port.Fault.INVALID_INPUT, "A state patch did not apply.",
                                   {"path": "delta"}) from None
        await self._set_state(after if isinstance(after, dict) else {})

    async def _set_state(self, after):
        """The state document becomes ``after``: one ``state.delta`` per top-level key that
        changed (the core's checks and limits apply to each)."""
        before = self.state
        for key in [k for k in before if k not in after]:
            await port.store_activity(self.agent_id, self.sid, "state.delta",
                                      {"path": str(key), "removed": True})
            del before[key]
        for key, value in after.items():
            if key in before and before[key] == value:
                continue
            await port.store_activity(self.agent_id, self.sid, "state.delta", {
                "path": str(key), "new_value": value, "removed": False})
            before[key] = copy.deepcopy(value)

    async def _tool(self, op):
        data = {"call_id": safe_id(op.call_id), "phase": op.phase}
        if op.phase == "requested":
            data.update(tool_name=str(op.name or "tool")[:128], status="PENDING",
                        parameters=op.args if isinstance(op.args, dict) else
                        {"arguments": op.args})
        elif op.phase == "result":
            if op.error:
                data.update(status="FAILED", error=str(op.error)[:TOOL_RESULT_LIMIT])
            else:
                result = op.result
                if isinstance(result, str) and len(result) > TOOL_RESULT_LIMIT:
                    result = result[:TOOL_RESULT_LIMIT] + "…"
                data.update(status="COMPLETED", result=result)
        else:
            data.update(status=op.status or "RUNNING",
                        **({"message": op.message} if op.message else {}))
        await port.store_activity(self.agent_id, self.sid, "tool_call", data)

    async def _notice(self, op):
        params = {"level": op.level if op.level in ("info", "success", "warning", "error")
                  else "info", "title": op.title or self.config.label, "message": op.message}
        await port.push(self.agent_id, self.sid, "ui.notify", params)

    async def _failed(self, op):
        self.failed = op
        await _tell(self.agent_id, self.sid, f"The agent's run failed: {op.message}"[:2000])

    async def _finished(self, op):
        self.finished = True
        self.result = op.outcome

    async def _runids(self, op):
        """Kept with the run at once (not only at its end): a run whose process dies can be
        picked up by another one with them (A2A's task id)."""
        before = dict(self.ids)
        self.ids.update(op.as_dict())
        if self.pk is not None and self.ids != before:
            await port.db(store.set_ids, self.pk, dict(self.ids))

    # The end --------------------------------------------------------------------------------

    def counts(self):
        out = {"events": self.events}
        if self.refused:
            out["refused"] = self.refused
        if self.asks:
            out["asked"] = len(self.asks)
        unknown = self.ids.pop("agui_unknown_events", None)
        if unknown:
            out["unknown_events"] = unknown
        return out

    def outcome(self):
        if self.failed is not None:
            return Status.ERROR, {"code": self.failed.code or "run_error",
                                  "message": self.failed.message[:500]}
        if self.asks:
            return Status.WAITING, {}
        out = {}
        if self.result is not None:
            out["result"] = self.result
        return Status.FINISHED, out
