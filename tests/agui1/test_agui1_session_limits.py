"""Session limits a person cannot use up by using the product (a2ui.sessions.admission).

Only attached sessions take a place in the agent's limit (a run in flight, an open tab); a
person may hold a share of it; a person's detached sessions yield to their new ones. A person
opening many AG-UI 1.0 threads keeps working; another person still gets sessions while one
person floods; each refusal says which limit (-32007 data ``per``, HTTP 429 on the run view).
"""

import pytest
from channels.db import database_sync_to_async
from django.contrib.auth import get_user_model
from django.test import override_settings

from a2ui import agents, tokens
from a2ui.models import A2UISessionLog
from tests.agui1 import sse
from tests.wsutil import recv, send

pytestmark = pytest.mark.django_db(transaction=True)
LIVE = A2UISessionLog.LIVE_STATES


@database_sync_to_async
def set_limit(agent, limit):
    agent.max_concurrent_sessions = limit
    agent.save()


@database_sync_to_async
def thread_session(user, thread):
    return A2UISessionLog.objects.filter(
        user=user, client_info__agui_thread_id=thread, state__in=LIVE).get().session_id


@database_sync_to_async
def live(user, **filters):
    return A2UISessionLog.objects.filter(user=user, state__in=LIVE, **filters).count()


@database_sync_to_async
def new_person(name):
    return get_user_model().objects.create_user(name, password="pw-" + name)


async def one_run(user, agent, token, thread, run_id):
    """A run of ``thread`` the agent answers and finishes: its stream ends, the run's
    session is detached."""
    run = await sse.start(token, run_id, thread=thread)
    assert (await run.next())["type"] == "RUN_STARTED"
    sid = await thread_session(user, thread)
    await agents.afinish_run(agent, str(sid), run_id, {"ok": thread})
    rest = await run.rest()
    assert rest[-1]["type"] == "RUN_FINISHED", rest
    return sid


async def open_tab(user, agent):
    from tests.wsutil import connect_user

    token = await database_sync_to_async(lambda: tokens.issue_stream_token(user, agent).token)()
    comm = await connect_user(token)
    await send(comm, {"jsonrpc": "2.0", "id": "i", "method": "a2ui.init", "params": {
        "client_info": {"name": "tab", "version": "1"}, "capabilities": {}}})
    return comm, await recv(comm)


async def test_a_person_opens_many_threads_well_beyond_the_limit(user, agent):
    """Thirty threads with an agent that allows ten sessions: every run streams (the
    finished threads are detached and take no place), the person's detached sessions beyond
    MAX_DETACHED_SESSIONS_PER_PERSON were closed, oldest first, and a recent thread resumes
    its own session."""
    token = await sse.issue(user, agent)
    with override_settings(A2UI={"MAX_DETACHED_SESSIONS_PER_PERSON": 20}):
        sids = [await one_run(user, agent, token, f"thread-{n}", f"r{n}") for n in range(30)]
        assert len(set(sids)) == 30
        assert await live(user) == 20 and await live(user, detached_at__isnull=True) == 0
        closed = await database_sync_to_async(lambda: set(A2UISessionLog.objects.filter(
            state="closed").values_list("session_id", flat=True)))()
        assert closed == set(sids[:10])
        again = await one_run(user, agent, token, "thread-29", "r29b")
        assert again == sids[-1]  # the thread's own session, resumed
        assert await database_sync_to_async(
            lambda: A2UISessionLog.objects.filter(state="rejected").count())() == 0


async def test_another_person_opens_sessions_while_one_floods(user, other_user, agent):
    """Agent limit 4, a person's share 2: the flooding person's third tab and run are
    refused with ``per: person``; the other person opens theirs; at the agent's limit a
    third person is refused with ``per: agent``, 429 on the run view."""
    await set_limit(agent, 4)
    mine = [await open_tab(user, agent) for _ in range(2)]
    assert all("result" in reply for _, reply in mine)
    _, refused = await open_tab(user, agent)
    assert refused["error"]["code"] == -32007
    assert refused["error"]["data"] == {"limit": 2, "per": "person"}
    assert "this person" in refused["error"]["message"]
    response = await sse.post(await sse.issue(user, agent), "flood", thread="flood")
    assert response.status_code == 429, response.content
    error = response.json()["error"]
    assert error["code"] == "max_sessions" and (error["limit"], error["per"]) == (2, "person")

    theirs = [await open_tab(other_user, agent) for _ in range(2)]
    assert all("result" in reply for _, reply in theirs)

    carol = await new_person("carol")
    _, full = await open_tab(carol, agent)
    assert full["error"]["data"] == {"limit": 4, "per": "agent"}
    assert "all in use" in full["error"]["message"]
    response = await sse.post(await sse.issue(carol, agent), "late", thread="late")
    assert response.status_code == 429
    assert response.json()["error"]["per"] == "agent"

    await mine[0][0].disconnect()  # a place is free again: the person's tab left
    _, reply = await open_tab(carol, agent)
    assert "result" in reply, reply


async def test_resuming_a_detached_session_claims_a_place_again(user, agent):
    """A detached session takes no place, so a resume (here: the thread's next run) is
    checked like a new session: refused while the person's share is used by an open tab."""
    from a2ui.sessions import admission

    await set_limit(agent, 2)  # a person's share: 1
    token = await sse.issue(user, agent)
    sid = await one_run(user, agent, token, "t", "r1")
    record = await database_sync_to_async(lambda: tokens.issue_stream_token(user, agent).record)()
    tab = await database_sync_to_async(admission.admit)(record, {"name": "tab"}, {})
    assert tab.session is not None  # the person's one place, attached
    response = await sse.post(token, "r2", thread="t")
    assert response.status_code == 429, response.content
    assert response.json()["error"]["per"] == "person"
    assert (await database_sync_to_async(A2UISessionLog.objects.get)(pk=sid)).detached_at
    await database_sync_to_async(A2UISessionLog.objects.filter(pk=tab.session.pk).update)(
        state="closed")
    assert await one_run(user, agent, token, "t", "r3") == sid  # its own session again
