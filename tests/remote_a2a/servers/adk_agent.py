"""A test agent of Google ADK (a custom, non-LLM ``BaseAgent``) served by ADK's own A2A server
(``to_a2a``, A2A 1.0 on a2a-sdk 1.x) with the A2UI extension v0.9.1 in its card. Run in the
agents' venv (``.venv-agents``), as a subprocess of the tests:

    python adk_agent.py --port 8124

ADK turns a GenAI part whose inline data is ``<a2a_datapart_json>JSON</a2a_datapart_json>``
(mime ``text/plain``) into an A2A DataPart with the part's ``part_metadata`` as its metadata,
and back: that is how a non-LLM agent sends A2UI and reads the person's action.
"""

import argparse
import json

import uvicorn
from a2a.client.card_resolver import parse_agent_card
from google.adk.a2a.utils.agent_to_a2a import to_a2a
from google.adk.agents import BaseAgent
from google.adk.events import Event
from google.genai import types

EXT = "https://a2ui.org/a2a-extension/a2ui/v0.9.1"
MIME = "application/a2ui+json"
BASIC = "https://a2ui.org/specification/v0_9_1/catalogs/basic/catalog.json"
START, END = b"<a2a_datapart_json>", b"</a2a_datapart_json>"


def a2ui_part(message):
    """A GenAI part ADK's A2A server sends as an A2UI DataPart (ADK's DataPart data is an
    object: one message per part, as the official A2UI SDK's ``create_a2ui_part`` does)."""
    blob = START + json.dumps(message).encode() + END
    return types.Part(inline_data=types.Blob(data=blob, mime_type="text/plain"),
                      part_metadata={"mimeType": MIME})


def read_a2ui(content):
    """The A2UI messages of a person's turn (the action DataPart ADK turned into a blob)."""
    found = []
    for part in (content.parts if content else None) or []:
        data = part.inline_data.data if part.inline_data else b""
        if data.startswith(START) and data.endswith(END):
            value = json.loads(data[len(START):-len(END)])
            found += value if isinstance(value, list) else [value]
    return found


SURFACE = [
    {"version": "v0.9", "createSurface": {"surfaceId": "adk", "catalogId": BASIC}},
    {"version": "v0.9", "updateComponents": {"surfaceId": "adk", "components": [
        {"id": "root", "component": "Column", "children": ["msg", "ok"]},
        {"id": "msg", "component": "Text", "text": "Hello from ADK."},
        {"id": "ok-label", "component": "Text", "text": "Confirm"},
        {"id": "ok", "component": "Button", "child": "ok-label",
         "action": {"event": {"name": "confirm", "context": {"from": "adk"}}}}]}},
]


class Greeter(BaseAgent):
    """No model: answers a message with a surface, and an action with a text."""

    async def _run_async_impl(self, ctx):
        actions = [m["action"] for m in read_a2ui(ctx.user_content)
                   if isinstance(m, dict) and "action" in m]
        if actions:
            parts = [types.Part(text=f"ADK got {actions[0]['name']}: "
                                     f"{json.dumps(actions[0].get('context'), sort_keys=True)}")]
        else:
            parts = [types.Part(text="Here is a surface."), *map(a2ui_part, SURFACE)]
        yield Event(author=self.name, invocation_id=ctx.invocation_id,
                    content=types.Content(role="model", parts=parts))


def card(url):
    return parse_agent_card({
        "name": "adk_greeter", "description": "An ADK agent with an A2UI surface.",
        "version": "1.0.0",
        "supportedInterfaces": [{"url": url + "/", "protocolBinding": "JSONRPC",
                                 "protocolVersion": "1.0"}],
        "capabilities": {"streaming": True, "extensions": [
            {"uri": EXT, "params": {"supportedCatalogIds": [BASIC]}}]},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain", MIME],
        "skills": [{"id": "greet", "name": "Greet", "description": "Greets.", "tags": ["ui"]}]})


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    url = f"http://127.0.0.1:{args.port}"
    app = to_a2a(Greeter(name="adk_greeter"), host="127.0.0.1", port=args.port,
                 agent_card=card(url))
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")
