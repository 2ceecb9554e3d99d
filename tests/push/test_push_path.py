"""The path of a push (docs/architecture.md, "A push, top to bottom"): from the one entry
(``a2ui.push.entry``) to the person's socket write, through at most 8 modules. Measured on the
stack at the moment the person's socket writes the pushed frame, for the agent paths that
deliver in the pushing task (the Python API and the agent socket: direct delivery in one
process); REST and the MCP tools call the same entry (checked by their imports)."""

import pathlib
import traceback

import pytest

from tests.wsutil import agent_and_person, connect_user, init_session, recv_until, send

pytestmark = pytest.mark.django_db(transaction=True)

PACKAGE = pathlib.Path(__file__).resolve().parents[2] / "a2ui"
MAX_AFTER_ENTRY = 8


def _module(filename):
    path = pathlib.Path(filename).resolve()
    if PACKAGE not in path.parents:
        return None
    return ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)


@pytest.fixture
def write_stacks(monkeypatch):
    """The a2ui modules on the stack each time a socket writes a ``ui.render`` frame."""
    from channels.generic.websocket import AsyncWebsocketConsumer

    stacks = []
    original = AsyncWebsocketConsumer.send

    async def send_frame(self, text_data=None, bytes_data=None, close=False):
        if text_data and '"ui.render"' in text_data:
            stacks.append([m for m in (_module(f.filename) for f in traceback.extract_stack())
                           if m is not None])
        return await original(self, text_data=text_data, bytes_data=bytes_data, close=close)

    monkeypatch.setattr(AsyncWebsocketConsumer, "send", send_frame)
    return stacks


def _after_entry(stack):
    assert "a2ui.push.entry" in stack, stack
    after = stack[stack.index("a2ui.push.entry"):]
    return list(dict.fromkeys(m for m in after if m != "a2ui.push.entry"))


async def test_a_python_api_push_reaches_the_socket_through_few_modules(stream_token, agent,
                                                                        write_stacks):
    from a2ui import agents

    person = await connect_user(stream_token)
    sid = await init_session(person)
    await agents.arender(agent, sid, "card", {"title": "x"})
    await recv_until(person, lambda m: m.get("method") == "ui.render")
    path = _after_entry(write_stacks[-1])
    assert len(path) <= MAX_AFTER_ENTRY, path
    assert path[0] == "a2ui.push.fanout"  # stored, numbered and fanned out by the pipeline
    await person.disconnect()


async def test_an_agent_socket_push_goes_through_the_same_entry(stream_token, agent_key,
                                                                write_stacks):
    bot, person, sid = await agent_and_person(stream_token, agent_key)
    await send(bot, {"jsonrpc": "2.0", "id": "r", "method": "ui.render", "params": {
        "session_id": sid, "component_id": "c", "component_type": "card",
        "data": {"title": "x"}}})
    reply = await recv_until(bot, lambda m: m.get("id") == "r")
    assert "result" in reply, reply
    await recv_until(person, lambda m: m.get("method") == "ui.render")
    stack = next(s for s in write_stacks if "a2ui.jsonrpc.agent" in s)
    path = _after_entry(stack)
    assert len(path) <= MAX_AFTER_ENTRY, path
    await bot.disconnect()
    await person.disconnect()


@pytest.mark.parametrize("module", ["a2ui.jsonrpc.views", "a2ui.mcp.agent", "a2ui.agents",
                                    "a2ui.jsonrpc.agent", "a2ui.remote.port"])
def test_every_transport_pushes_through_the_entry(module):
    import importlib
    import inspect

    source = inspect.getsource(importlib.import_module(module))
    assert "push import entry" in source or "push.entry" in source, module
    assert "apush_batch" not in source.replace("entry.apush_batch", "")  # no side door
