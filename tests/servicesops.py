"""Random sequences of every kind of session event, run through the services (the
"stale snapshot + events == fresh snapshot" tests of each adapter:
tests/consumers/test_adapter_invariants_jsonrpc.py, tests/mcp/test_mcp_invariant.py).

``AllOps`` is ``tests.sessionops.Ops`` plus activity events (``tests.activityops``), message
batches and components whose time runs out (``("ttl", component_id)``); ``run`` performs one
operation as the agent, the person or the clock would, on the test database.
"""

from channels.db import database_sync_to_async
from django.utils import timezone

from a2ui.core.content import methods
from a2ui.core.events import Kind
from a2ui.models import PendingRequest, RenderedComponent
from a2ui.push import answers, sweep
from a2ui.push import entry as pushentry
from a2ui.surfaces import activity as activity_service
from tests.activityops import ActivityOps
from tests.sessionops import Ops


class AllOps(Ops):
    """Every kind: ``Ops``' pushes, answers, timeouts and surfaces; activity (``("activity",
    kind, data)``); components whose time runs out (``("ttl", component_id)``)."""

    def __init__(self, seed):
        super().__init__(seed)
        self.activity = ActivityOps(seed + 1000, activity_service.limits())

    def one(self):
        roll = self.rng.random()
        if roll < 0.22:
            kind, data = self.activity.one()
            return ("activity", kind, data)
        if roll < 0.25:
            first, second = self._next("mb"), self._next("mb")
            return ("activity", Kind.MESSAGE_BATCH, {"messages": [
                {"message_id": mid, "role": "user", "sender": "ada", "content": mid}
                for mid in (first, second)]})
        if roll < 0.32 and self.components:
            cid = self.rng.choice(sorted(self.components))
            del self.components[cid]
            return ("ttl", cid)
        return super().one()


def kinds_of(ops):
    """The core event kinds ``ops`` emit."""
    kinds = set()
    for op in ops:
        if op[0] == "push":
            kinds.add(methods.KIND_BY_METHOD[op[1]])
        elif op[0] == "activity":
            kinds.add(Kind(op[1]))
        else:
            kinds.add({"answer": Kind.REQUEST_CLOSED, "expire": Kind.REQUEST_CLOSED,
                       "ttl": Kind.COMPONENT_REMOVED, "surfaces": Kind.SURFACE_BATCH}[op[0]])
    return kinds


async def run(session, op):
    """Perform one operation on ``session`` (an ``A2UISessionLog``) through the services."""
    sid, agent_id = session.session_id, session.agent_id
    if op[0] == "push":
        _, params = pushentry.validate(op[1], {**op[2], "session_id": str(sid)})
        await pushentry.apush(agent_id, sid, op[1], params)
    elif op[0] == "answer":
        await answers.aanswer(sid, op[1], op[2], op[3])
    elif op[0] == "surfaces":
        await pushentry.apush(agent_id, sid, "a2ui.v09", {"messages": op[1]})
    elif op[0] == "activity":
        await pushentry.aemit(agent_id, sid, op[1], op[2])
    elif op[0] == "expire":  # the request's deadline passes and the sweep times it out
        await database_sync_to_async(PendingRequest.objects.filter(
            session_id=sid, request_id=op[1]).update)(deadline=timezone.now())
        await sweep.sweep()
    elif op[0] == "ttl":  # the component's time runs out; the sweep removes it
        await database_sync_to_async(RenderedComponent.objects.filter(
            session_id=sid, component_id=op[1]).update)(expires_at=timezone.now())
        await sweep.sweep()
    else:
        raise AssertionError(op)
