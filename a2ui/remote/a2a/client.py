"""The A2A client with the A2UI extension v0.9.1: the ``"a2a"`` kind of
:class:`a2ui.remote.clients.RemoteClient` (docs/remote-agents.md, "A2A agents").

One run: the person's turn becomes an A2A message (:mod:`~a2ui.remote.a2a.outgoing`), sent with
``SendStreamingMessage`` (1.0) or ``message/stream`` (0.3) and the extension activated; each
streamed event is read (:mod:`~a2ui.remote.a2a.parts`) and mapped onto ops
(:mod:`~a2ui.remote.a2a.mapping`). A2UI messages the runtime refuses go back to the agent as the
extension's ``error`` messages, in a follow-up message of the same context (at most
:data:`ERROR_ROUNDS` times a run), so an agent that corrects itself can. A stream that drops
before the task is done is picked up with ``SubscribeToTask`` / ``tasks/resubscribe`` (twice at
most), here or, when this process died, by :meth:`A2AClient.resume` in whichever process holds
the session next. Cancel is ``CancelTask`` / ``tasks/cancel``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx
from a2a.client.client import ClientCallContext
from a2a.client.errors import A2AClientError, A2AClientTimeoutError
from a2a.types import a2a_pb2 as pb
from a2a.utils.errors import A2AError
from google.protobuf import json_format
from pydantic import ValidationError

from a2ui.remote import net, ops
from a2ui.remote.a2a import outgoing, transport
from a2ui.remote.a2a.card import CardError, CardInfo, card_url, read_card
from a2ui.remote.a2a.extension import (
    client_capabilities,
    client_data_model,
    requested_extensions,
)
from a2ui.remote.a2a.mapping import WAITING, RunMapper
from a2ui.remote.a2a.parts import Reader
from a2ui.remote.clients import Registration, RunContext, UpstreamError

ERROR_ROUNDS = 2
RESUBSCRIBES = 2
RESUBSCRIBE_PAUSE = 0.5
CANCEL_SECONDS = 10.0
#: What is wrong with an event the SDK or we could not read (not the agent's own error).
UNREADABLE = (json_format.ParseError, json_format.SerializeToJsonError, ValidationError,
              ValueError, TypeError, KeyError, UnicodeError, RecursionError)


class _Dropped(Exception):
    """The stream ended, or broke, before the agent was done."""


class A2AClient:
    """The A2A client (one instance serves every run; it keeps nothing between calls)."""

    kind = "a2a"

    async def prepare(self, url: str, headers: dict[str, str], http: httpx.AsyncClient
                      ) -> dict[str, Any]:
        """Registration (``a2ui_agent create NAME --a2a-url URL``): read the agent card."""
        try:
            info = await transport.fetch_card(url, http, headers)
        except CardError as e:
            raise Registration(str(e)) from None
        return {"url": info.rpc_url, "display_name": info.name or None,
                "config": {"card": info.card, "card_url": card_url(url),
                           "protocol_version": info.protocol_version,
                           "a2ui_extension": info.a2ui_uri}}

    # The three calls of the runtime ----------------------------------------------------------

    def run(self, ctx: RunContext, turn: Any) -> AsyncIterator[Any]:
        return self._run(ctx, turn)

    async def cancel(self, ctx: RunContext) -> None:
        task_id = ctx.ids.get("task_id")
        if not task_id or ctx.http is None:
            return
        try:
            info = await self._card(ctx)
            client = transport.sdk_client(info, ctx.http)
            async with asyncio.timeout(CANCEL_SECONDS):
                await client.cancel_task(pb.CancelTaskRequest(id=task_id),
                                         context=self._call(ctx, info))
        except (A2AError, CardError, TimeoutError, httpx.HTTPError, *UNREADABLE):
            pass  # best effort: the runtime ends the run either way

    async def resume(self, ctx: RunContext) -> AsyncIterator[Any] | None:
        task_id = ctx.ids.get("task_id")
        if not task_id or ctx.ids.get("task_state") not in (None, "working", "submitted"):
            return None
        return self._resume(ctx)

    # Runs ------------------------------------------------------------------------------------

    async def _run(self, ctx: RunContext, turn: Any) -> AsyncIterator[Any]:
        info = await self._card_or_fail(ctx)
        mapper = RunMapper(context_id=ctx.ids.get("context_id") or "",
                           task_id=ctx.ids.get("task_id") or "")
        if isinstance(turn, ops.Cancel):
            await self.cancel(ctx)
            yield ops.RunIds(task_id="", extra={"task_state": "canceled"})
            yield ops.Finished({"state": "canceled"})
            return
        request = self._request(ctx, info, turn, mapper)
        if request is None:  # an Ask answered "cancelled" or "timed_out": the task is stopped
            await self.cancel(ctx)
            yield ops.RunIds(task_id="", extra={"task_state": "canceled"})
            yield ops.Finished({"state": "canceled"})
            return
        async for op in self._exchanges(ctx, info, mapper, request):
            yield op

    async def _resume(self, ctx: RunContext) -> AsyncIterator[Any]:
        info = await self._card_or_fail(ctx)
        mapper = RunMapper(context_id=ctx.ids.get("context_id") or "",
                           task_id=ctx.ids.get("task_id") or "")
        async for op in self._exchanges(ctx, info, mapper, None):
            yield op

    async def _exchanges(self, ctx: RunContext, info: CardInfo, mapper: RunMapper,
                         request: dict[str, Any] | None) -> AsyncIterator[Any]:
        client = transport.sdk_client(info, ctx.http)
        transport.install(ctx.http)
        meter = transport.Meter(ctx.limits.event_bytes, ctx.limits.run_bytes)
        reader = Reader()
        for round_ in range(ERROR_ROUNDS + 1):
            mapper.last = None
            async for op in self._exchange(ctx, info, client, reader, mapper, meter, request):
                yield op
            if not mapper.errors or round_ == ERROR_ROUNDS:
                break
            errors, mapper.errors = mapper.errors, []
            request = outgoing.request(
                outgoing.error_parts(errors, legacy=info.legacy),
                capabilities=self._capabilities(ctx), context_id=mapper.context_id,
                task_id=mapper.task_id if mapper.state in WAITING else "")
        for op in mapper.finish():
            yield op

    async def _exchange(self, ctx, info, client, reader, mapper, meter, request):
        """One sent message (or, with ``request`` None, a resubscription) and its stream."""
        call = self._call(ctx, info)
        attempts = 0
        while True:
            if request is not None:
                message = json_format.ParseDict(request, pb.SendMessageRequest())
                source, request = client.send_message(message, context=call), None
            else:
                source = self._subscription(client, mapper.task_id, call)
            try:
                async for op in self._read(ctx, source, reader, mapper, meter):
                    yield op
            except _Dropped:
                pass
            if mapper.ended:
                for op in mapper.ops(reader.close_all()):
                    yield op
                return
            if not mapper.task_id or attempts >= RESUBSCRIBES:
                raise UpstreamError("The agent's stream ended before its task did, and the "
                                    "task could not be picked up again.", "lost")
            attempts += 1
            await asyncio.sleep(RESUBSCRIBE_PAUSE * attempts)

    async def _subscription(self, client, task_id, call):
        """``SubscribeToTask`` / ``tasks/resubscribe``; a task already done cannot be subscribed
        to, so its snapshot (``GetTask``) is read instead."""
        try:
            async for event in client.subscribe(pb.SubscribeToTaskRequest(id=task_id),
                                                context=call):
                yield event
        except A2AError as e:
            if isinstance(e, A2AClientError):
                raise
            task = await client.get_task(pb.GetTaskRequest(id=task_id), context=call)
            yield pb.StreamResponse(task=task)

    async def _read(self, ctx, source, reader, mapper, meter):
        events = 0
        iterator = source.__aiter__()
        try:
            with transport.metered(meter):
                while True:
                    try:
                        async with asyncio.timeout(ctx.limits.idle_seconds):
                            event = await iterator.__anext__()
                        events += 1
                        if events > ctx.limits.run_events:
                            raise UpstreamError(f"The agent sent more than "
                                                f"{ctx.limits.run_events} events.", "too_large")
                        items = reader.read(json_format.MessageToDict(event))
                    except StopAsyncIteration:
                        raise _Dropped() from None
                    except TimeoutError:
                        raise UpstreamError(f"The agent sent nothing for "
                                            f"{ctx.limits.idle_seconds:g} seconds.",
                                            "timeout") from None
                    except transport.TooLarge as e:
                        raise UpstreamError(str(e), "too_large") from None
                    except A2AError as e:
                        raise self._upstream(e, mapper, events) from None
                    except UNREADABLE:
                        raise UpstreamError("The agent sent an event this server cannot read.",
                                            "malformed") from None
                    for op in mapper.ops(items):
                        seen = len(ctx.refused)
                        if isinstance(op, ops.RunIds):  # cancel(ctx) during the run needs them
                            ctx.ids.update(op.as_dict())
                        yield op
                        if isinstance(op, ops.Surface):
                            for refusal in ctx.refused[seen:]:
                                if refusal.op is op:
                                    mapper.refusal(refusal)
                    if mapper.ended:
                        return
        finally:
            await _aclose(iterator)

    def _upstream(self, e: A2AError, mapper: RunMapper, events: int) -> Exception:
        text = str(e).encode("utf-8", "backslashreplace").decode("utf-8")[:300]
        if isinstance(e, A2AClientTimeoutError):
            return UpstreamError("The agent did not answer in time.", "timeout")
        if isinstance(e, A2AClientError):
            if events and mapper.task_id:  # the stream broke after it started: pick it up
                return _Dropped()
            return UpstreamError(f"The agent could not be reached: {text}", "unreachable")
        return UpstreamError(f"The agent answered with an error: {text}", "agent_error")

    # Building --------------------------------------------------------------------------------

    def _capabilities(self, ctx: RunContext) -> dict[str, Any]:
        caps = ctx.capabilities
        return client_capabilities(caps.catalogs or caps.server_catalogs)

    def _request(self, ctx: RunContext, info: CardInfo, turn: Any, mapper: RunMapper
                 ) -> dict[str, Any] | None:
        waiting = ctx.ids.get("task_state") in WAITING
        task_id = mapper.task_id if waiting else ""
        data_model = None
        if isinstance(turn, ops.UserText):
            parts = [outgoing.text_part(turn.text)]
        elif isinstance(turn, ops.Answer):
            resume = turn.resume if isinstance(turn.resume, dict) else {}
            task_id = resume.get("task_id") or task_id
            if turn.status != "answered":
                return None
            value = turn.value
            if resume.get("state") == "auth-required":
                if not (isinstance(value, dict) and value.get("approved")):
                    return None
                value = "Authorized."
            parts = outgoing.answer_parts(value)
        elif isinstance(turn, ops.Action):
            parts = outgoing.action_parts(turn.action, legacy=info.legacy)
            if turn.data_model is not None and isinstance(turn.surface_id, str):
                data_model = client_data_model(turn.surface_id, turn.data_model)
        else:
            raise UpstreamError("This turn cannot be sent to an A2A agent.", "unsupported")
        return outgoing.request(parts, capabilities=self._capabilities(ctx),
                                context_id=mapper.context_id, task_id=task_id,
                                data_model=data_model)

    def _call(self, ctx: RunContext, info: CardInfo) -> ClientCallContext:
        headers = {k: v for k, v in ctx.agent.headers.items()
                   if k.lower() not in ("a2a-extensions", "x-a2a-extensions", "a2a-version")}
        headers["A2A-Extensions"] = ", ".join(requested_extensions(info.card))
        if not info.legacy:
            headers["A2A-Version"] = info.protocol_version
        return ClientCallContext(service_parameters=headers)

    async def _card(self, ctx: RunContext) -> CardInfo:
        card = ctx.agent.config.get("card") if isinstance(ctx.agent.config, dict) else None
        if isinstance(card, dict):
            return read_card(card)
        return await transport.fetch_card(ctx.agent.url, ctx.http, dict(ctx.agent.headers))

    async def _card_or_fail(self, ctx: RunContext) -> CardInfo:
        if ctx.http is None:
            raise UpstreamError("An A2A agent needs the outbound HTTP client.", "unsupported")
        try:
            info = await self._card(ctx)
        except CardError as e:
            raise UpstreamError(str(e), "bad_card") from None
        if getattr(ctx.http, "entries", None) is not None:
            net.checked(info.rpc_url, ctx.http.entries)  # the card's endpoint: an allowed URL
        return info


async def _aclose(iterator: Any) -> None:
    close = getattr(iterator, "aclose", None)
    if close is not None:
        try:
            await close()
        except (Exception, asyncio.CancelledError):  # noqa: BLE001 - closing a broken stream
            pass

