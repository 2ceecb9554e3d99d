"""Hostile requests to the AG-UI REST endpoints, in-process: an agent's events
(``POST /sessions/<id>/agui``), the ends of a run (``runs/finish``, ``runs/error``), the agent's
listings (``GET /agui/runs``, ``GET /requests``), taking what waits (``POST /requests/take``)
and a person's AG-UI 1.0 run (``POST /api/v4/agui/run``, a ``stream_agui`` bearer token).

The same checks as tests/fuzz/test_fuzz_rest.py: below 500, a 4xx says why, nothing logged
at ERROR, a refused request changes no stored state, a valid request is served afterwards.
"""

import json
import uuid
from urllib.parse import quote

import pytest
from asgiref.sync import async_to_sync
from django.test import Client
from rest_framework.test import APIClient

from a2ui import tokens
from a2ui.models import A2UISessionLog, AgentRun
from a2ui.runs import records as runs
from tests.fuzz import harness, templates
from tests.fuzz.grammar import CONTROLS, SURROGATES, Frame
from tests.fuzz.seed import SEED, cases
from tests.fuzz.test_fuzz_rest import METHODS, _frames, agent_rest

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("fuzz_settings"),
]

RUN_ID = "run-1"
HOSTILE_QUERY = ["", "x", "%00", "%ED%A0%80", "00000000-0000-0000-0000-000000000000",
                 "9" * 5000, str(uuid.uuid4()), "%F0%9F%98%80", "a%0Ab"]


@pytest.fixture
def live_session(user, agent):
    return A2UISessionLog.objects.create(agent=agent, user=user, state="active",
                                         capabilities=templates.V09_CAPS)


def _running(session):
    """The session's run ``RUN_ID``, running again (a case may have ended it)."""
    AgentRun.objects.filter(session=session).delete()
    runs.start(session.session_id, RUN_ID, "thread-1",
               {"thread_id": "thread-1", "run_id": RUN_ID, "messages": []})


def test_agent_agui_runs_and_listings(fuzzer, error_log, agent_key, live_session, other_user,
                                      agent):
    failures, rest, client = agent_rest(error_log, agent_key)
    sid = str(live_session.session_id)
    foreign = A2UISessionLog.objects.create(agent=agent, user=other_user, state="closed")
    agui_path = f"/api/v4/sessions/{sid}/agui"
    for i, event in enumerate(templates.agui_agent_events()):
        for frame in _frames(fuzzer, {"event": event}, 8, f"agui:{event['type']}", fixed=i < 3):
            rest.case(client, "POST", agui_path, frame)
    # The ends of a run: each case meets a running run.
    finish, error = ({k: v for k, v in m["params"].items() if k != "session_id"}
                     for m in templates.run_messages(sid, RUN_ID))
    for name, body in (("finish", finish), ("error", error)):
        path = f"/api/v4/sessions/{sid}/runs/{name}"
        for frame in _frames(fuzzer, body, 30, f"runs/{name}"):
            _running(live_session)
            rest.baseline = None
            rest.case(client, "POST", path, frame)
    # The listings: hostile ?session_id= and methods.
    for path in ("/api/v4/agui/runs", "/api/v4/requests"):
        for raw in HOSTILE_QUERY + [fuzzer.choice(SURROGATES + CONTROLS) for _ in range(cases(4))]:
            # What a real client sends: the value's UTF-8 bytes, percent-encoded.
            query = quote(raw, safe="%", errors="surrogatepass")
            rest.case(client, "GET", f"{path}?session_id={query}", None)
        for method in METHODS[1:]:
            rest.case(client, method, path, None)
    # Taking what waits (POST /requests/take): hostile bodies and methods.
    take = "/api/v4/requests/take"
    for frame in _frames(fuzzer, {"session_id": sid}, 12, "requests/take"):
        rest.case(client, "POST", take, frame)
    for method in METHODS:
        rest.case(client, method, take, None)
    # Other sessions, methods and credentials.
    for other in (uuid.uuid4(), foreign.session_id):
        rest.case(client, "POST", f"/api/v4/sessions/{other}/agui",
                  Frame("valid", json.dumps({"event": templates.agui_agent_events()[0]})))
        rest.case(client, "POST", f"/api/v4/sessions/{other}/runs/finish",
                  Frame("valid", json.dumps(finish)))
    for path in (agui_path, f"/api/v4/sessions/{sid}/runs/finish",
                 f"/api/v4/sessions/{sid}/runs/error"):
        for method in METHODS:
            rest.case(client, method, path, None)
    for auth in ["", "Bearer", f"Bearer {agent_key}x", "Bearer a2ui_ak_\x00"]:
        anonymous = APIClient()
        anonymous.credentials(HTTP_AUTHORIZATION=auth)
        rest.case(anonymous, "POST", agui_path,
                  Frame("valid", json.dumps({"event": templates.agui_agent_events()[0]})))
        rest.case(anonymous, "GET", "/api/v4/agui/runs", None)
    # Still served afterwards.
    response = client.post(agui_path, {"event": templates.agui_agent_events()[0]}, format="json")
    assert response.status_code == 202, response.content
    _running(live_session)
    assert [r["run_id"] for r in client.get("/api/v4/agui/runs").json()["runs"]] == [RUN_ID]
    assert client.get(f"/api/v4/requests?session_id={sid}").status_code == 200
    assert client.post("/api/v4/requests/take", {"session_id": sid},
                       format="json").status_code == 200
    response = client.post(f"/api/v4/sessions/{sid}/runs/finish", finish, format="json")
    assert response.status_code == 200, response.content
    failures.check()


