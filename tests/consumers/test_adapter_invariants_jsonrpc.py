"""The "stale snapshot + events == fresh snapshot" invariant for the seed-000 JSON-RPC person
socket (/ws/v4/a2ui, ``a2ui.jsonrpc.consumer``; issue 24, item 4).

A session is driven through the services by random sequences of every core event kind the
socket shows (components rendered, updated and removed; requests opened, answered and timed out;
v0.9 surfaces created, updated and deleted; every activity kind; progress, notify and navigate,
which no snapshot keeps). At a random point a client resumes the session with ``a2ui.init``
(its snapshot: ``ui.render``, ``ui.request_input`` / ``ui.confirm``, ``a2ui.v09``,
``ui.activity {kind: snapshot}``) and then hears the notifications of the rest
(``a2ui.jsonrpc.events``). Folded by a client model (:class:`Client`, the web client's
semantics: ``ui.render`` replaces by id, ``ui.remove`` and ``a2ui.request_closed`` take away,
``a2ui.v09`` folds surfaces, ``ui.activity`` replaces or applies), what that client holds at the
end must equal what a client that resumes at the end is sent, and that must be the session's
fresh snapshot (``sessions.snapshot``). In process, with Channels' WebsocketCommunicator against
the real consumer; the end of each stream is marked by a ``ui.notify`` pushed last.
"""

import dataclasses
import random

import pytest

from a2ui import surfaces as surface_service
from a2ui import tokens
from a2ui.core import activity as A
from a2ui.core import state as S
from a2ui.core.content import methods
from a2ui.core.events import Kind
from a2ui.jsonrpc import adapter as jsonrpc_adapter
from a2ui.jsonrpc import events as wire
from a2ui.sessions import admission
from a2ui.sessions import lifecycle as sessions
from a2ui.surfaces import activity as activity_service
from tests.servicesops import AllOps, kinds_of, run
from tests.sessionops import surface_create
from tests.surfaces.helpers import V09_CAPS
from tests.wsutil import INIT, connect_user, recv, send

pytestmark = pytest.mark.django_db(transaction=True)

END = "end-of-stream"
TRANSIENT = {"ui.progress": Kind.PROGRESS, "ui.notify": Kind.NOTIFY,
             "ui.navigate": Kind.NAVIGATE}


# The client model --------------------------------------------------------------------------------


@dataclasses.dataclass
class Client:
    """What a seed-000 client holds, folded from the notifications it received, in the core's
    own terms (``a2ui.core.state``) so that it compares with a snapshot."""

    state: S.SessionState
    transient: list = dataclasses.field(default_factory=list)
    unknown: list = dataclasses.field(default_factory=list)
    ignore: frozenset = frozenset()  # methods this model drops (the check must notice)

    @classmethod
    def empty(cls, ignore=()):
        return cls(S.SessionState(registry=surface_service.catalog_registry(),
                                  limits=activity_service.limits()), ignore=frozenset(ignore))

    def apply(self, kind, data):
        self.state = S.apply(self.state, kind, data)

    def receive(self, message):
        method, params = message.get("method"), message.get("params") or {}
        if method in self.ignore:
            return
        if method == "ui.render":
            self.apply(Kind.COMPONENT_RENDERED, params)
        elif method == "ui.update":
            self.apply(Kind.COMPONENT_UPDATED, params)
        elif method == "ui.remove":
            self.apply(Kind.COMPONENT_REMOVED, params)
        elif method in wire.REQUEST_KIND_BY_METHOD:
            self.apply(Kind.REQUEST_OPENED, {"kind": wire.REQUEST_KIND_BY_METHOD[method],
                                             "params": params})
        elif method == "a2ui.request_closed":
            self.apply(Kind.REQUEST_CLOSED, params)
        elif method == "a2ui.v09":
            self.apply(Kind.SURFACE_BATCH, {"messages": params["messages"]})
        elif method == "ui.activity" and params["kind"] == "snapshot":  # replaces it whole
            self.state = dataclasses.replace(self.state,
                                             activity=A.from_dict(params["data"]))
        elif method == "ui.activity":
            self.apply(Kind(params["kind"]), params["data"])
        elif method in TRANSIENT:
            self.transient.append((TRANSIENT[method], params))
        else:
            self.unknown.append(message)

    def view(self):
        return S.comparable(S.snapshot(self.state))


