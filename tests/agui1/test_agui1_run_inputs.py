"""POST /api/v4/agui/run in process: what a run adds, and concurrent first runs of a thread.

* A run's new messages are the trailing user and tool messages the session has not seen (by
  id), at most ``AGUI_MAX_NEW_MESSAGES`` of them, stored and fanned out as one batch: a body
  of 1,000 user messages is one transcript write and one session event, not 1,000 (issue 23,
  item 5).
* Concurrent first runs of a new ``threadId``: exactly one opens the session and streams,
  the others are 409 with a JSON body and leave nothing behind (item 6). Run on PostgreSQL for
  the real thing (``DATABASE_URL``); on SQLite the requests interleave on one connection.
"""

import asyncio
import json

import pytest
from asgiref.sync import sync_to_async
from django.test import AsyncClient, Client

from a2ui import tokens
from a2ui.core.events import Kind
from a2ui.models import A2UISessionLog, AgentRun, AuditEvent, SessionActivity, StreamToken
from a2ui.push import fanout as stream
from tests.agui1.test_agui1_view import URL, first_chunks, post

pytestmark = pytest.mark.django_db(transaction=True)


def said(*texts, prefix="m"):
    return [{"id": f"{prefix}{i}", "role": "user", "content": t} for i, t in enumerate(texts)]


def run_body(thread, run, messages, **extra):
    return json.dumps({"threadId": thread, "runId": run, "messages": messages, **extra})


@pytest.fixture
def bearer(user, agent):
    token = tokens.issue_stream_token(user, agent, "stream_agui").token
    return {"HTTP_AUTHORIZATION": f"Bearer {token}"}


@pytest.fixture
def emitted(monkeypatch):
    """The session events emitted, as (kind, data)."""
    out = []
    real = stream.emit

    async def emit(sid, kind, data):
        out.append((Kind(kind), data))
        return await real(sid, kind, data)

    monkeypatch.setattr(stream, "emit", emit)
    return out


def transcript():
    return [m["content"] for m in SessionActivity.objects.get().transcript]


def notice(run_id):
    return AgentRun.objects.get(run_id=run_id).notice


def test_many_new_messages_are_one_batch_of_the_last_ones(settings, bearer, emitted):
    settings.A2UI = {**getattr(settings, "A2UI", {}), "AGUI_MAX_NEW_MESSAGES": 5}
    client = Client()
    texts = [f"line {i}" for i in range(1000)]
    response = post(client, run_body("t", "r1", said(*texts)), **bearer)
    assert response.status_code == 200, response.content
    first_chunks(response, 1)
    assert transcript() == texts[-5:]
    assert [m["content"] for m in notice("r1")["messages"]] == texts[-5:]
    batches = [data for kind, data in emitted if kind in (Kind.MESSAGE, Kind.MESSAGE_BATCH)]
    assert [kind for kind, _ in emitted] == [Kind.MESSAGE_BATCH]  # one event, not 1,000
    assert [m["content"] for m in batches[0]["messages"]] == texts[-5:]
    audit = AuditEvent.objects.get(action="agui.run")
    assert audit.details["messages"] == 5 and audit.details["dropped"] == 995


def test_a_message_the_session_has_seen_is_not_new_again(bearer, emitted):
    """HttpAgent resends the whole history on every run (and a resume run the same one)."""
    client = Client()
    history = said("first")
    first_chunks(post(client, run_body("t", "r1", history), **bearer), 1)
    # The agent answered; the person retries the same history, then says something new.
    history.append({"id": "a0", "role": "assistant", "content": "Hello"})
    first_chunks(post(client, run_body("t", "r2", said("first")), **bearer), 1)
    history.append({"id": "n1", "role": "user", "content": "second"})
    history.append({"id": "n2", "role": "user", "content": "third"})
    first_chunks(post(client, run_body("t", "r3", history), **bearer), 1)
    assert notice("r2")["messages"] == []
    assert [m["content"] for m in notice("r3")["messages"]] == ["second", "third"]
    assert transcript() == ["first", "second", "third"]
    assert [kind for kind, _ in emitted] == [Kind.MESSAGE, Kind.MESSAGE_BATCH]


