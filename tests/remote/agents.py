"""AG-UI agents for the remote runtime's tests: async run functions (``A2UI['AGENTS']``
accepts them as it accepts an AG-UI ASGI app) with no model behind them."""

import asyncio
import json

from ag_ui.core import (
    ActivitySnapshotEvent,
    RunErrorEvent,
    RunFinishedEvent,
    RunStartedEvent,
    StateSnapshotEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)

BASIC = "https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"
seen = []  # the run inputs the agents got (in-process tests read them)


def _last_user(run_input):
    users = [m for m in run_input.messages if m.role == "user"]
    return users[-1].content if users else ""


def _start(run_input):
    return RunStartedEvent(thread_id=run_input.thread_id, run_id=run_input.run_id)


def _end(run_input):
    return RunFinishedEvent(thread_id=run_input.thread_id, run_id=run_input.run_id)


async def echo(run_input):
    """Answers "You said: <the last user message>" in three deltas."""
    seen.append(run_input)
    yield _start(run_input)
    text = f"You said: {_last_user(run_input)}"
    yield TextMessageStartEvent(message_id="reply-" + run_input.run_id, role="assistant")
    third = max(1, len(text) // 3)
    for i in range(0, len(text), third):
        yield TextMessageContentEvent(message_id="reply-" + run_input.run_id,
                                      delta=text[i:i + third])
        await asyncio.sleep(0)
    yield TextMessageEndEvent(message_id="reply-" + run_input.run_id)
    yield _end(run_input)


async def asker(run_input):
    """Asks the person their name with the question tool, then greets them with the answer."""
    seen.append(run_input)
    yield _start(run_input)
    results = [m for m in run_input.messages if m.role == "tool"]
    if results:
        name = json.loads(results[-1].content)
        yield TextMessageStartEvent(message_id="hi-" + run_input.run_id, role="assistant")
        yield TextMessageContentEvent(message_id="hi-" + run_input.run_id,
                                      delta=f"Hello, {name}!")
        yield TextMessageEndEvent(message_id="hi-" + run_input.run_id)
    else:
        yield ToolCallStartEvent(tool_call_id="ask-1", tool_call_name="a2ui_request_input")
        yield ToolCallArgsEvent(tool_call_id="ask-1",
                                delta=json.dumps({"prompt": "Your name?"}))
        yield ToolCallEndEvent(tool_call_id="ask-1")
    yield _end(run_input)


def surface_messages(surface_id="shop"):
    return [
        {"version": "v0.9", "createSurface": {"surfaceId": surface_id, "catalogId": BASIC}},
        {"version": "v0.9", "updateComponents": {"surfaceId": surface_id, "components": [
            {"id": "root", "component": "Column", "children": ["title", "buy"]},
            {"id": "title", "component": "Text", "text": "A <b>fine</b> hat"},
            {"id": "buy", "component": "Button", "child": "label",
             "action": {"event": {"name": "buy", "context": {"item": "hat"}}}},
            {"id": "label", "component": "Text", "text": "Buy"}]}},
    ]


async def shop(run_input):
    """Shows a surface (as @ag-ui/a2ui-middleware's ACTIVITY_SNAPSHOT and as a tool result's
    a2ui_operations), state, and answers a person's action on it."""
    seen.append(run_input)
    yield _start(run_input)
    action = (run_input.forwarded_props or {}).get("a2uiAction")
    if action:
        user_action = action["userAction"]
        yield TextMessageStartEvent(message_id="ok-" + run_input.run_id, role="assistant")
        yield TextMessageContentEvent(message_id="ok-" + run_input.run_id,
                                      delta=f"Bought: {user_action['context']['item']}")
        yield TextMessageEndEvent(message_id="ok-" + run_input.run_id)
    else:
        yield StateSnapshotEvent(snapshot={"cart": [], "step": "browse"})
        yield ActivitySnapshotEvent(message_id="a2ui-surface-shop", activity_type="a2ui-surface",
                                    content={"a2ui_operations": surface_messages()})
        yield ToolCallStartEvent(tool_call_id="t1", tool_call_name="search")
        yield ToolCallArgsEvent(tool_call_id="t1", delta='{"q": "hats"}')
        yield ToolCallEndEvent(tool_call_id="t1")
        yield ToolCallResultEvent(message_id="r1", tool_call_id="t1", content=json.dumps(
            {"a2ui_operations": surface_messages("more")}))
    yield _end(run_input)


async def failing(run_input):
    yield _start(run_input)
    yield RunErrorEvent(message="The model is down <script>x</script>", code="MODEL_DOWN")


async def silent(run_input):
    yield _start(run_input)
    await asyncio.sleep(3600)


async def slow_echo(run_input):
    """As ``echo``, a word every 0.15 s: the reply is shown as it streams."""
    seen.append(run_input)
    yield _start(run_input)
    message_id = "reply-" + run_input.run_id
    yield TextMessageStartEvent(message_id=message_id, role="assistant")
    for word in f"You said: {_last_user(run_input)}".split(" "):
        yield TextMessageContentEvent(message_id=message_id, delta=word + " ")
        await asyncio.sleep(0.15)
    yield TextMessageEndEvent(message_id=message_id)
    yield _end(run_input)


async def hostile(run_input):
    """What an agent should never get shown as it is: script in text, a huge reply, a state
    beyond the limits, a surface that does not validate, unknown events, 10k tiny deltas."""
    from ag_ui.core import CustomEvent

    yield _start(run_input)
    yield TextMessageStartEvent(message_id="x", role="assistant")
    yield TextMessageContentEvent(message_id="x", delta="<script>alert(1)</script><b>hi</b> ")
    yield TextMessageContentEvent(message_id="x", delta="y" * 40_000)
    for _ in range(10_000):
        yield TextMessageContentEvent(message_id="x", delta=".")
    yield TextMessageEndEvent(message_id="x")
    yield CustomEvent(name="whatever", value={"a": 1})
    yield StateSnapshotEvent(snapshot={"big": "z" * 300_000})
    yield ActivitySnapshotEvent(message_id="a2ui-surface-bad", activity_type="a2ui-surface",
                                content={"a2ui_operations": [
                                    {"version": "v0.9", "createSurface": {"surfaceId": "bad"}}]})
    yield _end(run_input)


async def broken_json(scope, receive, send):
    """An ASGI app whose stream is not AG-UI: ``data: {not json``."""
    await receive()
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"text/event-stream")]})
    await send({"type": "http.response.body", "body": b"data: {not json\n\n"})


async def http_error(scope, receive, send):
    await receive()
    await send({"type": "http.response.start", "status": 500,
                "headers": [(b"content-type", b"text/html")]})
    await send({"type": "http.response.body", "body": b"<h1>secret stack trace</h1>"})


async def html_page(scope, receive, send):
    await receive()
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"text/html")]})
    await send({"type": "http.response.body", "body": b"<html>login</html>"})


async def huge_event(scope, receive, send):
    await receive()
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"text/event-stream")]})
    await send({"type": "http.response.body", "body": b"data: " + b"x" * 3_000_000})