RUN_INPUT = {
    "threadId": "thread-1", "runId": "run-1",
    "messages": [{"id": "m1", "role": "user", "content": "Hello"},
                 {"id": "m2", "role": "assistant", "content": "Hi",
                  "toolCalls": [{"id": "tc1", "type": "function",
                                 "function": {"name": "lookup", "arguments": "{\"q\": 1}"}}]},
                 {"id": "m3", "role": "tool", "toolCallId": "tc1", "content": "42"}],
    "state": {"theme": "dark", "items": [1, 2]},
    "tools": [{"name": "lookup", "description": "Look up",
               "parameters": {"type": "object", "properties": {"q": {"type": "number"}}}}],
    "context": [{"description": "page", "value": "/invoices"}],
    "forwardedProps": {"a2ui": {"agent": "AGENT"}, "x": 1},
}


def _first_chunk(response, problems):
    """A 200 is an event stream: its first event, then the client goes away."""
    async def read():
        stream = response.streaming_content.__aiter__()
        try:
            chunk = await stream.__anext__()
        finally:
            await stream.aclose()
            inner = getattr(response, "_iterator", None)  # the view's own generator, ended
            if hasattr(inner, "aclose"):  # now as a server's disconnect ends it
                await inner.aclose()
        return chunk
    chunk = async_to_sync(read)()
    try:
        text = chunk.decode("utf-8")
    except UnicodeDecodeError:
        problems.append(f"SSE chunk not UTF-8: {chunk[:100]!r}")
        return
    if b'"RUN_STARTED"' not in chunk and b'"RUN_ERROR"' not in chunk:
        problems.append(f"the stream does not start with RUN_STARTED: {text[:200]!a}")


def _run_case(client, error_log, failures, frame, body, content_type, headers, accepted=None):
    """One ``POST /api/v4/agui/run``: a stream that starts with RUN_STARTED, or a 4xx with a
    JSON message that changed nothing; nothing logged. ``accepted()``: more problems of an
    accepted run."""
    problems = []
    mark = len(error_log.records)
    before = harness.snapshot_sync()
    try:
        response = client.generic("POST", "/api/v4/agui/run", body,
                                  content_type=content_type, **headers)
    except Exception as exc:  # noqa: BLE001 - the test client re-raises a view's crash
        problems.append(f"the view raised {type(exc).__name__}: {str(exc)[:200]}")
        response = None
    if response is not None:
        if response.status_code == 200 and response.streaming:
            _first_chunk(response, problems)
            if accepted is not None:
                problems += accepted()
        else:
            problems += _refusal(response)
            if not problems and harness.diff(before, harness.snapshot_sync()):
                problems.append(f"refused ({response.status_code}), yet changed: "
                                f"{harness.diff(before, harness.snapshot_sync())}")
    problems += [f"logged: {line}" for line in error_log.since(mark)]
    failures.add(frame or Frame("run", "(empty)"), problems)
    return response


