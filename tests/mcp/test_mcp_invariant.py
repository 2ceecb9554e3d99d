"""The "stale snapshot + events == fresh snapshot" invariant for MCP (issue 24, item 4): what
an MCP host reads of a person's session (``resources/list`` and ``resources/read`` of its
components, surfaces, open requests and activity: ``a2ui.mcp.person``), kept up to date by the
notifications the server sends (``notifications/resources/updated`` for the URIs it subscribed
to, ``notifications/resources/list_changed``: ``a2ui.mcp.changes``), must equal what a host
that reads everything afresh at the end holds.

In process, with the official SDK's ``ClientSession`` against the ASGI app
(``tests.mcp.asgiclient``). The session is driven through the services by random sequences of
every core event kind (``tests.servicesops``); at a random point a host (:class:`Host`) lists
the session's resources, subscribes to each and reads it; it then handles the notifications
as they arrive, between the operations (``list_changed``: list again, subscribe to and read
what is new, forget what went; ``updated``: read that URI again, a -32002 forgetting it). The
end of the stream is an update of a marker component the host subscribed to, made last.
"""

import asyncio
import json
import random

import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError

from a2ui import tokens
from a2ui.core import activity as A
from a2ui.core.events import MESSAGE_TYPE, Kind
from a2ui.mcp import adapter as mcp_adapter
from a2ui.mcp import changes, uris
from a2ui.sessions import lifecycle as sessions
from tests.mcp.asgiclient import build_app, sdk_session
from tests.servicesops import AllOps, kinds_of, run
from tests.sessionops import surface_create
from tests.surfaces.helpers import V09_CAPS

pytestmark = pytest.mark.django_db(transaction=True)

A2UI_HOST = {"a2ui": {"clientCapabilities": V09_CAPS}}  # declares the basic catalog
MARKER = "end"


def render(cid, title=None):
    return ("push", "ui.render", {"component_id": cid, "component_type": "card",
                                  "data": {"title": title or cid}})


class Host:
    """An MCP host's cache of one session's resources, kept by the notifications.

    ``ignore``: notification types this host drops (the check must notice)."""

    def __init__(self, client, session_id, ignore=()):
        self.client, self.sid = client, str(session_id)
        self.listed = {}  # uri -> (mime type, name)
        self.cache = {}  # uri -> [(mime type, text)]
        self.notes = asyncio.Queue()
        self.ignore = tuple(ignore)
        self.marked = False

    async def on_message(self, message):  # the SDK's message handler: queue, handle later
        if not isinstance(message, Exception):
            await self.notes.put(message)

    def mine(self, uri):
        return f"://sessions/{self.sid}/" in uri or uri.endswith(f"://sessions/{self.sid}")

    async def read(self, uri):
        try:
            result = await self.client.read_resource(uri)
        except MCPError as exc:
            assert exc.code == -32002, exc  # gone: answered, removed, deleted
            self.cache.pop(uri, None)
            return
        self.cache[uri] = [(c.mime_type, c.text) for c in result.contents]

    async def relist(self):
        found = {str(r.uri): (r.mime_type, r.name)
                 for r in (await self.client.list_resources()).resources
                 if self.mine(str(r.uri))}
        for uri in found.keys() - self.listed.keys():
            await self.client.subscribe_resource(uri)  # first, so no change falls between
            await self.read(uri)
        for uri in self.listed.keys() - found.keys():
            self.cache.pop(uri, None)
        self.listed = found

    async def handle(self, note):
        if isinstance(note, types.ResourceUpdatedNotification) and \
                str(note.params.uri) == uris.build("components", self.sid, MARKER):
            self.marked = True
        if isinstance(note, self.ignore):
            return
        if isinstance(note, types.ResourceListChangedNotification):
            await self.relist()
        elif isinstance(note, types.ResourceUpdatedNotification):
            await self.read(str(note.params.uri))

    async def handle_arrived(self):
        """The notifications that arrived so far (none waited for)."""
        for _ in range(3):
            await asyncio.sleep(0)
        while not self.notes.empty():
            await self.handle(self.notes.get_nowait())

    async def handle_to_marker(self, session):
        """Update the marker (last), then handle every notification up to its own."""
        await run(session, ("push", "ui.update", {"component_id": MARKER,
                                                  "operation": "merge",
                                                  "data": {"description": "done"}}))
        while not self.marked:
            await self.handle(await asyncio.wait_for(self.notes.get(), 10))

    def view(self):
        return self.listed, self.cache




@pytest.fixture
def mcp_token(user, agent):
    return tokens.issue_stream_token(user, agent, "stream_mcp").token


async def hosts(session, mcp_token, before, after, ignore=()):
    """The stale host (it read at the cut and followed the notifications) and a fresh one."""
    app = build_app()
    try:
        await run(session, render(MARKER))
        for op in before:
            await run(session, op)
        stale = Host(None, session.session_id, ignore)
        async with sdk_session(app, mcp_token, message_handler=stale.on_message,
                               extensions=A2UI_HOST) as client:
            stale.client = client
            await stale.relist()
            for op in after:
                await run(session, op)
                await stale.handle_arrived()
            await stale.handle_to_marker(session)
        fresh = Host(None, session.session_id)
        async with sdk_session(app, mcp_token, message_handler=fresh.on_message,
                               extensions=A2UI_HOST) as client:
            fresh.client = client
            await fresh.relist()
        return stale, fresh
    finally:
        await app.runner.stop()


def items(host, kind):
    return sorted(uris.parse(uri).item for uri in host.listed if uris.parse(uri).kind == kind)


