"""The one loop (a2ui.consumers.session.SessionListener) reads the kinds its adapter shows: an
event of another kind is dropped there, after its number is taken, so a gap is still a gap;
every person-side listener names its adapter."""

import uuid

from a2ui.consumers.session import SessionListener
from a2ui.core.adapters import Adapter
from a2ui.core.events import Kind
from a2ui.core.lifecycle import Event


class Listener(SessionListener):
    adapter = Adapter(name="probe", kinds=frozenset({Kind.PROGRESS}))

    def __init__(self):
        super().__init__()
        self.shown, self.states = [], 0
        self.session_id, self.epoch = uuid.uuid4(), "e1"
        self.life.fire(Event.SESSION_OPENED)

    async def show(self, kind, message):
        self.shown.append((kind, message["seq"]))

    async def send_state(self):
        self.states += 1


def event(kind, seq):
    return {"type": "a2ui.event", "kind": str(kind), "data": {}, "seq": seq, "epoch": "e1"}


async def test_kinds_the_adapter_does_not_show_are_dropped_after_their_number():
    listener = Listener()
    await listener.a2ui_event(event(Kind.PROGRESS, 1))
    await listener.a2ui_event(event(Kind.NOTIFY, 2))  # not shown, numbered
    await listener.a2ui_event(event(Kind.PROGRESS, 3))
    assert listener.shown == [(Kind.PROGRESS, 1), (Kind.PROGRESS, 3)]
    assert listener.last_seq == 3 and listener.states == 0  # no gap: 2 was seen
    await listener.a2ui_event(event(Kind.PROGRESS, 5))  # 4 lost, whatever its kind
    assert listener.states == 1 and listener.shown[-1] == (Kind.PROGRESS, 5)


async def test_a_listener_without_an_adapter_is_shown_every_kind():
    class Every(Listener):
        adapter = None

    listener = Every()
    await listener.a2ui_event(event(Kind.NOTIFY, 1))
    assert listener.shown == [(Kind.NOTIFY, 1)]


def test_every_person_side_listener_names_its_adapter():
    from a2ui.agui import adapter as agui
    from a2ui.agui.consumer import AguiConsumer
    from a2ui.agui1 import adapter as agui1
    from a2ui.agui1.stream import RunStream
    from a2ui.jsonrpc import adapter as jsonrpc
    from a2ui.jsonrpc.consumer import A2UIUserConsumer
    from a2ui.mcp import adapter as mcp
    from a2ui.mcp.watch import WatchedSession
    from a2ui.v09 import adapter as v09
    from a2ui.v09.consumer import A2UIV09Consumer
    from a2ui.v09.stream import SurfaceStream

    assert A2UIUserConsumer.adapter_name == jsonrpc.ADAPTER.name
    assert A2UIV09Consumer.adapter_name == SurfaceStream.adapter_name == v09.ADAPTER.name
    assert AguiConsumer.adapter_name == agui.ADAPTER.name
    assert RunStream.adapter_name == agui1.ADAPTER.name
    assert WatchedSession.adapter_name == mcp.ADAPTER.name
