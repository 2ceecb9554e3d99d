"""The upstream AG-UI agent of bench/bench_remote.py: a bare ASGI app (served by uvicorn in a
process of its own) that answers each run with a text message streamed as ``events`` deltas,
``gap`` seconds apart, each delta ``[<send time>]`` padded to ``size`` characters. The run's
last user message says how: ``bench events=250 gap=0.02 size=16``."""

import asyncio
import json
import re
import time

SETTING = re.compile(r"(\w+)=([\d.]+)")


def _frame(event):
    return b"data: " + json.dumps(event, separators=(",", ":")).encode() + b"\n\n"


async def app(scope, receive, send):
    if scope["type"] != "http":
        return
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    run = json.loads(body)
    said = [m.get("content", "") for m in run.get("messages", []) if m.get("role") == "user"]
    params = {k: float(v) for k, v in SETTING.findall(said[-1] if said else "")}
    events, gap, size = int(params.get("events", 100)), params.get("gap", 0.02), int(
        params.get("size", 16))
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"text/event-stream")]})
    message_id = "m-" + run["runId"]
    head = [{"type": "RUN_STARTED", "threadId": run["threadId"], "runId": run["runId"]},
            {"type": "TEXT_MESSAGE_START", "messageId": message_id, "role": "assistant"}]
    await send({"type": "http.response.body", "body": b"".join(map(_frame, head)),
                "more_body": True})
    for _ in range(events):
        delta = f"[{time.time():.6f}]".ljust(size)
        await send({"type": "http.response.body", "more_body": True, "body": _frame(
            {"type": "TEXT_MESSAGE_CONTENT", "messageId": message_id, "delta": delta})})
        await asyncio.sleep(gap)
    tail = [{"type": "TEXT_MESSAGE_END", "messageId": message_id},
            {"type": "RUN_FINISHED", "threadId": run["threadId"], "runId": run["runId"]}]
    await send({"type": "http.response.body", "body": b"".join(map(_frame, tail)),
                "more_body": False})
