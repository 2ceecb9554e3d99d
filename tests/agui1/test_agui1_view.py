"""POST /api/v4/agui/run in process: who may start a run (a stream_agui bearer token, or the
session cookie with its CSRF token; nothing else), refusals as HTTP 4xx with a JSON message
before any stream, and a cookie run's stream starting with RUN_STARTED."""

import json

import pytest
from asgiref.sync import async_to_sync
from django.test import Client

from a2ui import tokens
from a2ui.models import AgentRun, StreamToken

pytestmark = pytest.mark.django_db(transaction=True)
URL = "/api/v4/agui/run"


def body(**extra):
    return json.dumps({"threadId": "t1", "runId": "r1", "messages": [
        {"id": "m", "role": "user", "content": "hi"}], **extra})


def post(client, data=None, **headers):
    return client.post(URL, data if data is not None else body(),
                       content_type="application/json", **headers)


def first_chunks(response, n):
    """The first ``n`` chunks of an async streaming response, then the stream is closed."""
    async def read():
        out = []
        iterator = response.streaming_content.__aiter__()
        for _ in range(n):
            out.append(await iterator.__anext__())
        await iterator.aclose()
        return out
    return async_to_sync(read)()


def test_no_credential_or_the_wrong_one_is_401(user, agent, agent_key):
    client = Client()
    assert post(client).status_code == 401
    for raw in (tokens.issue_stream_token(user, agent).token,
                tokens.issue_stream_token(user, agent, "stream_mcp").token,
                agent_key, "x" * 600):
        response = post(client, HTTP_AUTHORIZATION=f"Bearer {raw}")
        assert response.status_code == 401, raw[:20]
        assert response.json()["error"]["code"] == "auth_failed"
    assert not AgentRun.objects.exists()


def test_cookie_without_csrf_is_403_with_it_a_run(user, agent):
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    refused = post(client)
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "csrf_failed"
    assert not AgentRun.objects.exists()
    client.get("/admin/login/")  # sets the CSRF cookie
    csrf = client.cookies["csrftoken"].value
    response = post(client, body(forwardedProps={"a2ui": {"agent": agent.name}}),
                    HTTP_X_CSRFTOKEN=csrf)
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/event-stream")
    started, snapshot = first_chunks(response, 2)
    # Every event has its id (docs/protocol-agui.md, "Resuming a run").
    assert started.startswith(b"id: 1\ndata: {") and b'"type":"RUN_STARTED"' in started
    assert snapshot.startswith(b"id: 2\ndata: {")
    assert b'"threadId":"t1"' in started and b'"STATE_SNAPSHOT"' in snapshot
    run = AgentRun.objects.get()
    assert run.run_id == "r1" and run.session.user == user and run.session.agent == agent
    assert run.session.client_info["agui_thread_id"] == "t1"
    assert run.status == AgentRun.Status.CANCELLED  # the client went away mid-run


def test_cookie_naming_an_unknown_agent_is_400(user, agent):
    client = Client()
    client.force_login(user)
    response = post(client, body(forwardedProps={"a2ui": {"agent": "nobody"}}))
    assert response.status_code == 400
    assert response.json()["error"]["field"] == "forwardedProps.a2ui.agent"


def test_method_and_body_refusals(user, agent):
    client = Client()
    token = tokens.issue_stream_token(user, agent, "stream_agui").token
    auth = {"HTTP_AUTHORIZATION": f"Bearer {token}"}
    assert client.get(URL, **auth).status_code == 405
    bad = post(client, '{"threadId": "t", "runId": "r", "messages": [], "state": '
                       '{"n": 123456789012345678901234567890}}', **auth)
    assert bad.status_code == 400 and bad.json()["error"]["field"] == "state.n"
    resume = post(client, body(resume=[{"interruptId": "q", "status": "resolved"}]), **auth)
    assert resume.status_code == 400
    assert resume.json()["error"]["field"] == "resume.0.interruptId"
    assert not AgentRun.objects.exists()


def test_consent_missing_is_403_before_the_run(settings, user, agent):
    settings.A2UI = {**getattr(settings, "A2UI", {}), "REQUIRED_CONSENTS": ["data_collection"]}
    client = Client()
    token = tokens.issue_stream_token(user, agent, "stream_agui").token
    response = post(client, HTTP_AUTHORIZATION=f"Bearer {token}")
    assert response.status_code == 403
    error = response.json()["error"]
    assert error["code"] == "consent_required"
    assert error["consent_types"][0]["type"] == "data_collection"
    assert not AgentRun.objects.exists()


def test_the_runs_user_messages_join_the_transcript_and_a_bad_one_starts_no_run(settings, user,
                                                                               agent):
    """A run's new user message is the session's transcript's too (every client shows it);
    one the transcript refuses (too long) is a 400 naming it, before any run or message."""
    from a2ui.models import SessionActivity

    client = Client()
    token = tokens.issue_stream_token(user, agent, "stream_agui").token
    auth = {"HTTP_AUTHORIZATION": f"Bearer {token}"}
    settings.A2UI = {**getattr(settings, "A2UI", {}), "ACTIVITY_MAX_MESSAGE_LENGTH": 10}
    long = post(client, json.dumps({"threadId": "t1", "runId": "r0", "messages": [
        {"id": "m", "role": "user", "content": "x" * 11}]}), **auth)
    assert long.status_code == 400, long.content
    assert long.json()["error"]["field"].startswith("messages.0")
    assert not AgentRun.objects.exists() and not SessionActivity.objects.exists()
    response = post(client, **auth)
    assert response.status_code == 200
    first_chunks(response, 1)
    transcript = SessionActivity.objects.get().transcript
    assert [(m["role"], m["sender"], m["content"]) for m in transcript] == [
        ("user", user.get_username(), "hi")]


def test_a_refused_run_stores_nothing(settings, user, agent):
    """Refusals come before any row: no session opened or resumed, no token issued for a
    cookie, no audit entry (a run's conflict and consent checks ran after the thread's session
    had been resumed or created, leaving a 'resumed' audit row or a new session behind)."""
    from a2ui.models import A2UISessionLog, AuditEvent

    def rows():
        return (list(A2UISessionLog.objects.values_list("pk", "state", "detached_at")),
                AuditEvent.objects.count(), StreamToken.objects.count(),
                list(AgentRun.objects.values_list("run_id", "status")))

    client = Client()
    token = tokens.issue_stream_token(user, agent, "stream_agui").token
    auth = {"HTTP_AUTHORIZATION": f"Bearer {token}"}
    first_chunks(post(client, **auth), 1)  # thread t1 has a session, detached, and run r1
    before = rows()
    again = post(client, **auth)  # the same runId on the same thread
    assert again.status_code == 409 and again.json()["error"]["field"] == "runId"
    assert rows() == before
    settings.A2UI = {**getattr(settings, "A2UI", {}), "REQUIRED_CONSENTS": ["data_collection"]}
    said = [{"id": "m", "role": "user", "content": "hi"},
            {"id": "m2", "role": "user", "content": "again"}]  # m2 is new to thread t1
    for thread in ("t1", "t-new"):
        refused = post(client, body(threadId=thread, runId="r2", messages=said), **auth)
        assert refused.status_code == 403
        assert rows() == before
    cookie = Client()
    cookie.force_login(user)
    refused = post(cookie, body(threadId="t-cookie", forwardedProps={"a2ui": {"agent": agent.name}}))
    assert refused.status_code == 403
    assert rows() == before
