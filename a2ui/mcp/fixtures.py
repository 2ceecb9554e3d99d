"""Test-only: the MCP conformance suite's fixtures (npm ``@modelcontextprotocol/conformance``).

The suite's scenarios call tools, resources and prompts by fixed names (``test_simple_text``,
``test://static-text``, ``test_simple_prompt``, ...) with fixed answers. With
``A2UI['MCP_CONFORMANCE_FIXTURES']`` on (never by default; a system check refuses it with DEBUG
off) ``a2ui.mcp.server`` offers them to agent keys beside the agent's own tools, and serves
``prompts/*``, ``completion/complete`` and ``logging/setLevel`` for them. Nothing here touches
a session, a person or the database.
"""

import asyncio
import json

import mcp_types as types

PNG = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5E"
       "rkJggg==")
WAV = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
NO_ARGS = {"type": "object", "properties": {}}


def _string_args(*names):
    return {"type": "object", "properties": {n: {"type": "string"} for n in names},
            "required": list(names)}


TOOLS = {
    "test_simple_text": NO_ARGS, "test_image_content": NO_ARGS, "test_audio_content": NO_ARGS,
    "test_embedded_resource": NO_ARGS, "test_multiple_content_types": NO_ARGS,
    "test_tool_with_logging": NO_ARGS, "test_tool_with_progress": NO_ARGS,
    "test_error_handling": NO_ARGS, "test_reconnection": NO_ARGS,
    "test_sampling": _string_args("prompt"),
    "test_elicitation": _string_args("message"),
    "test_elicitation_sep1034_defaults": NO_ARGS, "test_elicitation_sep1330_enums": NO_ARGS,
    "json_schema_2020_12_tool": {
        "$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
        "$defs": {"address": {"type": "object", "properties": {
            "street": {"type": "string"}, "city": {"type": "string"}}}},
        "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
        "additionalProperties": False},
}
STATIC = {
    "test://static-text": ("text/plain", "This is the content of the static text resource."),
    "test://static-binary": ("image/png", None),
    "test://watched-resource": ("text/plain", "Watched resource content"),
}
TEMPLATE = "test://template/{id}/data"
PROMPTS = {
    "test_simple_prompt": [],
    "test_prompt_with_arguments": ["arg1", "arg2"],
    "test_prompt_with_embedded_resource": ["resourceUri"],
    "test_prompt_with_image": [],
}
SEP1034 = {"type": "object", "properties": {
    "name": {"type": "string", "default": "John Doe"},
    "age": {"type": "integer", "default": 30},
    "score": {"type": "number", "default": 95.5},
    "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
    "verified": {"type": "boolean", "default": True}}}
SEP1330 = {"type": "object", "properties": {
    "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
    "titledSingle": {"type": "string", "oneOf": [
        {"const": "value1", "title": "First Option"}, {"const": "value2", "title": "Second Option"},
        {"const": "value3", "title": "Third Option"}]},
    "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"],
                   "enumNames": ["Option One", "Option Two", "Option Three"]},
    "untitledMulti": {"type": "array", "items": {"type": "string",
                                                 "enum": ["option1", "option2", "option3"]}},
    "titledMulti": {"type": "array", "items": {"anyOf": [
        {"const": "value1", "title": "First Choice"}, {"const": "value2", "title": "Second Choice"},
        {"const": "value3", "title": "Third Choice"}]}}}}
ELICIT = {"type": "object", "properties": {
    "username": {"type": "string", "description": "User's response"},
    "email": {"type": "string", "description": "User's email address"}},
    "required": ["username", "email"]}


def tools():
    return [types.Tool(name=name, description=f"Conformance fixture {name}", input_schema=schema)
            for name, schema in TOOLS.items()]


def _text(text, is_error=False):
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                is_error=is_error)


