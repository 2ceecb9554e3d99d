"""The database writes of leaving clients are batched (``dbthreads.batched``): under a mass
close the clients remembered for their resume (``clients.aleave``) share one transaction and the
sessions detached (``lifecycle.adetach_session``) one statement, instead of a thread hop and a
few round trips each. Each caller still waits for its own write; a session no longer live is
left as it is; a failure reaches every caller of its batch, and the next batch goes on."""

import asyncio
import time

import pytest
from channels.db import database_sync_to_async
from django.db import DatabaseError

from a2ui.infra import dbthreads
from a2ui.models import A2UISessionLog
from a2ui.sessions import clients
from a2ui.sessions import lifecycle as sessions

pytestmark = pytest.mark.django_db(transaction=True)
State = A2UISessionLog.State


@database_sync_to_async
def made(user, agent, *states, resumable=None):
    return [A2UISessionLog.objects.create(user=user, agent=agent, state=state,
                                          resumable_clients=resumable or []).pk
            for state in states]


@database_sync_to_async
def rows(pks, field):
    return [A2UISessionLog.objects.values_list(field, flat=True).get(pk=pk) for pk in pks]


@pytest.fixture
def batches(monkeypatch):
    """The items of each batch handed to the pool."""
    seen = []
    real = dbthreads.run

    async def counted(func, items, *args, **kwargs):
        seen.append((func.__name__, list(items)))
        return await real(func, items, *args, **kwargs)

    monkeypatch.setattr(dbthreads, "run", counted)
    return seen


async def test_clients_leaving_together_are_remembered_in_one_batch(user, agent, batches):
    a, b, closed = await made(user, agent, State.ACTIVE, State.ACTIVE, State.CLOSED)
    joined = [(a, await clients.ajoin(a, "jsonrpc", None)),
              (a, await clients.ajoin(a, "v09", ["c1"])),
              (b, await clients.ajoin(b, "agui", None)),
              (closed, await clients.ajoin(closed, "jsonrpc", None))]
    await asyncio.gather(*(clients.aleave(sid, lease) for sid, lease in joined))
    assert [(name, len(items)) for name, items in batches] == [("remember_many", 4)]
    kept_a, kept_b, kept_closed = await rows([a, b, closed], "resumable_clients")
    assert [(e["protocol"], e["catalogs"]) for e in kept_a] == [("jsonrpc", None),
                                                                 ("v09", ["c1"])]
    assert [e["protocol"] for e in kept_b] == ["agui"]
    assert kept_closed == []
    assert await clients.attached(a) == [] and await clients.attached(b) == []


async def test_a_remembered_client_keeps_the_window_and_the_newest(user, agent, monkeypatch):
    monkeypatch.setattr(clients, "MAX_RESUMABLE", 3)
    now = time.time()
    old = [{"protocol": "agui", "catalogs": None, "left_at": now - 10 ** 6}]  # past the window
    recent = [{"protocol": "v09", "catalogs": None, "left_at": now - k} for k in (3, 2, 1)]
    sid, = await made(user, agent, State.ACTIVE, resumable=old + recent)
    await clients._remember((sid, "jsonrpc", None, now))
    kept, = await rows([sid], "resumable_clients")
    assert [e["protocol"] for e in kept] == ["v09", "v09", "jsonrpc"]
    assert kept[-1]["left_at"] == now


async def test_sessions_detached_together_share_one_statement(user, agent, batches):
    pks = await made(user, agent, State.ACTIVE, State.INITIALIZED, State.ACTIVE, State.CLOSED)
    await asyncio.gather(*(sessions.adetach_session(pk) for pk in pks[:2]),
                         sessions.adetach_session(str(pks[2])), sessions.adetach_session(pks[3]))
    assert [(name, len(items)) for name, items in batches] == [("detach_sessions", 4)]
    detached = await rows(pks, "detached_at")
    assert all(at is not None for at in detached[:3]) and detached[3] is None


async def test_a_batch_holds_at_most_most_and_a_failure_reaches_its_callers():
    calls = []

    def run_many(items):
        calls.append(list(items))
        if "bad" in items:
            raise DatabaseError("down")
        return [item * 2 for item in items]

    one = dbthreads.batched(run_many, most=2)
    answers = await asyncio.gather(*(one(x) for x in ["a", "b", "c", "bad", "d"]),
                                   return_exceptions=True)
    assert calls == [["a", "b"], ["c", "bad"], ["d"]]
    assert answers[:2] == ["aa", "bb"] and answers[4] == "dd"
    assert all(isinstance(a, DatabaseError) for a in answers[2:4])
    assert await one("e") == "ee"  # the next batch goes on
    assert calls[-1] == ["e"]