def test_agui_run_input(fuzzer, error_log, user, agent):
    """``POST /api/v4/agui/run``: hostile RunAgentInput bodies, headers and credentials."""
    failures = harness.Failures(SEED)
    token = tokens.issue_stream_token(user, agent, "stream_agui").token
    client = Client()
    auth = {"HTTP_AUTHORIZATION": f"Bearer {token}", "HTTP_ACCEPT": "text/event-stream"}
    valid = json.loads(json.dumps(RUN_INPUT).replace("AGENT", agent.name))

    def case(frame, *, content_type="application/json", headers=auth, fresh=True):
        body = frame.as_bytes() if frame is not None else b""
        if fresh and frame is not None:
            # Every case its own thread and run, so that an accepted one is not a conflict.
            text = frame.as_bytes().replace(b"thread-1", uuid.uuid4().hex.encode())
            body = text.replace(b'"run-1"', json.dumps(uuid.uuid4().hex).encode())
        _run_case(client, error_log, failures, frame, body, content_type, headers)

    for frame in _frames(fuzzer, valid, 150, "agui/run"):
        case(frame)
    for content_type in ("text/plain", "application/x-www-form-urlencoded",
                         "application/json; charset=latin-1", "multipart/form-data; boundary=x"):
        case(Frame("ctype", json.dumps(valid)), content_type=content_type)
    for raw in ("", "x", "\x00", token + "x", "a" * 5000):
        case(Frame("auth", json.dumps(valid)),
             headers={"HTTP_AUTHORIZATION": f"Bearer {raw}"})
    # The same run twice: the second is refused (a conflict), not a crash.
    same = Frame("again", json.dumps({**valid, "threadId": "t-same", "runId": "r-same"}))
    case(same, fresh=False)
    case(same, fresh=False)
    failures.check()
    response = client.post("/api/v4/agui/run", json.dumps(valid),
                           content_type="application/json", **auth)
    assert response.status_code == 200
    _first_chunk(response, problems := [])
    assert not problems, problems


def _refusal(response):
    status = response.status_code
    body = response.content
    if status >= 500:
        return [f"HTTP {status}: {body[:200]!r}"]
    if status < 400:
        return [f"HTTP {status} that is not a stream: {body[:200]!r}"]
    try:
        error = json.loads(body.decode("utf-8"))["error"]
        assert isinstance(error["message"], str) and error["message"]
    except (UnicodeDecodeError, ValueError, KeyError, TypeError, AssertionError):
        return [f"HTTP {status} without an error message: {body[:200]!r}"]
    return []


HOSTILE_IDS = ["", " ", "m", "x" * 200, "x" * 201, "x" * 70_000, "\u202e", "a\x00b", "\ud800",
               "__proto__", "0", "m" * 199 + "\ud83d\ude00"]


def _history(fuzzer, limit):
    """A hostile message history: many messages, few or hostile or repeated ids, any roles,
    deep or odd content."""
    rng = fuzzer.rng
    n = rng.choice([0, 1, limit, limit + 1, 200, 999, 1000, 1001, rng.randrange(1, 1200)])
    mode = rng.randrange(4)
    messages = []
    for i in range(n):
        role = rng.choice(["user"] * 6 + ["tool", "assistant", "system", "developer"])
        if mode == 0:
            mid = f"m{i}"
        elif mode == 1:  # a few ids, repeated
            mid = f"m{rng.randrange(5)}"
        elif mode == 2:
            mid = fuzzer.choice(HOSTILE_IDS) if rng.random() < 0.1 else f"m{i}"
        else:
            mid = fuzzer.leaf() if rng.random() < 0.05 else uuid.uuid4().hex
        content = "hi"
        if rng.random() < 0.02:
            content = fuzzer.leaf()
        elif rng.random() < 0.01:
            content = [{"type": "text", "text": fuzzer.nested(rng.randint(20, 200))}]
        message = {"id": mid, "role": role, "content": content}
        if role == "tool":
            message["toolCallId"] = "tc1"
        messages.append(message)
    return messages