# The socket ------------------------------------------------------------------------------------


async def resume(token, session_id):
    """A socket that resumed the session: the init reply checked, nothing else read yet."""
    socket = await connect_user(token)
    init = {**INIT, "params": {**INIT["params"], "session_id": str(session_id),
                               "capabilities": {**INIT["params"]["capabilities"],
                                                **V09_CAPS}}}
    await send(socket, init)
    reply = await recv(socket)
    assert reply.get("result", {}).get("resumed") is True, reply
    return socket


async def read_to_end(socket, session):
    """Every notification up to the end marker (a ``ui.notify`` pushed now)."""
    await run(session, ("push", "ui.notify", {"title": END, "level": "info"}))
    received = []
    while True:
        message = await recv(socket, timeout=10)
        if message.get("method") == "ui.notify" and message["params"]["title"] == END:
            return received
        received.append(message)


@pytest.fixture
def stream_token(user, agent):
    return tokens.issue_stream_token(user, agent)


@pytest.fixture
def session(stream_token):
    return admission.open_session(stream_token.record, {}, V09_CAPS)


async def streams(session, token, before, after):
    """What a client that resumed after ``before`` heard until the end, what one that resumed
    at the end was sent, and the session's fresh snapshot."""
    for op in before:
        await run(session, op)
    stale = await resume(token, session.session_id)
    try:
        for op in after:
            await run(session, op)
        heard = await read_to_end(stale, session)
    finally:
        await stale.disconnect()
    late = await resume(token, session.session_id)
    try:
        sent = await read_to_end(late, session)
    finally:
        await late.disconnect()
    return heard, sent, await sessions.asnapshot(session.session_id)


def fold(messages, ignore=()):
    client = Client.empty(ignore)
    for message in messages:
        client.receive(message)
    return client


SEEDS = range(8)
#: Every kind a seed-000 client is shown, bar consent.required (test_each_kind_is_shown).
COVERED = frozenset(Kind) - {Kind.RUN_ENDED, Kind.CONSENT_REQUIRED}


def test_the_random_sequences_cover_every_kind_the_socket_shows():
    ops = [op for seed in SEEDS for op in AllOps(seed).many(30)]
    assert kinds_of(ops) == COVERED
    assert {op[0] for op in ops} >= {"answer", "expire", "ttl"}


@pytest.mark.parametrize("seed", SEEDS)
async def test_stale_snapshot_and_events_equal_a_fresh_snapshot(session, stream_token, seed):
    ops = AllOps(seed).many(30)
    cut = random.Random(seed).randrange(len(ops) + 1)
    heard, sent, fresh = await streams(session, stream_token.token, ops[:cut], ops[cut:])
    stale, late = fold(heard), fold(sent)
    assert stale.unknown == [] and late.unknown == []
    assert stale.view() == late.view()
    assert late.view() == S.comparable(fresh)  # what a resuming client is sent is the session
    # The transient kinds reach the live client once each, and no snapshot has them.
    pushed = [(methods.KIND_BY_METHOD[op[1]], op[2]["title"] if op[1] == "ui.notify" else None)
              for op in ops[cut:] if op[0] == "push" and op[1] in TRANSIENT]
    assert [(kind, data.get("title") if kind is Kind.NOTIFY else None)
            for kind, data in stale.transient] == pushed
    assert late.transient == []