async def call(ctx, name, arguments):
    """The fixture tool ``name``'s result."""
    image = types.ImageContent(type="image", data=PNG, mime_type="image/png")
    session, rid = ctx.session, ctx.request_id
    if name == "test_simple_text":
        return _text("This is a simple text response for testing.")
    if name == "test_reconnection":
        # Closes the POST stream mid-call when the SDK offers it (a 2025-11-25 request and an
        # event store): the result is stored and replayed on the client's reconnection.
        close = getattr(ctx, "close_sse_stream", None)
        if close is not None:
            await close()
        return _text("Reconnection test completed successfully")
    if name == "test_image_content":
        return types.CallToolResult(content=[image])
    if name == "test_audio_content":
        return types.CallToolResult(content=[
            types.AudioContent(type="audio", data=WAV, mime_type="audio/wav")])
    if name == "test_embedded_resource":
        return types.CallToolResult(content=[types.EmbeddedResource(
            type="resource", resource=types.TextResourceContents(
                uri="test://embedded-resource", mime_type="text/plain",
                text="This is an embedded resource content."))])
    if name == "test_multiple_content_types":
        return types.CallToolResult(content=[
            types.TextContent(type="text", text="Multiple content types test:"), image,
            types.EmbeddedResource(type="resource", resource=types.TextResourceContents(
                uri="test://mixed-content-resource", mime_type="application/json",
                text='{"test": "data", "value": 123}'))])
    if name == "test_tool_with_logging":
        for i, text in enumerate(("Tool execution started", "Tool processing data",
                                  "Tool execution completed")):
            if i:
                await asyncio.sleep(0.05)
            await session.send_log_message("info", text, related_request_id=rid)
        return _text("Tool with logging executed successfully")
    if name == "test_tool_with_progress":
        token = ctx.meta.get("progress_token") if isinstance(ctx.meta, dict) else getattr(
            ctx.meta, "progress_token", None)
        for i, value in enumerate((0, 50, 100)):
            if i:
                await asyncio.sleep(0.05)
            if token is not None:
                await session.send_progress_notification(
                    token, value, 100, f"Completed step {value} of 100", related_request_id=rid)
        return _text(str(token))
    if name == "test_error_handling":
        return _text("This tool intentionally returns an error for testing", is_error=True)
    if name == "test_sampling":
        result = await session.create_message(
            [types.SamplingMessage(role="user", content=types.TextContent(
                type="text", text=str(arguments.get("prompt", ""))))],
            max_tokens=100, related_request_id=rid)
        content = result.content
        text = content.text if getattr(content, "type", None) == "text" else "No response"
        return _text(f"LLM response: {text}")
    schema, message, prefix = {
        "test_elicitation": (ELICIT, str(arguments.get("message", "")), "User response"),
        "test_elicitation_sep1034_defaults": (SEP1034, "Please provide user information",
                                              "Elicitation completed"),
        "test_elicitation_sep1330_enums": (SEP1330, "Please select values",
                                           "Elicitation completed"),
    }.get(name, (None, None, None))
    if schema is None:  # json_schema_2020_12_tool
        return _text(json.dumps(arguments))
    result = await session.elicit_form(message, schema, related_request_id=rid)
    content = json.dumps(result.content or {})
    return _text(f"{prefix}: action={result.action}, content={content}")


def resources():
    return [types.Resource(uri=uri, name=uri.removeprefix("test://"), mime_type=mime,
                           description=f"Conformance fixture {uri}")
            for uri, (mime, _) in STATIC.items()]


def templates():
    return [types.ResourceTemplate(uri_template=TEMPLATE, name="template",
                                   description="Conformance fixture template",
                                   mime_type="application/json")]


def is_fixture(uri):
    return uri.startswith("test://")


def read(uri):
    """The contents of fixture ``uri``, or None if there is no such fixture."""
    if uri in STATIC:
        mime, text = STATIC[uri]
        if text is None:
            return [types.BlobResourceContents(uri=uri, mime_type=mime, blob=PNG)]
        return [types.TextResourceContents(uri=uri, mime_type=mime, text=text)]
    parts = uri.removeprefix("test://").split("/")
    if len(parts) == 3 and parts[0] == "template" and parts[2] == "data" and parts[1]:
        body = {"id": parts[1], "templateTest": True, "data": f"Data for ID: {parts[1]}"}
        return [types.TextResourceContents(uri=uri, mime_type="application/json",
                                           text=json.dumps(body))]
    return None


def prompts():
    return [types.Prompt(name=name, description=f"Conformance fixture {name}", arguments=[
        types.PromptArgument(name=a, description=a, required=True) for a in args])
        for name, args in PROMPTS.items()]


def get_prompt(name, arguments):
    """The fixture prompt's messages, or None if there is no such prompt; a missing argument
    is a ValueError naming it."""
    if name not in PROMPTS:
        return None
    args = arguments or {}
    for needed in PROMPTS[name]:
        if not isinstance(args.get(needed), str):
            raise ValueError(needed)

    def user(content):
        return types.PromptMessage(role="user", content=content)

    def text(value):
        return types.TextContent(type="text", text=value)

    if name == "test_simple_prompt":
        messages = [user(text("This is a simple prompt for testing."))]
    elif name == "test_prompt_with_arguments":
        messages = [user(text(f"Prompt with arguments: arg1='{args['arg1']}', "
                              f"arg2='{args['arg2']}'"))]
    elif name == "test_prompt_with_embedded_resource":
        messages = [user(types.EmbeddedResource(type="resource", resource=types.TextResourceContents(
            uri=args["resourceUri"], mime_type="text/plain",
            text="Embedded resource content for testing."))),
            user(text("Please process the embedded resource above."))]
    else:
        messages = [user(types.ImageContent(type="image", data=PNG, mime_type="image/png")),
                    user(text("Please analyze the image above."))]
    return types.GetPromptResult(messages=messages, description=f"Conformance fixture {name}")


