"""Tier 2: Redis under Sentinel fails over under two live Daphne processes; nothing delivered is
lost.

A Sentinel set of the test's own (tests/sentinelset.py: a primary, a replica, three sentinels),
two Daphne processes configured with its ``redis+sentinel://`` URL. The agent runs twice, a
socket on each process: the one on A pushes to a session watched by JSON-RPC sockets on A and B,
the one on B to a session watched by AG-UI sockets on A and B. The
primary is SIGKILLed while the agent pushes; the sentinels promote the replica. Then:

* every render the agent was told was delivered is on every socket's screen (the components it
  received, live or in a resync) within ``CONVERGE_SECONDS`` of the last push, with no reload;
* the first push after the promotion is visible is accepted within ``RECOVER_SECONDS``;
* a promoted replica may lack the primary's last writes (replication is asynchronous): the
  test makes it so (the JSON-RPC session's counter set back by three, as if its last
  increments had not reached the replica) and the sockets must still converge: they are ahead
  of the counter, which ``seqwatch`` detects, instead of taking reused numbers as
  already seen.
"""

import asyncio
import json
import time
import uuid

import pytest

from tests.live.client import init_session, open_agent, open_user
from tests.live.screen import Screen
from tests.live.test_live_agui import open_agui
from tests.live.test_live_jsonrpc import is_method, new_token
from tests.live.test_live_mcp import issue

pytestmark = pytest.mark.django_db(transaction=True)

CONVERGE_SECONDS = 2.0
#: From the promotion being visible (every sentinel names the replica) to an accepted push:
#: the hot path asks the sentinels again on its next command, the layer's subscription
#: reconnects with a backoff of at most 0.5 s.
RECOVER_SECONDS = 2.0


class Agent:
    def __init__(self, client, delivered, refused):
        self.client = client
        self.delivered = delivered  # session id -> [component id], shared by the agent's sockets
        self.refused = refused
        self.n = 0

    async def render(self, sid, component_id):
        """One ui.render; remembered as delivered only if the agent was told so."""
        self.n += 1
        rpc_id = f"r{self.n}"
        await self.client.send({"jsonrpc": "2.0", "id": rpc_id, "method": "ui.render", "params": {
            "session_id": sid, "component_id": component_id, "component_type": "card",
            "data": {"title": component_id}}})
        reply = await self.client.recv_until(lambda m: m.get("id") == rpc_id and "method" not in m,
                                             timeout=30)
        if reply.get("result", {}).get("delivered") is True:
            self.delivered.setdefault(sid, []).append(component_id)
            return True
        self.refused.append((component_id, reply.get("error", {}).get("code")))
        return False


@pytest.fixture
def sentinel_servers(request, live_services, transactional_db):
    """``(sentinel set, start)``: a Sentinel set of the test's own and a factory of Daphne
    processes configured with its ``redis+sentinel://`` URL."""
    from tests.live.conftest import servers_on
    from tests.sentinelset import SentinelSet

    yield from servers_on(request, SentinelSet().start(), lambda s: s.url(0))


async def converged(screens, want_by_screen, since, seconds=CONVERGE_SECONDS):
    deadline = since + seconds
    while time.monotonic() < deadline:
        if all(want_by_screen(s) <= s.ids for s in screens):
            return time.monotonic() - since
        await asyncio.sleep(0.02)
    missing = {s.name: sorted(want_by_screen(s) - s.ids) for s in screens}
    raise AssertionError(f"not converged {seconds} s after the last push: missing {missing}")


async def test_a_sentinel_failover_loses_nothing_delivered(sentinel_servers, user, agent,
                                                            agent_key):
    sentinels, start = sentinel_servers
    a, b = start(), start()
    bot = await open_agent(a, agent_key)

    # Session 1: JSON-RPC sockets on B and A.
    j1 = await open_user(b, await new_token(user, agent))
    rpc_sid = await init_session(j1)
    await bot.recv_until(is_method("session.opened"))
    j2 = await open_user(a, await new_token(user, agent))
    assert await init_session(j2, session_id=rpc_sid) == rpc_sid
    await bot.recv_until(is_method("session.resumed"))
    # Session 2: AG-UI sockets on B and A.
    g1 = await open_agui(b, await issue(user, agent, "stream_agui"))
    first = json.loads(await g1.ws.recv())["event"]
    assert first["type"] == "CONNECTION_STATUS", first
    agui_sid = first["session_id"]
    await bot.recv_until(is_method("session.opened"))
    g2 = await open_agui(a, await issue(user, agent, "stream_agui"), agui_sid)
    await bot.recv_until(is_method("session.resumed"))

    screens = [Screen(j1, "rpc@B"), Screen(j2, "rpc@A"), Screen(g1, "agui@B"),
               Screen(g2, "agui@A")]
    session_of = {s: (rpc_sid if s.name.startswith("rpc") else agui_sid) for s in screens}
    delivered, refused = {}, []
    bot_b = await open_agent(b, agent_key)
    pusher = {rpc_sid: Agent(bot, delivered, refused), agui_sid: Agent(bot_b, delivered, refused)}

    def want(screen):
        return set(delivered.get(session_of[screen], ()))

    for i in range(4):
        assert await pusher[rpc_sid].render(rpc_sid, f"rpc-before-{i}")
        assert await pusher[agui_sid].render(agui_sid, f"agui-before-{i}")
    await converged(screens, want, time.monotonic())

    # The replica lacks the primary's last writes (replication is asynchronous): made so here,
    # its copy of the JSON-RPC session's counter three behind the primary's when it dies.
    stream_key = f"a2ui:ss:{uuid.UUID(rpc_sid).hex}"
    replica = sentinels.replica_port
    await asyncio.to_thread(sentinels.command, replica, "CONFIG", "SET", "replica-read-only", "no")
    behind = await asyncio.to_thread(sentinels.command, replica, "HINCRBY", stream_key, "n", -3)
    assert behind == 1, behind  # 4 pushes, 3 not replicated
    sentinels.kill_primary()
    promotion = asyncio.ensure_future(asyncio.to_thread(sentinels.wait_promoted))
    during = 0
    while not promotion.done():  # the agent keeps pushing through the failover
        await asyncio.gather(pusher[rpc_sid].render(rpc_sid, f"rpc-during-{during}"),
                             pusher[agui_sid].render(agui_sid, f"agui-during-{during}"))
        during += 1
        await asyncio.sleep(0.1)
    promoted = await promotion

    accepted, refused_after = None, []
    for i in range(10):
        for sid, prefix in ((rpc_sid, "rpc"), (agui_sid, "agui")):
            ok = await pusher[sid].render(sid, f"{prefix}-after-{i}")
            if ok and accepted is None:
                accepted = time.monotonic() - promoted
            elif not ok and accepted is not None:
                refused_after.append(f"{prefix}-after-{i}")
    assert accepted is not None and accepted <= RECOVER_SECONDS, (accepted, refused)
    assert refused_after == [], refused  # once one push went through, every one does
    took = await converged(screens, want, time.monotonic())
    assert all(any(c.startswith(p) for c in delivered[sid]) for sid, p in (
        (rpc_sid, "rpc-after"), (agui_sid, "agui-after")))
    print(f"\nfailover: {during} rounds during, first push accepted {accepted:.3f} s after the "
          f"promotion was visible, converged {took:.3f} s after the last push, "
          f"refused {len(refused)}")
    for screen in screens:
        await screen.close()
    await bot.close()
    await bot_b.close()
