"""A pydantic-ai agent served over AG-UI (its ``AGUIAdapter``), with no model behind it: a
``FunctionModel`` whose stream function answers from the conversation. The tests run it in
process (``A2UI['AGENTS']``) and over HTTP (uvicorn)."""

import asyncio
import json
import os

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
    slow = "slowly" in text.lower()
    for word in f"Echo: {text}".split(" "):
        yield word + " "
        if slow:  # a long answer: the tests kill the server process meanwhile
            await asyncio.sleep(1.0)


agent = Agent(FunctionModel(stream_function=stream), name="echo")


async def run_agent(request: Request):
    expected = os.environ.get("A2UI_TEST_AGENT_TOKEN")
    if expected and request.headers.get("authorization") != f"Bearer {expected}":
        from starlette.responses import JSONResponse

        return JSONResponse({"error": "unauthorized"}, status_code=401)
    return await AGUIAdapter.dispatch_request(request, agent=agent)


app = Starlette(routes=[Route("/", run_agent, methods=["POST"])])
