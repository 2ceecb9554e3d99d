"""Tier 2: nobody is locked out by their own closed tabs, across two Daphne processes.

An agent allows 10 concurrent sessions (seed 000 section 7). A person who opened 10 tabs (the
11th is refused with -32007 and closed with 4007) and closed them all, then opened and closed
an 11th, can still open a 12th: a new tab takes over the person's detached session.
"""

import asyncio
import time

import pytest
from channels.db import database_sync_to_async

from a2ui import tokens
from a2ui.models import A2UISessionLog
from tests.live.client import init, open_user

pytestmark = pytest.mark.django_db(transaction=True)


def new_token(user, agent):
    return database_sync_to_async(lambda: tokens.issue_stream_token(user, agent).token)()


@database_sync_to_async
def detached_count(sids):
    return A2UISessionLog.objects.filter(pk__in=sids, detached_at__isnull=False).count()


async def wait_detached(sids, timeout=10.0):
    """The person closed the tabs: wait until the servers noticed (their disconnects ran)."""
    deadline = time.monotonic() + timeout
    while await detached_count(sids) < len(sids):
        assert time.monotonic() < deadline, "the closed tabs were never detached"
        await asyncio.sleep(0.05)


async def test_person_who_closed_eleven_tabs_opens_a_twelfth(two_servers, user, agent):
    servers = two_servers
    tabs = [await open_user(servers[n % 2], await new_token(user, agent)) for n in range(10)]
    replies = await asyncio.gather(*(init(tab, rpc_id=f"t{n}") for n, tab in enumerate(tabs)))
    assert all("result" in r and not r["result"].get("resumed") for r in replies), replies
    sids = [r["result"]["session_id"] for r in replies]

    # With ten tabs open, an eleventh is refused and closed: the client must not retry.
    extra = await open_user(servers[1], await new_token(user, agent))
    refused = await init(extra, rpc_id="x")
    assert refused["error"]["code"] == -32007 and refused["error"]["data"] == {"limit": 10}
    code, _, _ = await extra.expect_close()
    assert code == 4007

    for tab in tabs:
        await tab.close()
    await wait_detached(sids)

    for n, server in enumerate((servers[0], servers[1])):  # the 11th tab, then the 12th
        tab = await open_user(server, await new_token(user, agent))
        reply = await init(tab, rpc_id=f"again{n}")
        assert "result" in reply, reply
        assert reply["result"]["resumed"] is True and reply["result"]["session_id"] in sids
        await tab.close()
        await wait_detached([reply["result"]["session_id"]])

    rejected = await database_sync_to_async(
        lambda: A2UISessionLog.objects.filter(state="rejected").count())()
    assert rejected == 1
