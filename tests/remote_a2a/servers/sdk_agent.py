"""A test agent served by the official a2a-sdk (1.x), speaking A2A 1.0 or 0.3 with the A2UI
extension v0.9.1. Run in the agents' venv (``.venv-agents``), as a subprocess of the tests:

    python sdk_agent.py --port 8123 [--version 0.3] [--public-url http://127.0.0.1:9000]

What it answers (the first word of the person's text chooses):

* ``hello``: a surface (status update, working), a streamed text artifact, then input-required
  with a question; the answer updates the surface and waits (input-required with the surface as
  the question); an ``action`` DataPart completes the task with "Action <name>: <context>".
* ``show``: the surface and input-required with the surface as the question (no text); an
  ``action`` then completes the task as above.
* ``artifact``: the surface in an artifact (``data`` one message object), then completed.
* ``invalid``: a surface the A2UI validator refuses; an ``error`` message back gets a fixed one.
* ``hostile``: A2UI parts no client should get (see :func:`hostile_parts`), then completed.
* ``slow [n]``: ``tick i`` text artifacts every 0.1 s, n of them (30), then ``done``.
* ``auth``: auth-required; the next message completes.
* ``fail``: the task fails with a message.

``GET /debug/log`` answers what the agent received: per request its headers of interest, the
extensions the SDK saw requested, the message's metadata, parts (as JSON), task and context id.
"""

import argparse
import asyncio
import json

import uvicorn
from a2a.helpers.proto_helpers import new_data_part, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import a2a_pb2 as pb
from google.protobuf.json_format import MessageToDict
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

EXT = "https://a2ui.org/a2a-extension/a2ui/v0.9.1"
MIME = "application/a2ui+json"
BASIC = "https://a2ui.org/specification/v0_9_1/catalogs/basic/catalog.json"
LOG = []
HEADERS = {}


def a2ui(messages, as_list=True):
    part = new_data_part(messages if as_list else messages[0], media_type=MIME)
    part.metadata.update({"mimeType": MIME})
    return part


def surface(greeting="Hello!"):
    return [
        {"version": "v0.9", "createSurface": {"surfaceId": "greet", "catalogId": BASIC}},
        {"version": "v0.9", "updateComponents": {"surfaceId": "greet", "components": [
            {"id": "root", "component": "Column", "children": ["msg", "ok"]},
            {"id": "msg", "component": "Text", "text": {"path": "/greeting"}},
            {"id": "ok-label", "component": "Text", "text": "Confirm"},
            {"id": "ok", "component": "Button", "child": "ok-label",
             "action": {"event": {"name": "confirm", "context": {"who": {"path": "/name"}}}}}]}},
        {"version": "v0.9", "updateDataModel": {"surfaceId": "greet", "path": "/",
                                                "value": {"greeting": greeting, "name": ""}}},
    ]


def hostile_parts():
    script = "<script>alert(1)</script><img src=x onerror=alert(2)>"
    parts = [
        new_text_part(script),
        a2ui([{"version": "v0.9", "bogusKind": {"surfaceId": "x"}}]),
        a2ui(["just a string"]),
        a2ui([{"version": "v0.9", "createSurface": {"surfaceId": "big", "catalogId": BASIC}},
              {"version": "v0.9", "updateDataModel": {"surfaceId": "big", "path": "/n",
                                                      "value": 2 ** 70}}]),
        a2ui([{"version": "v0.9", "updateComponents": {"surfaceId": "big", "components": [
            {"id": "root", "component": "Text", "text": script}]}}]),
    ]
    wrong_mime = new_data_part([{"version": "v0.9", "deleteSurface": {"surfaceId": "greet"}}],
                               media_type="application/json")
    parts.append(wrong_mime)
    return parts


def parts_json(message):
    return [MessageToDict(p) for p in message.parts] if message else []


def a2ui_messages(message):
    found = []
    for part in message.parts if message else []:
        d = MessageToDict(part)
        mime = (d.get("metadata") or {}).get("mimeType") or d.get("mediaType")
        if mime == MIME and "data" in d:
            data = d["data"]
            found += data if isinstance(data, list) else [data]
    return found


