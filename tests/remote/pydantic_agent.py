"""A pydantic-ai agent served over AG-UI (its ``AGUIAdapter``), with no model behind it: a
``FunctionModel`` whose stream function answers from the conversation. The tests run it in
process (``A2UI['AGENTS']``) and over HTTP (uvicorn)."""

import json

from pydantic_ai import Agent
from pydantic_ai.messages import ModelRequest, ToolReturnPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel
from pydantic_ai.ui.ag_ui import AGUIAdapter
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.routing import Route


def _last(messages, kind):
    for message in reversed(messages):
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, kind):
                    return part
    return None


async def stream(messages, info: AgentInfo):
    answered = _last(messages, ToolReturnPart)
    prompt = _last(messages, UserPromptPart)
    text = prompt.content if prompt is not None and isinstance(prompt.content, str) else ""
    if answered is not None and answered.tool_name == "a2ui_request_input":
        yield f"Nice to meet you, {json.loads(answered.model_response_str())}."
        return
    if "name" in text.lower() and any(t.name == "a2ui_request_input"
                                      for t in info.function_tools):
        yield {0: DeltaToolCall(name="a2ui_request_input",
                                json_args=json.dumps({"prompt": "What is your name?"}),
                                tool_call_id="ask-name")}
        return
    for word in f"Echo: {text}".split(" "):
        yield word + " "


agent = Agent(FunctionModel(stream_function=stream), name="echo")


async def run_agent(request: Request):
    return await AGUIAdapter.dispatch_request(request, agent=agent)


app = Starlette(routes=[Route("/", run_agent, methods=["POST"])])
