"""Tier 2: a socket's clean-up held up past Daphne's ``--application-close-timeout`` still ends.

Daphne cancels an application still running ``application_close_timeout`` seconds after its
client left. A socket's clean-up (its client remembered for a resume, the session's socket
count taken back and the session detached, its lease released) runs in a task that cancel does
not reach (``a2ui.consumers.base.SafeSocketMixin``); tests/push/test_cancelled_close.py shows
it in-process with the cancel made by hand. Here a real Daphne does the cancelling: the test
holds the sessions' rows locked in PostgreSQL, so every close's database step waits well past
a one-second close timeout, then lets them go.
"""

import asyncio

import psycopg
import pytest
import redis
from channels.db import database_sync_to_async

from a2ui.infra.shared import clients_key
from a2ui.models import A2UISessionLog
from tests.live.client import init_session, open_user
from tests.live.conftest import _database_url
from tests.live.test_live_jsonrpc import new_token

pytestmark = pytest.mark.django_db(transaction=True)

SOCKETS = 4  # under the per-person session share (5)
CLOSE_TIMEOUT = 1  # seconds: Daphne's --application-close-timeout for the server
HELD = 4.0  # seconds the rows stay locked after the clients left


def _rows(sids):
    return {str(r.pk): r for r in A2UISessionLog.objects.filter(pk__in=sids)}


async def test_a_clean_up_held_past_the_close_timeout_still_ends(daphne_server, user, agent,
                                                                 live_services):
    server = daphne_server("--application-close-timeout", str(CLOSE_TIMEOUT))
    clients, sids = [], []
    for _ in range(SOCKETS):
        client = await open_user(server, await new_token(user, agent))
        sids.append(await init_session(client))
        clients.append(client)
    leases = redis.Redis.from_url(live_services)
    try:
        assert all(leases.zcard(clients_key(sid.replace("-", ""))) == 1 for sid in sids)
        lock = await psycopg.AsyncConnection.connect(_database_url())
        try:
            table = A2UISessionLog._meta.db_table
            await lock.execute(f"SELECT 1 FROM {table} WHERE session_id = ANY(%s::uuid[]) "
                               "FOR UPDATE", [sids])
            for client in clients:
                await client.close()
            await asyncio.sleep(HELD)  # Daphne has cancelled the applications by now
            rows = await database_sync_to_async(_rows)(sids)
            assert all(r.detached_at is None for r in rows.values())  # still held up
            assert server.alive
        finally:
            await lock.rollback()
            await lock.close()
        for _ in range(150):
            rows = await database_sync_to_async(_rows)(sids)
            if all(r.detached_at is not None for r in rows.values()):
                break
            await asyncio.sleep(0.1)
        for sid in sids:
            row = rows[sid]
            assert row.detached_at is not None, f"session {sid} never detached"
            assert [e["protocol"] for e in row.resumable_clients] == ["jsonrpc"]
            assert leases.zcard(clients_key(sid.replace("-", ""))) == 0
    finally:
        leases.close()
    assert "Traceback" not in server.log()
