"""Tier 2: nobody is locked out by their own closed tabs, across two Daphne processes.

An agent allows 10 concurrent sessions in use (seed 000 section 7), a person 5 of them. A
person who opened 5 tabs (the 6th is refused with -32007 ``per: person`` and closed with
4007) and closed them all, then opened and closed another, can still open the next: a new tab
takes over the person's detached session.
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


async def test_person_who_closed_their_tabs_opens_more(two_servers, user, agent):
    servers = two_servers
    tabs = [await open_user(servers[n % 2], await new_token(user, agent)) for n in range(5)]
    replies = await asyncio.gather(*(init(tab, rpc_id=f"t{n}") for n, tab in enumerate(tabs)))
    assert all("result" in r and not r["result"].get("resumed") for r in replies), replies
    sids = [r["result"]["session_id"] for r in replies]

    # With five tabs open (the person's share), a sixth is refused and closed: no retry.
    extra = await open_user(servers[1], await new_token(user, agent))
    refused = await init(extra, rpc_id="x")
    assert refused["error"]["code"] == -32007 and refused["error"]["data"] == {"limit": 5, "per": "person"}
    code, _, _ = await extra.expect_close()
    assert code == 4007

    for tab in tabs:
        await tab.close()
    await wait_detached(sids)

    for n, server in enumerate((servers[0], servers[1])):  # the 6th tab, then the 7th
        tab = await open_user(server, await new_token(user, agent))
        reply = await init(tab, rpc_id=f"again{n}")
        assert "result" in reply, reply
        assert reply["result"]["resumed"] is True and reply["result"]["session_id"] in sids
        await tab.close()
        await wait_detached([reply["result"]["session_id"]])

    rejected = await database_sync_to_async(
        lambda: A2UISessionLog.objects.filter(state="rejected").count())()
    assert rejected == 1