class Agent(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        msg = context.message
        LOG.append({"headers": dict(HEADERS.get("last", {})),
                    "extensions": sorted(context.requested_extensions),
                    "metadata": MessageToDict(msg.metadata) if msg.HasField("metadata") else {},
                    "message_extensions": list(msg.extensions), "parts": parts_json(msg),
                    "task_id": context.task_id, "context_id": context.context_id})
        task = context.current_task
        if task is None:
            task = pb.Task(id=context.task_id, context_id=context.context_id,
                           status=pb.TaskStatus(state=pb.TaskState.TASK_STATE_SUBMITTED),
                           history=[msg])
            await event_queue.enqueue_event(task)
        up = TaskUpdater(event_queue, task.id, task.context_id)
        received = a2ui_messages(msg)
        text = context.get_user_input().strip()
        first = text.split(" ")[0] if text else ""
        stage = (task.metadata["stage"] if task.HasField("metadata") and "stage" in task.metadata
                 else "")
        actions = [m["action"] for m in received if isinstance(m, dict) and "action" in m]
        errors = [m["error"] for m in received if isinstance(m, dict) and "error" in m]
        if actions:
            a = actions[0]
            await up.complete(up.new_agent_message(
                [new_text_part(f"Action {a['name']}: {json.dumps(a.get('context'), sort_keys=True)}")]))
        elif errors:
            await up.update_status(pb.TaskState.TASK_STATE_WORKING, up.new_agent_message(
                [new_text_part(f"Fixing {len(errors)} error(s): {errors[0].get('message', '')[:80]}"),
                 a2ui(surface("Fixed."))]))
            await up.complete()
        elif first == "show":
            await up.requires_input(up.new_agent_message([a2ui(surface("Press confirm."))]))
        elif first == "artifact":
            await up.add_artifact([a2ui(surface("From an artifact."), as_list=False)], name="ui")
            await up.add_artifact([a2ui(surface("From an artifact.")[1:2], as_list=False)],
                                  name="ui2")
            await up.complete()
        elif first == "invalid":
            bad = surface("Broken")
            bad[1]["updateComponents"]["components"][1]["component"] = "Marquee"
            await up.update_status(pb.TaskState.TASK_STATE_WORKING, up.new_agent_message([a2ui(bad)]))
            await up.complete()
        elif first == "hostile":
            await up.update_status(pb.TaskState.TASK_STATE_WORKING, up.new_agent_message(hostile_parts()))
            await up.complete()
        elif first == "slow":
            ticks = int(text.split(" ")[1]) if len(text.split(" ")) > 1 else 30
            for n in range(ticks):
                await up.add_artifact([new_text_part(f"tick {n} ")], artifact_id="ticks",
                                      name="ticks", append=n > 0, last_chunk=False)
                await asyncio.sleep(0.1)
            await up.add_artifact([new_text_part("done")], artifact_id="ticks", append=True,
                                  last_chunk=True)
            await up.complete()
        elif first == "auth":
            await up.requires_auth(up.new_agent_message([new_text_part("Sign in at the bank.")]))
        elif first == "fail":
            await up.failed(up.new_agent_message([new_text_part("The kitchen is closed.")]))
        elif context.current_task is not None and context.current_task.status.state == \
                pb.TaskState.TASK_STATE_INPUT_REQUIRED and text:
            await up.update_status(pb.TaskState.TASK_STATE_WORKING, up.new_agent_message([a2ui([
                {"version": "v0.9", "updateDataModel": {"surfaceId": "greet", "path": "/",
                                                        "value": {"greeting": f"Hello {text}!",
                                                                  "name": text}}}])]))
            await up.requires_input(up.new_agent_message([a2ui([
                {"version": "v0.9", "updateDataModel": {"surfaceId": "greet", "path": "/name",
                                                        "value": text}}])]))
        else:
            await up.update_status(pb.TaskState.TASK_STATE_WORKING,
                                   up.new_agent_message([new_text_part("Hi!"), a2ui(surface())]))
            await up.add_artifact([new_text_part("Streaming ")], artifact_id="note", name="note",
                                  append=False, last_chunk=False)
            await up.add_artifact([new_text_part("text.")], artifact_id="note", append=True,
                                  last_chunk=True)
            await up.requires_input(up.new_agent_message([new_text_part("What is your name?")]))
        del stage

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        LOG.append({"cancel": context.task_id})
        up = TaskUpdater(event_queue, context.task_id, context.context_id)
        await up.cancel()


def card(public_url, version):
    ext = {"uri": EXT, "description": "A2UI v0.9.1", "required": False,
           "params": {"supportedCatalogIds": [BASIC]}}
    base = {"name": "Greeter", "description": "Greets with an A2UI surface.", "version": "1.0.0",
            "capabilities": {"streaming": True, "extensions": [ext]},
            "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain", MIME],
            "skills": [{"id": "greet", "name": "Greet", "description": "Greets.", "tags": ["ui"]}]}
    if version == "0.3":
        return {**base, "url": public_url + "/", "protocolVersion": "0.3.0",
                "preferredTransport": "JSONRPC"}
    return {**base, "supportedInterfaces": [{"url": public_url + "/", "protocolBinding": "JSONRPC",
                                             "protocolVersion": "1.0"}]}


def app(public_url, version):
    from a2a.client.card_resolver import parse_agent_card
    served = card(public_url, version)
    pb_card = parse_agent_card(json.loads(json.dumps(served)))
    handler = DefaultRequestHandler(agent_executor=Agent(), task_store=InMemoryTaskStore(),
                                    agent_card=pb_card)
    rpc = create_jsonrpc_routes(handler, "/", enable_v0_3_compat=version == "0.3")

    async def log(request):
        return JSONResponse(LOG)

    async def legacy_card(request):
        return JSONResponse(served)

    routes = [*rpc, Route("/debug/log", log),
              Route("/.well-known/agent-card.json", legacy_card)]
    if version != "0.3":
        routes = [*rpc, Route("/debug/log", log), *create_agent_card_routes(pb_card)]
    application = Starlette(routes=routes)
    wanted = (b"a2a-extensions", b"x-a2a-extensions", b"a2a-version", b"authorization",
              b"x-api-key")

    async def keep_headers(scope, receive, send):  # what the client sent, for /debug/log
        if scope["type"] == "http" and scope["method"] == "POST":
            HEADERS["last"] = {k.decode(): v.decode() for k, v in scope["headers"]
                               if k.lower() in wanted}
        await application(scope, receive, send)

    return keep_headers

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--version", choices=["1.0", "0.3"], default="1.0")
    parser.add_argument("--public-url", default=None)
    args = parser.parse_args()
    public = args.public_url or f"http://127.0.0.1:{args.port}"
    uvicorn.run(app(public, args.version), host="127.0.0.1", port=args.port, log_level="warning")
