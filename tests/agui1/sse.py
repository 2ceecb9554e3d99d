"""AG-UI 1.0 runs in process: POST /api/v4/agui/run through Django's async test client, the
SSE response read event by event."""

import asyncio
import json

from channels.db import database_sync_to_async
from django.test import AsyncClient

from a2ui import tokens

URL = "/api/v4/agui/run"


class Run:
    """One run's SSE response, read event by event (each ``data:`` frame as JSON; its ``id:``
    in ``ids``, None for an event without one)."""

    def __init__(self, response):
        assert response.status_code == 200, response.content
        self.response = response
        self.it = aiter(response.streaming_content)
        self.buffer = ""
        self.ids = []

    async def next(self, timeout=3):
        async with asyncio.timeout(timeout):
            while True:
                if "\n\n" in self.buffer:
                    block, self.buffer = self.buffer.split("\n\n", 1)
                    lines = block.split("\n")
                    data = [line[6:] for line in lines if line.startswith("data: ")]
                    if data:
                        ids = [line[4:] for line in lines if line.startswith("id: ")]
                        self.ids.append(int(ids[-1]) if ids else None)
                        event = json.loads("\n".join(data))
                        event.pop("timestamp")
                        return event
                    continue
                chunk = await anext(self.it)
                self.buffer += chunk.decode() if isinstance(chunk, bytes) else chunk

    async def rest(self, timeout=3):
        out = []
        try:
            while True:
                out.append(await self.next(timeout))
        except StopAsyncIteration:
            return out

    async def close(self):
        """The client goes away: the run's generator is closed too, as the server's event loop
        closes it (its async generator finalizer) once the response is dropped."""
        await self.it.aclose()
        await self.response._iterator.aclose()


async def post(token, run_id, thread="t1", text="hi", **extra):
    """The response to a run's POST (a refusal, or the stream unread)."""
    body = {"threadId": thread, "runId": run_id,
            "messages": [{"id": run_id, "role": "user", "content": text}] if text else [],
            **extra}
    return await AsyncClient().post(URL, json.dumps(body), content_type="application/json",
                                    headers={"Authorization": f"Bearer {token}"})


async def start(token, run_id, thread="t1", text="hi", **extra):
    """A run that was accepted (200), to read."""
    return Run(await post(token, run_id, thread, text, **extra))


@database_sync_to_async
def issue(user, agent):
    return tokens.issue_stream_token(user, agent, "stream_agui").token
