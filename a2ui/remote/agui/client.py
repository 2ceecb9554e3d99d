"""The AG-UI 1.0 client: POST ``RunAgentInput``, read the SSE stream of events, yield ops.

Over HTTP (``RemoteAgent.url``, through ``ctx.http``: ``a2ui.remote.net``) or, for an agent of
``A2UI['AGENTS']``, to the app in this process (``a2ui.remote.agui.inprocess``: an ASGI app
streamed, or an async run function), with the same reading and the same limits.
"""

import time

from a2ui.remote import net, ops
from a2ui.remote.agui import inprocess, inputs, mapping, sse
from a2ui.remote.clients import UpstreamError


class AguiClient:
    kind = "agui"

    async def run(self, ctx, turn):
        run_input = inputs.build(ctx, turn)
        reader = mapping.Reader(client_tools=[t["name"] for t in ctx.tools])
        target = ctx.agent.target
        if target is not None and not inprocess.is_asgi(target):
            source = inprocess.run_function(target, run_input, ctx.limits)
        else:
            source = self._events(ctx, run_input, target)
        last = time.monotonic()
        count = 0
        async for event in source:
            count += 1
            if count > ctx.limits.run_events:
                raise UpstreamError(f"The agent sent more than {ctx.limits.run_events} events "
                                    "in one run.", "too_large")
            now = time.monotonic()
            if now - last > ctx.limits.idle_seconds:
                raise UpstreamError("The agent sent nothing for too long.", "timeout")
            last = now
            try:
                found = reader.read(event)
            except mapping.Malformed as exc:
                raise UpstreamError(f"The agent sent {exc}.", "malformed") from None
            for op in found:
                yield op
            if reader.finished:
                break
        if not reader.finished and not reader.asked:
            raise UpstreamError("The agent's stream ended before its run finished.",
                                "incomplete")
        if reader.unknown:
            yield ops.RunIds(extra={"agui_unknown_events": reader.unknown})

    async def _events(self, ctx, run_input, target):
        """The parsed events of the SSE stream (HTTP or an ASGI app in this process)."""
        body = inputs.body(run_input).encode("utf-8")
        headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
        if target is not None:
            chunks = inprocess.asgi_stream(target, body, headers, ctx.limits,
                                           ctx.agent.config.get("path") or "/")
        else:
            chunks = self._http(ctx, body, {**ctx.agent.headers, **headers})
        decoder = sse.Decoder(ctx.limits.event_bytes)
        total = 0
        try:
            async for chunk in chunks:
                total += len(chunk)
                if total > ctx.limits.run_bytes:
                    raise UpstreamError(f"The agent's stream went beyond "
                                        f"{ctx.limits.run_bytes} bytes.", "too_large")
                try:
                    found = decoder.feed(chunk)
                except sse.TooLarge as exc:
                    raise UpstreamError(f"The agent sent {exc}.", "too_large") from None
                for _, data, _ in found:
                    if not data.strip():
                        continue
                    try:
                        yield mapping.parse(data)
                    except mapping.Malformed as exc:
                        raise UpstreamError(f"The agent sent {exc}.", "malformed") from None
        finally:
            await chunks.aclose()

    async def _http(self, ctx, body, headers):
        response = await ctx.http.open_stream("POST", ctx.agent.url, content=body,
                                              headers=headers)
        try:
            if response.status_code >= 400 or response.status_code < 200:
                raise UpstreamError(f"The agent answered HTTP {response.status_code}.",
                                    "http_status")
            kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
            if kind != "text/event-stream":
                raise UpstreamError("The agent did not answer with an event stream "
                                    f"({kind[:60] or 'no content type'}).", "malformed")
            try:
                async for chunk in response.aiter_raw():
                    yield chunk
            except net.httpx.TimeoutException:
                raise UpstreamError("The agent sent nothing for too long.", "timeout") from None
            except net.httpx.HTTPError as exc:
                raise UpstreamError(f"The agent's stream broke off ({net._reason(exc)}).",
                                    "unreachable") from None
        finally:
            await response.aclose()

    async def cancel(self, ctx):
        """AG-UI 1.0 has no cancel request: closing the stream is how a client stops a run
        (the runtime closes it)."""

    async def resume(self, ctx):
        """An AG-UI run cannot be picked up by another client: None (the runtime offers the
        person a retry)."""
        return None