async def check_against_the_session(host, session):
    """The fresh host's view is the session's snapshot (the check is not of two empties)."""
    snap = await sessions.asnapshot(session.session_id)
    assert items(host, "components") == sorted(c["component_id"] for c in snap.components)
    assert items(host, "requests") == sorted(r["params"]["request_id"] for r in snap.requests)
    assert items(host, "surfaces") == sorted(
        s["surfaceId"] for s in snap.surfaces if not s["deleted"])
    activity = uris.build("activity", session.session_id)
    assert json.loads(host.cache[activity][0][1]) == A.to_dict(A.from_dict(snap.activity))


SEEDS = range(8)


def test_the_random_sequences_cover_every_kind_a_host_is_shown():
    ops = [op for seed in SEEDS for op in AllOps(seed).many(30)]
    assert kinds_of(ops) >= mcp_adapter.ADAPTER.kinds


def test_the_adapter_declares_the_kinds_that_change_a_resource():
    examples = {Kind.COMPONENT_RENDERED: {"component_id": "c"},
                Kind.COMPONENT_UPDATED: {"component_id": "c"},
                Kind.COMPONENT_REMOVED: {"component_id": "c"},
                Kind.REQUEST_OPENED: {"kind": "input", "params": {"request_id": "r"}},
                Kind.REQUEST_CLOSED: {"request_id": "r", "status": "answered"},
                Kind.SURFACE_BATCH: {"messages": surface_create("s", 1)}}
    changing = {kind for kind in Kind if changes.affected(
        {"type": MESSAGE_TYPE, "kind": str(kind), "data": examples.get(kind, {})})[0]}
    assert changing == mcp_adapter.ADAPTER.kinds


@pytest.mark.parametrize("seed", SEEDS)
async def test_a_host_kept_by_the_notifications_reads_what_a_fresh_host_reads(
        session, mcp_token, seed):
    ops = AllOps(seed).many(30)
    cut = random.Random(seed).randrange(len(ops) + 1)
    stale, fresh = await hosts(session, mcp_token, ops[:cut], ops[cut:])
    assert stale.view() == fresh.view()
    await check_against_the_session(fresh, session)


SCENARIO = ([render("c1"), render("c2"), ("push", "ui.request_input", {
    "request_id": "r1", "input_type": "text", "prompt": "Name?"}),
    ("surfaces", surface_create("s1", 1))],
    [("push", "ui.update", {"component_id": "c1", "operation": "merge",
                            "data": {"description": "now"}}), render("c3"),
     ("answer", "r1", "input", "Ada"), ("ttl", "c2"),
     ("push", "ui.confirm", {"request_id": "r2", "title": "Go?"}),
     ("surfaces", [{"version": "v0.9", "updateDataModel": {"surfaceId": "s1", "path": "/name",
                                                          "value": "Ada"}}]),
     ("surfaces", surface_create("s2", 2)),
     ("activity", Kind.PLAN, {"plan_id": "p", "title": "Plan", "content": "- a",
                              "status": "ACTIVE"})])


async def test_the_scenario_keeps_the_invariant(session, mcp_token):
    stale, fresh = await hosts(session, mcp_token, *SCENARIO)
    assert stale.view() == fresh.view()
    assert items(fresh, "components") == ["c1", "c3", MARKER]
    assert items(fresh, "requests") == ["r2"] and items(fresh, "surfaces") == ["s1", "s2"]


@pytest.mark.parametrize("dropped", [types.ResourceListChangedNotification,
                                     types.ResourceUpdatedNotification])
async def test_the_check_notices_a_host_that_drops_a_notification(session, mcp_token,
                                                                   dropped):
    """The check can fail: a host that ignores ``list_changed`` misses c3, r2 and s2 (and
    keeps r1 and c2's listing); one that ignores ``updated`` keeps c1, s1 and the activity as
    they were."""
    stale, fresh = await hosts(session, mcp_token, *SCENARIO, ignore=(dropped,))
    assert stale.view() != fresh.view()
    changed = {uri for uri in fresh.cache.keys() | stale.cache.keys()
               if stale.cache.get(uri) != fresh.cache.get(uri)}
    sid = session.session_id
    if dropped is types.ResourceUpdatedNotification:
        assert {uris.build("components", sid, "c1"), uris.build("surfaces", sid, "s1"),
                uris.build("activity", sid)} <= changed
    else:
        assert {uris.build("components", sid, "c3"), uris.build("requests", sid, "r2"),
                uris.build("surfaces", sid, "s2")} <= changed


async def test_a_retitled_component_is_listed_under_its_new_name(session, mcp_token):
    stale, fresh = await hosts(session, mcp_token, [render("c1", "Old")], [
        ("push", "ui.update", {"component_id": "c1", "operation": "replace",
                               "data": {"title": "New"}})])
    assert stale.view() == fresh.view()
    assert fresh.listed[uris.build("components", session.session_id, "c1")][1] == "New"


def test_a_title_change_changes_the_list():
    """Sans-I/O: the update that may retitle a component says the list changed (its listed
    name is the title); other updates do not."""
    def updated(operation, data):
        return changes.affected({"type": MESSAGE_TYPE, "kind": "component.updated", "data": {
            "component_id": "c1", "operation": operation, "data": data}})

    assert updated("merge", {"title": "New"}) == ({("components", "c1")}, True)
    assert updated("replace", {"content": "x"}) == ({("components", "c1")}, True)
    assert updated("merge", {"description": "x"}) == ({("components", "c1")}, False)
    assert updated("append", {"rows": [{"n": 1}]}) == ({("components", "c1")}, False)