async def test_the_check_notices_a_client_that_drops_one_kind(session, stream_token):
    """The check can fail: a client model that drops one method the socket sends holds
    something the fresh snapshot does not."""
    def render(cid):
        return ("push", "ui.render", {"component_id": cid, "component_type": "card",
                                      "data": {"title": cid}})
    before = [render("c1"), render("c2"),
              ("push", "ui.request_input", {"request_id": "r1", "input_type": "text",
                                            "prompt": "Name?"})]
    after = [("push", "ui.update", {"component_id": "c1", "operation": "merge",
                                    "data": {"title": "Two"}}), render("c3"),
             ("answer", "r1", "input", "Ada"), ("ttl", "c2"),
             ("push", "ui.confirm", {"request_id": "r2", "title": "Go?"}),
             ("surfaces", surface_create("s1", 1)),
             ("activity", Kind.PLAN, {"plan_id": "p", "title": "Plan", "content": "- a",
                                      "status": "ACTIVE"})]
    heard, sent, _ = await streams(session, stream_token.token, before, after)
    assert fold(heard).view() == fold(sent).view()
    for method in ("ui.render", "ui.update", "ui.remove", "ui.confirm", "a2ui.request_closed",
                   "a2ui.v09", "ui.activity"):
        assert fold(heard, ignore={method}).view() != fold(sent).view(), method


async def test_a_component_whose_time_ran_out_leaves_the_live_client(session, stream_token):
    """Regression: ``component.removed`` had no seed-000 form, so a live client kept a
    component the sweep had removed (the web client's own ``ttl_seconds`` timer restarts
    from the whole ttl on a resume; a client without timers kept it forever)."""
    ops = [("push", "ui.render", {"component_id": "c1", "component_type": "card",
                                  "data": {"title": "Soon gone"},
                                  "metadata": {"ttl_seconds": 60}})]
    heard, sent, fresh = await streams(session, stream_token.token, ops, [("ttl", "c1")])
    assert {"jsonrpc": "2.0", "method": "ui.remove", "params": {"component_id": "c1"}} in heard
    assert fold(heard).view() == fold(sent).view() == S.comparable(fresh)
    assert fresh.components == []


async def test_without_ui_remove_the_check_fails(monkeypatch, session, stream_token):
    """The regression test above fails without the fix: the live client keeps the card."""
    monkeypatch.delitem(wire.METHOD_BY_KIND, Kind.COMPONENT_REMOVED, raising=False)
    wire.clear_cache()
    ops = [("push", "ui.render", {"component_id": "c1", "component_type": "card",
                                  "data": {"title": "Soon gone"}})]
    heard, sent, _ = await streams(session, stream_token.token, ops, [("ttl", "c1")])
    assert fold(heard).view() != fold(sent).view()
    assert [c["component_id"] for c in fold(heard).view()["components"]] == ["c1"]


def test_each_kind_is_shown():
    """Every kind the adapter declares has a seed-000 notification, and no other does
    (``surface.batch``: ``a2ui.v09``, by the client's catalogs, in the consumer)."""
    examples = {Kind.COMPONENT_REMOVED: {"component_id": "c"},
                Kind.REQUEST_CLOSED: {"request_id": "r", "status": "answered"},
                Kind.RUN_ENDED: {"run_id": "r", "status": "finished"},
                Kind.CONSENT_REQUIRED: {"consent_types": []}}
    shown = {kind for kind in Kind
             if kind is Kind.SURFACE_BATCH or kind in wire.ACTIVITY_KINDS
             or kind in wire.METHOD_BY_KIND
             or (kind is Kind.REQUEST_OPENED and wire.notification(kind, {
                 "kind": "input", "params": {}}) is not None)
             or (kind in examples and wire.notification(kind, examples[kind]) is not None)}
    assert shown == jsonrpc_adapter.ADAPTER.kinds
    assert wire.notification(Kind.COMPONENT_REMOVED, {"component_id": "c"}) == {
        "jsonrpc": "2.0", "method": "ui.remove", "params": {"component_id": "c"}}
