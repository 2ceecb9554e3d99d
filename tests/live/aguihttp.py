"""A small AG-UI 1.0 client for tier 2: POST a RunAgentInput, read the SSE events as they come."""

import asyncio
import json
import uuid

import httpx

TIMEOUT = 20.0


def run_input(thread_id=None, run_id=None, text="Hello", **extra):
    body = {"threadId": thread_id or f"thread-{uuid.uuid4().hex[:8]}",
            "runId": run_id or f"run-{uuid.uuid4().hex[:8]}",
            "messages": [{"id": uuid.uuid4().hex, "role": "user", "content": text}],
            "state": {}, "tools": [], "context": [], "forwardedProps": {}}
    body.update(extra)
    return body


class RunStream:
    """One run's response: ``status``, ``json`` (a refusal) or ``next()`` events in order."""

    def __init__(self, client, response):
        self.client, self.response = client, response
        self.status = response.status_code
        self.comments = 0
        self.frames = []  # every data: line as text
        self._lines = None

    async def next(self, timeout=TIMEOUT):
        if self._lines is None:
            self._lines = self.response.aiter_lines()
        async def read():
            while True:
                line = await self._lines.__anext__()
                if line.startswith(":"):
                    self.comments += 1
                elif line.startswith("data: "):
                    self.frames.append(line[6:])
                    event = json.loads(line[6:])
                    stamp = event.pop("timestamp")  # every event is stamped (ms)
                    assert isinstance(stamp, int) and stamp > 1_600_000_000_000, event
                    return event
        return await asyncio.wait_for(read(), timeout)

    async def until(self, event_type, timeout=TIMEOUT):
        seen = []
        while True:
            event = await self.next(timeout)
            seen.append(event)
            if event["type"] == event_type:
                return event, seen

    async def rest(self, timeout=TIMEOUT):
        """Every event until the stream ends."""
        out = []
        try:
            while True:
                out.append(await self.next(timeout))
        except StopAsyncIteration:
            return out

    async def close(self):
        await self.response.aclose()
        await self.client.aclose()


async def post_run(base_url, body, token=None, headers=None, raw=None):
    client = httpx.AsyncClient(timeout=httpx.Timeout(TIMEOUT, read=None))
    send_headers = {"Content-Type": "application/json", "Accept": "text/event-stream",
                    **({"Authorization": f"Bearer {token}"} if token else {}),
                    **(headers or {})}
    content = raw if raw is not None else json.dumps(body).encode()
    request = client.build_request("POST", f"{base_url}/api/v4/agui/run", content=content,
                                   headers=send_headers)
    response = await client.send(request, stream=True)
    stream = RunStream(client, response)
    if response.status_code != 200:
        await response.aread()
        stream.json = response.json()
        await stream.close()
    return stream
