"""A stand-in for the runtime around the A2A client: runs a person's turns, keeps the thread's
ids as the runtime does (RunIds merged), validates each Surface op with this server's v0.9
validator and records refusals in ``ctx.refused`` as the runtime does."""

import httpx

from a2ui.core.surfaces import ValidationFailed
from a2ui.core.surfaces.session import SessionSurfaces
from a2ui.remote import ops
from a2ui.remote.a2a.client import A2AClient
from a2ui.remote.a2a.extension import BASIC_CATALOG_V09
from a2ui.remote.clients import AgentConfig, Capabilities, Limits, Refusal, RunContext


class Driver:
    def __init__(self, registration, headers=None, limits=None):
        self.client = A2AClient()
        self.agent = AgentConfig(agent_id=1, name="agent", label="Agent", kind="a2a",
                                 url=registration["url"], headers=headers or {},
                                 config=registration["config"])
        self.ids = {}
        self.surfaces = SessionSurfaces()
        self.limits = limits or Limits(idle_seconds=30)
        self.http = httpx.AsyncClient(timeout=30)

    def context(self):
        return RunContext(session_id="s", run_id="r", thread_id="t", agent=self.agent,
                          ids=dict(self.ids), limits=self.limits, http=self.http,
                          capabilities=Capabilities(catalogs=(BASIC_CATALOG_V09,)))

    async def consume(self, ctx, iterator, until=None):
        out = []
        async for op in iterator:
            out.append(op)
            if isinstance(op, ops.RunIds):
                self.ids.update(op.as_dict())
            elif isinstance(op, ops.Surface):
                try:  # as the runtime: a createSurface of a surface shown is skipped
                    self.surfaces.apply_batch([m for m in op.messages if m.get(
                        "createSurface", {}).get("surfaceId") not in self.surfaces.states])
                except ValidationFailed as f:
                    ctx.refused.append(Refusal(op, "invalid", f.message,
                                               detail=f.to_error_message()))
            if until is not None and until(op):
                break
        return out

    async def turn(self, turn, until=None):
        ctx = self.context()
        return await self.consume(ctx, self.client.run(ctx, turn), until)

    async def close(self):
        await self.http.aclose()


def texts(out):
    return "".join(op.delta for op in out if isinstance(op, ops.TextDelta))


def last(out, kind):
    found = [op for op in out if isinstance(op, kind)]
    return found[-1] if found else None
