"""A protocol added through settings alone (docs/adding-a-protocol.md, checked): the toy
package of tests/toyproto, one line in ``A2UI['ADAPTERS']``, no other file changed and no
migration. What every shipped adapter gets, the toy gets: its routes, its token type, its
agent method on every agent path, its settings' defaults, the session's events of its kinds
(and only those) on its listener, its snapshot, and the invariant "stale state + events ==
fresh state" for its client."""

import asyncio
import importlib
import json

import pytest
from channels.db import database_sync_to_async
from django.test import AsyncClient

pytestmark = pytest.mark.django_db(transaction=True)

TOY = "tests.toyproto.adapter"


def _reload_urls():
    from django.urls import clear_url_caches

    import a2ui.urls
    import a2ui_project.urls

    importlib.reload(a2ui.urls)
    importlib.reload(a2ui_project.urls)
    clear_url_caches()


@pytest.fixture
def toy(settings):
    from a2ui.conf import DEFAULTS

    settings.A2UI = {**getattr(settings, "A2UI", {}), "ADAPTERS": [*DEFAULTS["ADAPTERS"], TOY]}
    _reload_urls()
    yield
    del settings.A2UI
    _reload_urls()


class Lines:
    """The toy stream's lines, as JSON objects (empty lines are its keepalives)."""

    def __init__(self, response):
        self.it = aiter(response.streaming_content)
        self.buffer = b""

    async def next(self, timeout=3):
        async with asyncio.timeout(timeout):
            while True:
                if b"\n" in self.buffer:
                    line, self.buffer = self.buffer.split(b"\n", 1)
                    if line.strip():
                        return json.loads(line)
                    continue
                chunk = await anext(self.it)
                self.buffer += chunk if isinstance(chunk, bytes) else chunk.encode()


async def _person_session(user, agent):
    """A session of the person's, opened by her page (the JSON-RPC socket)."""
    from a2ui import tokens
    from tests.wsutil import connect_user, init_session

    page = await database_sync_to_async(lambda: tokens.issue_stream_token(user, agent).token)()
    comm = await connect_user(page)
    sid = await init_session(comm)
    return comm, sid


def test_the_toy_is_registered_by_its_settings_line(toy):
    from django.urls import reverse

    from a2ui import tokens
    from a2ui.conf import a2ui_settings
    from a2ui.core import adapters, agentmethods

    assert [a.name for a in adapters.registered()][-1] == "toy"
    assert reverse("toy-events", args=["00000000-0000-0000-0000-000000000001"]) == \
        "/toy/sessions/00000000-0000-0000-0000-000000000001/events"
    assert "stream_toy" in tokens.stream_token_types()
    assert a2ui_settings.TOY_GREETING == "hello"  # its settings' defaults, read by the core
    assert agentmethods.by("sdk", "toy_wave").name == "toy.wave"


def test_its_token_is_minted_by_the_rest_api_and_opens_only_its_stream(toy, user, agent):
    from rest_framework.test import APIClient

    from a2ui import tokens

    client = APIClient()
    client.force_authenticate(user)
    reply = client.post("/api/v4/stream-token", {"token_type": "stream_toy"}, format="json")
    assert reply.status_code == 201, reply.content
    raw = reply.json()["token"]
    assert tokens.peek_any_stream_token(raw) == "stream_toy"
    with pytest.raises(tokens.TokenError):
        tokens.verify_stream_token(raw)  # not a page's token
    page = tokens.issue_stream_token(user, agent).token
    with pytest.raises(tokens.TokenError):
        tokens.verify_stream_token(page, "stream_toy")


async def test_its_listener_gets_its_kinds_and_its_snapshot(toy, user, agent):
    from a2ui import agents, tokens

    comm, sid = await _person_session(user, agent)
    toy_token = await database_sync_to_async(
        lambda: tokens.issue_stream_token(user, agent, "stream_toy").token)()
    client = AsyncClient()
    assert (await client.get(f"/toy/sessions/{sid}/events?token=nope")).status_code == 401
    await agents.arender(agent, sid, "card", {"title": "Before"}, component_id="c1")
    response = await client.get(f"/toy/sessions/{sid}/events?token={toy_token}")
    assert response.status_code == 200
    lines = Lines(response)
    assert await lines.next() == {"type": "snapshot", "components": ["c1"]}
    await agents.aprogress(agent, sid, "t1", "determinate", value=10)  # not a toy kind
    await agents.arender(agent, sid, "card", {"title": "After"}, component_id="c2")
    shown = await lines.next()
    assert shown["type"] == "component.rendered" and shown["data"]["component_id"] == "c2"
    await comm.disconnect()


async def test_its_agent_method_on_every_agent_path(toy, user, agent, agent_key):
    from a2ui import agents
    from tests.wsutil import connect_agent, recv, recv_until, send

    comm, sid = await _person_session(user, agent)
    # the Python API (a function made from the table)
    await agents.toy_wave(agent, sid, to="Ada")
    note = await recv_until(comm, lambda m: m.get("method") == "ui.notify")
    assert note["params"]["title"] == "wave: Ada"
    # the agent socket
    bot = await connect_agent(agent_key)
    await send(bot, {"jsonrpc": "2.0", "id": "w", "method": "toy.wave",
                     "params": {"session_id": sid, "to": "Grace"}})
    reply = await recv_until(bot, lambda m: m.get("id") == "w")
    assert "result" in reply, reply
    note = await recv_until(comm, lambda m: m.get("method") == "ui.notify")
    assert note["params"]["title"] == "wave: Grace"
    # a refusal in the caller's words, before anything is stored
    await send(bot, {"jsonrpc": "2.0", "id": "bad", "method": "toy.wave",
                     "params": {"session_id": sid, "to": 7}})
    reply = await recv_until(bot, lambda m: m.get("id") == "bad")
    assert reply["error"]["code"] == -32602 and reply["error"]["data"]["path"] == "params.to"
    while not await comm.receive_nothing(timeout=0.3):  # the agent's presence may be told
        assert (await recv(comm)).get("method") != "ui.notify"
    await bot.disconnect()
    await comm.disconnect()


def test_its_agent_method_is_an_mcp_tool(toy):
    from a2ui.core import agentmethods

    entry = agentmethods.by("tool", "toy_wave")
    assert entry is not None and entry.summary.startswith("Wave")


@pytest.mark.parametrize("n", [1, 3])
async def test_stale_state_plus_events_is_fresh_state_for_its_client(toy, user, agent, n):
    """What the toy client folds from its snapshot and the events after it is what a client
    connecting now gets as its snapshot."""
    from a2ui import agents, tokens

    comm, sid = await _person_session(user, agent)
    toy_token = await database_sync_to_async(
        lambda: tokens.issue_stream_token(user, agent, "stream_toy").token)()
    stale = Lines(await AsyncClient().get(f"/toy/sessions/{sid}/events?token={toy_token}"))
    shown = set((await stale.next())["components"])
    for i in range(n):
        await agents.arender(agent, sid, "card", {"title": str(i)}, component_id=f"c{i}")
    await agents.aprogress(agent, sid, "t", "determinate", value=5)  # not the toy's kind
    await agents.aupdate(agent, sid, "c0", {"title": "changed"})
    for _ in range(n + 1):  # n renders and the update: the toy's kinds only
        event = await stale.next()
        assert event["type"] in ("component.rendered", "component.updated")
        if event["type"] == "component.rendered":
            shown.add(event["data"]["component_id"])
    fresh = Lines(await AsyncClient().get(f"/toy/sessions/{sid}/events?token={toy_token}"))
    assert shown == set((await fresh.next())["components"])
    await comm.disconnect()
