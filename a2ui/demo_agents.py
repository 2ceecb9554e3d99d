"""The demo's agent built with a framework: a pydantic-ai agent served over AG-UI 1.0 (its
``AGUIAdapter``), run in the server's process as a remote agent (``manage.py a2ui_demo --agent
pydantic-ai``; docs/remote-agents.md).

Offline by default: a ``FunctionModel`` that answers from the conversation, and asks the
person's name with the question tool every remote agent is offered (``a2ui_request_input``).
With ``A2UI_DEMO_MODEL`` set (``openai:gpt-4o-mini``, ``anthropic:claude-3-5-haiku-latest``...)
or ``OPENAI_API_KEY`` / ``ANTHROPIC_API_KEY`` in the environment, a real model answers (its
provider's package installed: ``pip install "pydantic-ai-slim[openai]"``).
"""

import importlib.util
import json
import os

from pydantic_ai import Agent
from pydantic_ai.messages import ModelRequest, ToolReturnPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel
from pydantic_ai.ui.ag_ui import AGUIAdapter
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.routing import Route

INSTRUCTIONS = ("You are a friendly assistant on a Django site. Keep answers short. To ask the "
                "person something, call a2ui_request_input; to ask for approval, a2ui_confirm.")


def _last(messages, kind):
    for message in reversed(messages):
        if isinstance(message, ModelRequest):
            for part in reversed(message.parts):
                if isinstance(part, kind):
                    return part
    return None


async def offline(messages, info: AgentInfo):
    """Stands in for a model (no API key): a few canned moves."""
    answered = _last(messages, ToolReturnPart)
    if answered is not None and answered is _last(messages, (ToolReturnPart, UserPromptPart)):
        name = answered.model_response_str().strip('"')
        text = (f"Nice to meet you, {name}! I am a pydantic-ai agent with an offline model; "
                "set OPENAI_API_KEY (or A2UI_DEMO_MODEL) for a real one.")
    else:
        prompt = _last(messages, UserPromptPart)
        said = prompt.content if prompt is not None and isinstance(prompt.content, str) else ""
        if "name" in said.lower() and any(t.name == "a2ui_request_input"
                                          for t in info.function_tools):
            yield {0: DeltaToolCall(name="a2ui_request_input", json_args=json.dumps(
                {"prompt": "What is your name?", "input_type": "text"}))}
            return
        text = (f"You said: {said}. (An offline stand-in for a model answers; ask me to learn "
                "your name to see a question.)")
    for word in text.split(" "):
        yield word + " "


def model():
    chosen = os.environ.get("A2UI_DEMO_MODEL")
    if chosen:
        return chosen
    if os.environ.get("OPENAI_API_KEY") and importlib.util.find_spec("openai"):
        return "openai:gpt-4o-mini"
    if os.environ.get("ANTHROPIC_API_KEY") and importlib.util.find_spec("anthropic"):
        return "anthropic:claude-3-5-haiku-latest"
    return FunctionModel(stream_function=offline)


agent = Agent(model(), instructions=INSTRUCTIONS, name="pydantic-helper")


async def run(request: Request):
    return await AGUIAdapter.dispatch_request(request, agent=agent)


app = Starlette(routes=[Route("/", run, methods=["POST"])])
