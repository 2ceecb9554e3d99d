"""The agent's side of a run through the Python API (a2ui.agents): finish and error end the
run once (a conditional UPDATE), anything not running is refused with the seed's -32602, and
another agent's session is -32000."""

import pytest
from asgiref.sync import async_to_sync

from a2ui import agents, tokens
from a2ui.core.errors import DomainError
from a2ui.models import A2UISessionLog, AgentRun
from a2ui.rpc.errors import ProtocolError

pytestmark = pytest.mark.django_db(transaction=True)


def a_run(user, agent, run_id="r1"):
    token = tokens.issue_stream_token(user, agent).record
    session = A2UISessionLog.objects.create(user=user, agent=agent, token=token,
                                            state=A2UISessionLog.State.ACTIVE)
    AgentRun.objects.create(session=session, run_id=run_id, thread_id="t",
                            notice={"run_id": run_id, "messages": []})
    return session


def test_finish_and_error_end_a_run_once(user, agent):
    session = a_run(user, agent)
    sid = str(session.session_id)
    assert [r["run_id"] for r in agents.running_runs(agent)] == ["r1"]
    ended = agents.finish_run(agent, sid, "r1", {"ok": True})
    assert ended["ended"] is True and ended["seq"] >= 1
    run = AgentRun.objects.get()
    assert run.status == "finished" and run.outcome == {"result": {"ok": True}}
    assert agents.running_runs(agent) == []
    with pytest.raises(DomainError) as info:
        agents.error_run(agent, sid, "r1", "too late")
    assert ProtocolError.of(info.value).code == -32602 and info.value.data["path"] == "params.run_id"


def test_error_needs_a_message_and_the_agents_own_session(user, agent, other_user):
    from a2ui.tokens import create_agent

    session = a_run(user, agent)
    sid = str(session.session_id)
    with pytest.raises(DomainError) as info:
        agents.error_run(agent, sid, "r1", "")
    assert info.value.data["path"] == "params.message"
    other, _ = create_agent("other")
    with pytest.raises(DomainError) as info:
        async_to_sync(agents.aerror_run)(other, sid, "r1", "nope")
    assert ProtocolError.of(info.value).code == -32000
    assert AgentRun.objects.get().status == "running"
    agents.error_run(agent, sid, "r1", "failed", "E1")
    assert AgentRun.objects.get().outcome == {"message": "failed", "code": "E1"}


def test_rest_lists_running_runs_by_session(user, agent, agent_key):
    """``GET /api/v4/agui/runs[?session_id=]``: the agent's running runs, narrowed to one
    session; a session id that is not a UUID is a 400 that names the parameter."""
    from rest_framework.test import APIClient

    first, second = a_run(user, agent, "r1"), a_run(user, agent, "r2")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {agent_key}")
    assert {r["run_id"] for r in client.get("/api/v4/agui/runs").json()["runs"]} == {"r1", "r2"}
    for session, run_id in ((first, "r1"), (second, "r2")):
        listed = client.get(f"/api/v4/agui/runs?session_id={session.session_id}").json()
        assert [r["run_id"] for r in listed["runs"]] == [run_id]
    refused = client.get("/api/v4/agui/runs?session_id=x")
    assert refused.status_code == 400 and "session_id" in refused.json()


def test_the_end_of_a_run_is_checked_and_cleaned_before_it_is_stored(user, agent):
    """NUL reached PostgreSQL's jsonb in a result, message or code, and its text in a run_id
    (HTTP 500 / -32603, found by the fuzz tier): a run_id with NUL is refused, text in the
    result, message and code is cleaned (control and bidi characters), a result the JSON
    value policy refuses (too deep) is -32602 naming it; nothing is stored before."""
    session = a_run(user, agent)
    sid = str(session.session_id)
    with pytest.raises(DomainError) as info:
        agents.finish_run(agent, sid, "r\x001", {"ok": True})
    assert ProtocolError.of(info.value).code == -32602 and "NUL" in info.value.data["reason"]
    deep = {}
    for _ in range(40):
        deep = {"k": deep}
    with pytest.raises(DomainError) as info:
        agents.finish_run(agent, sid, "r1", {"a": deep})
    assert ProtocolError.of(info.value).code == -32602 and info.value.data["path"].startswith("params.result")
    assert AgentRun.objects.get().status == "running"
    agents.finish_run(agent, sid, "r1", {"text": "a\x00b\u202ec", "n": [1, "x\x01"]})
    assert AgentRun.objects.get().outcome == {"result": {"text": "abc", "n": [1, "x"]}}
    second = a_run(user, agent, "r2")
    agents.error_run(agent, str(second.session_id), "r2", "bad\x00 thing", "E\x001")
    assert AgentRun.objects.get(run_id="r2").outcome == {"message": "bad thing", "code": "E1"}