def test_agui_run_histories(fuzzer, error_log, user, agent, monkeypatch):
    """Hostile message histories: an accepted run adds at most ``AGUI_MAX_NEW_MESSAGES`` to
    the transcript and the agent's notice, as at most one session event (issue 23, item 5);
    a refusal is a 4xx with a message; bodies over the limit are 413."""
    from a2ui.conf import a2ui_settings
    from a2ui.core.events import Kind
    from a2ui.models import SessionActivity
    from a2ui.push import fanout as stream

    failures = harness.Failures(SEED)
    token = tokens.issue_stream_token(user, agent, "stream_agui").token
    client = Client()
    auth = {"HTTP_AUTHORIZATION": f"Bearer {token}", "HTTP_ACCEPT": "text/event-stream"}
    limit = a2ui_settings.AGUI_MAX_NEW_MESSAGES
    emitted = []
    real = stream.emit

    async def emit(sid, kind, data):
        emitted.append(Kind(kind))
        return await real(sid, kind, data)

    monkeypatch.setattr(stream, "emit", emit)

    def accepted(thread, run_id):
        def check():
            problems = []
            said = [k for k in emitted if k in (Kind.MESSAGE, Kind.MESSAGE_BATCH)]
            if len(said) > 1:
                problems.append(f"{len(said)} message events for one run")
            run = AgentRun.objects.filter(thread_id=thread, run_id=run_id).first()
            if run is None:
                return [*problems, "accepted, yet no run row"]
            if len(run.notice["messages"]) > limit:
                problems.append(f"{len(run.notice['messages'])} new messages told the agent")
            row = SessionActivity.objects.filter(session_id=run.session_id).first()
            if row is not None and len(row.transcript) > limit:
                problems.append(f"{len(row.transcript)} transcript entries after one run")
            return problems
        return check

    for i in range(cases(40)):
        thread, run_id = f"h-{uuid.uuid4().hex}", f"r-{i}"
        body = {"threadId": thread, "runId": run_id, "messages": _history(fuzzer, limit),
                "state": {}, "tools": [], "context": []}
        if fuzzer.rng.random() < 0.1:
            body["state"] = {"deep": fuzzer.nested(fuzzer.rng.randint(10, 300))}
        text = json.dumps(body)
        emitted.clear()
        _run_case(client, error_log, failures, Frame("history", text), text.encode(
            "utf-8", "surrogatepass"), "application/json", auth, accepted(thread, run_id))
    # Over the limit: many messages, one huge message, a huge id.
    big = a2ui_settings.MAX_PAYLOAD_SIZE
    for label, messages in (
            ("many", [{"id": f"m{i}", "role": "user", "content": "x" * 2000}
                      for i in range(big // 2000 + 2)]),
            ("one", [{"id": "m", "role": "user", "content": "x" * big}]),
            ("id", [{"id": "x" * big, "role": "user", "content": "hi"}])):
        text = json.dumps({"threadId": f"o-{label}", "runId": "r", "messages": messages})
        response = _run_case(client, error_log, failures, Frame(f"oversized:{label}", text[:300]),
                             text.encode(), "application/json", auth)
        if response is not None and response.status_code != 413:
            failures.add(Frame(f"oversized:{label}", text[:300]),
                         [f"HTTP {response.status_code}, not 413"])
    failures.check()


async def test_agui_thread_races(fuzzer, user, agent):
    """Concurrent first runs of one new thread (hostile thread ids, 2 to 6 runs, some resending
    the same message ids): exactly one streams, the others are 409, one session, one run
    (issue 23, item 6). On PostgreSQL (``DATABASE_URL``) the requests really race."""
    import asyncio

    from asgiref.sync import sync_to_async
    from django.test import AsyncClient

    failures = harness.Failures(SEED)
    token = await sync_to_async(tokens.issue_stream_token)(
        user, agent, "stream_agui")
    client = AsyncClient()
    headers = {"Authorization": f"Bearer {token.token}"}
    threads = ["t", "\u202e", "x" * 200, str(uuid.uuid4()), "thread 1", "\U0001f600", "0"]
    for i in range(cases(8)):
        rng = fuzzer.rng
        thread = f"{fuzzer.choice(threads)}"[:190] + f"-{i}"
        n = rng.randint(2, 6)
        bodies = [json.dumps({"threadId": thread, "runId": f"r{j}", "messages": [
            {"id": f"m{j if rng.random() < 0.5 else 0}", "role": "user", "content": "hi"}]})
            for j in range(n)]
        responses = await asyncio.gather(*(
            client.post("/api/v4/agui/run", body, content_type="application/json",
                        headers=headers) for body in bodies))
        statuses = sorted(r.status_code for r in responses)
        problems = []
        if statuses != [200] + [409] * (n - 1):
            problems.append(f"statuses {statuses}")
        for response in responses:
            if response.status_code == 200:
                await sync_to_async(_first_chunk)(response, problems)
            else:
                problems += _refusal(response)
        sessions = await A2UISessionLog.objects.filter(
            client_info__agui_thread_id=thread).acount()
        run_rows = await AgentRun.objects.filter(thread_id=thread).acount()
        if (sessions, run_rows) != (1, 1):
            problems.append(f"{sessions} sessions and {run_rows} runs for the thread")
        failures.add(Frame("race", thread), problems)
    failures.check()


HOSTILE_LAST_IDS = ["", " ", "x", "-1", "+1", "1.0", "1e3", "0x10", "١", "1 2", "9" * 19,
                    "9" * 5000, "\u202e1", "\t3\t", "0", "00000000000000000002", "18"]


async def test_agui_run_resume(fuzzer, error_log, settings, user, agent):
    """Coming back to a run (``Last-Event-ID``, docs/protocol-agui.md "Resuming a run"):

    * hostile ``Last-Event-ID`` values and bodies: a 4xx with a message that changes nothing,
      or a stream that is the run's events after that id (numbered without a gap, each once,
      ending with the run's final event), nothing at all (the client has the final event), or
      one RUN_ERROR ``RESUME_UNAVAILABLE`` (an id beyond the run's log); never a new run;
    * runs cut at random points, while the agent goes on, come back (once or twice, from the
      last id received or an earlier one): the ids after the id named follow each other,
      nothing is skipped or repeated, and the run as the client put it together passes
      ag-ui-validate."""
    from ag_ui_validate.pytest_plugin import validate_agui
    from asgiref.sync import sync_to_async
    from django.test import AsyncClient

    from a2ui import agents
    from tests.agui1.sse import Run

    settings.A2UI = {**settings.A2UI, "CAP_RUNS_PER_PERSON": 10**4}
    failures = harness.Failures(SEED)
    token = (await sync_to_async(tokens.issue_stream_token)(
        user, agent, "stream_agui")).token
    client = AsyncClient()
    auth = {"Authorization": f"Bearer {token}"}

    async def post(body, last=None, raw=None):
        headers = dict(auth) if last is None else {**auth, "Last-Event-ID": last}
        return await client.post("/api/v4/agui/run", raw if raw is not None else json.dumps(body),
                                 content_type="application/json", headers=headers)

    async def sid_of(run_id):
        return str((await AgentRun.objects.aget(run_id=run_id)).session_id)

    async def push(sid, i):
        kind = fuzzer.rng.randrange(3)
        if kind == 0:
            await agents.anotify(agent, sid, f"n{i}")
        elif kind == 1:
            await agents.aprogress(agent, sid, f"t{i % 2}", value=i % 3, total=2)
        else:
            await agents.arender(agent, sid, "card", {"title": f"c{i}"}, component_id=f"c{i % 2}")

    async def stream_problems(response, after, newest):
        """What is wrong with a 200 answer to a client back after event ``after``."""
        run = Run(response)
        try:
            events = await run.rest(timeout=5)
        except TimeoutError:
            return [f"after {after}: the stream did not end"]
        if after > newest:
            if [(e["type"], e.get("code")) for e in events] != [("RUN_ERROR",
                                                                  "RESUME_UNAVAILABLE")]:
                return [f"after {after} > {newest}: {events}"]
            return []
        if run.ids != list(range(after + 1, newest + 1)):
            return [f"after {after}: ids {run.ids}, not {after + 1}..{newest}"]
        if newest > after and events[-1]["type"] != "RUN_FINISHED":
            return [f"after {after}: ends with {events[-1]['type']}"]
        return []

    # A run that ended: its log is kept, every answer ends at once.
    thread = f"resume-{uuid.uuid4().hex[:8]}"
    first = Run(await post({"threadId": thread, "runId": "r1", "messages": [
        {"id": "m1", "role": "user", "content": "hi"}]}))
    seen = [await first.next(), await first.next()]
    sid = await sid_of("r1")
    for i in range(4):
        await push(sid, i)
    await agents.afinish_run(agent, sid, "r1", {"ok": True})
    seen += await first.rest()
    newest = first.ids[-1]
    valid = {"threadId": thread, "runId": "r1", "messages": []}
    ids = HOSTILE_LAST_IDS + [str(fuzzer.rng.randrange(0, newest + 3)) for _ in range(cases(8))]
    leaves = [fuzzer.leaf() for _ in range(cases(12))]
    for raw in ids + [leaf for leaf in leaves if isinstance(leaf, str)]:
        frame = Frame("last-event-id", repr(raw)[:200])
        mark, before = len(error_log.records), await sync_to_async(harness.snapshot_sync)()
        runs_before = await AgentRun.objects.acount()
        try:
            response = await post(valid, raw)
        except ValueError:  # the test client itself refuses a header it cannot send
            continue
        problems = []
        if response.status_code == 200:
            problems += await stream_problems(response, int(raw.strip()), newest)
        else:
            problems += _refusal(response)
            if not problems and harness.diff(before, await sync_to_async(
                    harness.snapshot_sync)()):
                problems.append(f"refused ({response.status_code}), yet changed")
        if await AgentRun.objects.acount() != runs_before:
            problems.append("coming back started a run")
        problems += [f"logged: {line}" for line in error_log.since(mark)]
        failures.add(frame, problems)
    for frame in _frames(fuzzer, valid, 30, "agui/run resume"):
        mark = len(error_log.records)
        runs_before = await AgentRun.objects.acount()
        response = await post(None, "3", raw=frame.as_bytes())
        problems = []
        if response.status_code == 200:
            problems += await stream_problems(response, 3, newest)
        else:
            problems += _refusal(response)
        if await AgentRun.objects.acount() != runs_before:
            problems.append("coming back started a run")
        problems += [f"logged: {line}" for line in error_log.since(mark)]
        failures.add(frame, problems)

    # Runs cut at random points while the agent goes on.
    for case in range(cases(6)):
        rng = fuzzer.rng
        thread, run_id = f"cut-{uuid.uuid4().hex[:8]}", f"r-{case}"
        run = Run(await post({"threadId": thread, "runId": run_id, "messages": [
            {"id": f"m{case}", "role": "user", "content": "hi"}]}))
        got = {}  # id -> event, as the client put it together
        sid = None
        problems = []
        pushed = 0
        for cut in range(rng.choice([1, 1, 2])):
            for _ in range(rng.randrange(0, 4) if cut or sid else 2):
                try:  # what is there to read (after a cut: maybe less than asked)
                    event = await run.next(timeout=0.5 if cut else 3)
                except TimeoutError:
                    break
                got[run.ids[-1]] = event
            if sid is None:
                sid = await sid_of(run_id)
            await run.close()  # the stream breaks off
            for _ in range(rng.randrange(0, 4)):
                await push(sid, pushed)
                pushed += 1
            last = max(got) if got else 0
            after = last if rng.random() < 0.7 else rng.randrange(0, last + 1)
            run = Run(await post({"threadId": thread, "runId": run_id, "messages": []},
                                 str(after)))
            for _ in range(rng.randrange(0, 3)):
                await push(sid, pushed)
                pushed += 1
            for number in range(after + 1, last + 1):  # what it had again: the same
                event = await run.next()
                if run.ids[-1] != number or event != got[number]:
                    problems.append(f"event {number} again: {run.ids[-1]} {event}")
                    break
        await agents.afinish_run(agent, sid, run_id)
        rest = await run.rest(timeout=5)
        for number, event in zip(run.ids[len(run.ids) - len(rest):], rest, strict=True):
            if number in got and got[number] != event:
                problems.append(f"event {number} again, not the same: {event}")
            got[number] = event
        numbers = sorted(got)
        if numbers != list(range(1, len(numbers) + 1)):
            problems.append(f"ids {numbers}")
        events = [got[n] for n in numbers]
        if events[-1]["type"] != "RUN_FINISHED":
            problems.append(f"ends with {events[-1]}")
        report = validate_agui(events, features=["agentic-chat", "agentic-generative-ui"])
        problems += [f"{d.rule}: {d.message}" for d in report.diagnostics
                     if d.severity in ("error", "warning")]
        failures.add(Frame("cut", f"{thread} after {pushed} pushes"), problems)
    failures.check()