def test_a_repeated_id_in_one_body_is_one_message(bearer):
    client = Client()
    messages = said("a", "b") + said("a again", prefix="m")[:1]  # m0 twice
    first_chunks(post(client, run_body("t", "r1", messages), **bearer), 1)
    assert [m["id"] for m in notice("r1")["messages"]] == ["m0", "m1"]
    assert transcript() == ["a", "b"]


def test_an_over_long_message_id_is_400_before_anything(bearer):
    client = Client()
    messages = [{"id": "x" * 201, "role": "assistant", "content": "old"}, *said("hi")]
    response = post(client, run_body("t", "r1", messages), **bearer)
    assert response.status_code == 400
    assert response.json()["error"]["field"] == "messages.0.id"
    assert not A2UISessionLog.objects.exists() and not AgentRun.objects.exists()


def test_a_message_the_transcript_refuses_is_named_by_its_place_in_the_body(settings, bearer):
    settings.A2UI = {**getattr(settings, "A2UI", {}), "ACTIVITY_MAX_MESSAGE_LENGTH": 10}
    messages = [*said("ok"), {"id": "a", "role": "assistant", "content": "fine"},
                {"id": "n", "role": "user", "content": "x" * 11}]
    response = post(Client(), run_body("t", "r1", messages), **bearer)
    assert response.status_code == 400
    assert response.json()["error"]["field"] == "messages.2.content"
    assert not AgentRun.objects.exists()


async def _race(client, thread, headers, extra, n=5):
    responses = await asyncio.gather(*(
        client.post(URL, run_body(thread, f"r{i}", said("hi", prefix=f"{thread}-"), **extra),
                    content_type="application/json", headers=headers) for i in range(n)))
    for response in responses:
        if response.status_code == 200:
            stream_ = response.streaming_content.__aiter__()
            assert b'"RUN_STARTED"' in await stream_.__anext__()
            await stream_.aclose()
    return responses


def _audited(after_pk):
    return sorted(AuditEvent.objects.filter(pk__gt=after_pk, action__in=(
        "session.open", "session.resume", "agui.run")).values_list("action", flat=True))


def _last_audit_pk():
    return AuditEvent.objects.order_by("-pk").values_list("pk", flat=True).first() or 0


@pytest.mark.parametrize("credential", ["bearer", "cookie"])
async def test_concurrent_first_runs_of_a_new_thread_one_wins(user, agent, credential):
    client = AsyncClient()
    headers, extra = {}, {}
    if credential == "bearer":
        token = await sync_to_async(tokens.issue_stream_token)(
            user, agent, "stream_agui")
        headers = {"Authorization": f"Bearer {token.token}"}
    else:
        await client.aforce_login(user)
        extra = {"forwardedProps": {"a2ui": {"agent": agent.name}}}
    tokens_before = await StreamToken.objects.acount()
    for trial in range(4):
        thread = f"race-{trial}"
        mark = await sync_to_async(_last_audit_pk)()
        responses = await _race(client, thread, headers, extra)
        statuses = sorted(r.status_code for r in responses)
        assert statuses == [200, 409, 409, 409, 409], statuses
        for response in responses:
            if response.status_code == 409:
                error = response.json()["error"]
                assert error["field"] == "threadId" and error["reason"] == "conflict", error
        sessions = await A2UISessionLog.objects.filter(
            client_info__agui_thread_id=thread).acount()
        assert sessions == 1 and await AgentRun.objects.filter(thread_id=thread).acount() == 1
        # Nothing of the losers: one session opened, one run audited, one token issued.
        assert await sync_to_async(_audited)(mark) == ["agui.run", "session.open"]
        issued = await StreamToken.objects.acount() - tokens_before
        assert issued == (trial + 1 if credential == "cookie" else 0)
