"""Hostile requests to every REST endpoint of a2ui/api/urls.py, in-process.

Each answer is below 500; a 4xx says why (a JSON message); nothing is logged at ERROR; a
refused request changes no stored state; the endpoint still serves a valid request afterwards.
"""

import json
import uuid
from urllib.parse import quote

import pytest
from django.test import AsyncClient
from rest_framework.test import APIClient

from a2ui import tokens
from a2ui.models import A2UIConsentRecord, A2UISessionLog
from tests.fuzz import harness, templates
from tests.fuzz.grammar import CONTROLS, SURROGATES, URLS, Frame, emit, fixed_frames
from tests.fuzz.seed import SEED, cases

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("fuzz_settings"),
]

METHODS = ["GET", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD"]
CONTENT_TYPES = ["application/json", "application/json; charset=utf-8", "text/plain",
                 "application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
                 "application/json; charset=latin-1", "application/json; charset=bogus"]


def _message_of(response):
    """The 4xx body's message: DRF's detail, our error object, or field errors."""
    try:
        body = json.loads(response.content.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return response.content.decode("utf-8", "replace").strip() or None
    return body if body else None


def _check(response, problems):
    status = response.status_code
    if status >= 500:
        problems.append(f"HTTP {status}: {response.content[:200]!r}")
    elif status >= 400 and response.request.get("REQUEST_METHOD") != "HEAD":
        if not _message_of(response):
            problems.append(f"HTTP {status} without a message: {response.content[:200]!r}")
    try:
        response.content.decode("utf-8")
    except UnicodeDecodeError:
        problems.append("the answer is not UTF-8")
    return 400 <= status < 500


class Rest:
    def __init__(self, error_log, failures):
        self.error_log, self.failures = error_log, failures
        self.baseline = None  # stored state after the previous request

    def case(self, client, method, path, frame, *, content_type="application/json", **extra):
        problems = []
        mark = len(self.error_log.records)
        before = self.baseline if self.baseline is not None else harness.snapshot_sync()
        try:
            response = client.generic(method, path, frame.as_bytes() if frame else b"",
                                      content_type=content_type, **extra)
        except Exception as exc:  # noqa: BLE001 - the test client re-raises a view's crash
            problems.append(f"the view raised {type(exc).__name__}: {str(exc)[:200]}")
            response = None
        self.baseline = after = harness.snapshot_sync()
        problems += [f"stored what no client can draw: {x}" for x in harness.undrawable(after)]
        if response is not None and _check(response, problems):
            changed = harness.diff(before, after)
            if changed:
                problems.append(f"refused ({response.status_code}), yet changed: {changed}")
        problems += [f"logged: {line}" for line in self.error_log.since(mark)]
        self.failures.add(frame or Frame(f"{method} {path}", ""), problems)
        return response


def _frames(fuzzer, valid, n, label, fixed=True):
    frames = fixed_frames(valid, label) if fixed else []
    frames += [fuzzer.frame(valid, label, jsonrpc=False, oversized_ok=fuzzer.rng.random() < 0.03)
               for _ in range(cases(n))]
    return frames


@pytest.fixture
def live_session(user, agent):
    return A2UISessionLog.objects.create(agent=agent, user=user, state="active",
                                         capabilities=templates.V09_CAPS)


def agent_rest(error_log, agent_key):
    """(failures, Rest, an APIClient with the agent's key) of one agent-side test."""
    failures = harness.Failures(SEED)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {agent_key}")
    return failures, Rest(error_log, failures), client


def test_agent_endpoints(fuzzer, error_log, agent_key, live_session, other_user, agent):
    failures, rest, client = agent_rest(error_log, agent_key)
    sid = str(live_session.session_id)
    foreign = A2UISessionLog.objects.create(agent=agent, user=other_user, state="closed")
    messages_path = f"/api/v4/sessions/{sid}/messages"
    surfaces_path = f"/api/v4/sessions/{sid}/surfaces"
    notifications = [{k: v for k, v in m.items() if k != "id"}
                     for m in templates.agent_messages(sid)
                     if m["method"] not in ("ui.request_input", "ui.confirm", "a2ui.sessions",
                                            "a2ui.v09")]
    for note in notifications:
        note["params"].pop("session_id")
    known = [m for m in templates.known_agent_killers(sid) if m["method"] != "a2ui.v09"]
    for message in known:
        note = {k: v for k, v in message.items() if k != "id"}
        note["params"] = {k: v for k, v in note["params"].items() if k != "session_id"}
        rest.case(client, "POST", messages_path, Frame("messages:known", emit(note)))
    batch = templates.surface_batch("k")
    batch[2]["updateDataModel"]["value"] = {"n": 10**30}
    rest.case(client, "POST", surfaces_path, Frame("surfaces:known", emit(batch)))
    for i, note in enumerate(notifications):
        for frame in _frames(fuzzer, note, 12, f"messages:{note['method']}", fixed=i == 0):
            rest.case(client, "POST", messages_path, frame)
    for frame in _frames(fuzzer, notifications[:3], 30, "messages:list", fixed=False):
        rest.case(client, "POST", messages_path, frame)
    for frame in _frames(fuzzer, templates.surface_batch("s1"), 100, "surfaces"):
        rest.case(client, "POST", surfaces_path, frame)
    # Echoed surrogates must render in the browsable API too.
    for frame in fixed_frames(notifications[0], "html")[:3]:
        rest.case(client, "POST", messages_path, frame, HTTP_ACCEPT="text/html")
    # Other session ids, methods, content types and credentials.
    valid = Frame("valid", json.dumps(notifications[-1]))
    for other in (uuid.uuid4(), foreign.session_id):
        rest.case(client, "POST", f"/api/v4/sessions/{other}/messages", valid)
        rest.case(client, "POST", f"/api/v4/sessions/{other}/surfaces",
                  Frame("valid", json.dumps(templates.surface_batch("o"))))
    for path in (messages_path, surfaces_path, f"/api/v4/sessions/{sid[:-1]}x/messages",
                 f"/api/v4/sessions/{sid}%00/surfaces", "/api/v4/sessions/%ED%A0%80/messages"):
        for method in METHODS:
            rest.case(client, method, path, None)
    for content_type in CONTENT_TYPES:
        rest.case(client, "POST", messages_path, valid, content_type=content_type)
    for auth in ["", "Bearer", "Bearer a2ui_ak_", f"Bearer {agent_key}x", "Basic Zm9vOmJhcg==",
                 f"bearer  {agent_key}", "Token abc", "Bearer a2ui_ak_\x00", "Bearer \xff"]:
        anonymous = APIClient()
        anonymous.credentials(HTTP_AUTHORIZATION=auth)
        rest.case(anonymous, "POST", messages_path, valid)
    # Still served afterwards.
    response = client.post(messages_path, notifications[-1], format="json")
    assert response.status_code == 202, response.content
    response = client.post(surfaces_path, templates.surface_batch("after"), format="json")
    assert response.status_code == 202, response.content
    failures.check()


def test_person_endpoints(fuzzer, error_log, user, agent, live_session):
    failures = harness.Failures(SEED)
    rest = Rest(error_log, failures)
    client = APIClient()
    client.force_authenticate(user)
    record = A2UIConsentRecord.objects.create(user=user, consent_type="data_collection",
                                              granted=True)
    token_body = {"token_type": "stream_a2ui", "agent_id": agent.name}
    for frame in _frames(fuzzer, token_body, 80, "stream-token"):
        rest.case(client, "POST", "/api/v4/stream-token", frame)
    for frame in _frames(fuzzer, {"consent_type": "ui_interaction"}, 40, "consents/revoke"):
        rest.case(client, "POST", "/api/v4/consents/revoke", frame)
    for pk in ("0", "-1", str(2**64), "99999999999999999999999", "1e3", "%ED%A0%80",
               "%00", str(record.pk + 1000)):
        rest.case(client, "POST", f"/api/v4/consents/{pk}/revoke", None)
    for method in METHODS:
        for path in ("/api/v4/stream-token", "/api/v4/consents", "/api/v4/consents/revoke",
                     f"/api/v4/consents/{record.pk}/revoke"):
            rest.case(client, method, path, None)
    for query in ["?page=%ED%A0%80", "?x=\x00", "?format=api", "?format=%ff", "?limit=" + "9" * 5000]:
        rest.case(client, "GET", "/api/v4/consents" + query, None)
    rest.case(client, "GET", "/a2ui/?x=%ED%A0%80&y=%00", None)
    # Still served afterwards.
    assert client.get("/api/v4/consents").status_code == 200
    response = client.post(f"/api/v4/consents/{record.pk}/revoke")
    assert response.status_code == 200, response.content
    assert client.post("/api/v4/stream-token", token_body, format="json").status_code == 201
    failures.check()


async def test_surface_stream(fuzzer, error_log, user, agent, agent_key, live_session,
                              other_user):
    """GET /api/v4/sessions/<id>/surfaces/stream (SSE): hostile tokens, ids and headers."""
    failures = harness.Failures(SEED)
    token = (await _issue(user, agent)).token
    sid = str(live_session.session_id)
    client = AsyncClient()
    hostile_tokens = [None, "", "x", "\x00", "%ED%A0%80", token + "x", agent_key, "a" * 5000,
                      (await _issue(other_user, agent)).token,
                      *[fuzzer.choice(SURROGATES + CONTROLS + URLS) for _ in range(cases(8))]]
    cases_ = [(sid, t, {}) for t in hostile_tokens]
    cases_ += [(s, token, {}) for s in (str(uuid.uuid4()), "00000000-0000-0000-0000-000000000000")]
    cases_ += [(sid, token, {"HTTP_LAST_EVENT_ID": v}) for v in
               ("-1", "1e400", "9" * 5000, "\x00", "NaN", str(2**64), "0x10", " 1 ")]
    cases_ += [(sid, token, {"QUERY_STRING": f"token={token}&lastEventId=%ED%A0%80"})]
    for session, raw, extra in cases_:
        path = f"/api/v4/sessions/{session}/surfaces/stream"
        if raw is not None and "QUERY_STRING" not in extra:
            # What a real client sends: the token's UTF-8 bytes, percent-encoded.
            path += "?token=" + quote(raw, safe="%", errors="surrogatepass")
        frame = Frame("sse", f"{path:.120} {extra!r:.80}")
        problems = []
        mark = len(error_log.records)
        before = await harness.snapshot()
        try:
            response = await client.get(path, **extra)
            if response.status_code == 200:
                await _first_events(response, problems)
            elif _check(response, problems):
                changed = harness.diff(before, await harness.snapshot())
                if changed:
                    problems.append(f"refused, yet changed: {changed}")
        except Exception as exc:  # noqa: BLE001
            problems.append(f"the view raised {type(exc).__name__}: {str(exc)[:200]}")
        problems += [f"logged: {line}" for line in error_log.since(mark)]
        failures.add(frame, problems)
    for method in ("post", "put", "delete"):
        response = await getattr(client, method)(f"/api/v4/sessions/{sid}/surfaces/stream")
        _check(response, problems := [])
        failures.add(Frame("sse", method), problems)
    failures.check()


async def _issue(user, agent):
    from channels.db import database_sync_to_async

    return await database_sync_to_async(tokens.issue_stream_token)(user, agent)


async def _first_events(response, problems):
    """Read the first events of a 200 stream (retry, reset, snapshot) and hang up."""
    stream = response.streaming_content
    try:
        for _ in range(2):
            chunk = await anext(stream)
            try:
                chunk.decode("utf-8")
            except UnicodeDecodeError:
                problems.append(f"SSE chunk not UTF-8: {chunk[:100]!r}")
    finally:
        await stream.aclose()
        # Closing Django's wrapper leaves the view's own generator suspended until the garbage
        # collector finalizes it, anywhere; a server ends it at once (ASGI cancels the
        # response on disconnect), which is what the view's clean-up is written for.
        inner = getattr(response, "_iterator", None)
        if hasattr(inner, "aclose"):
            await inner.aclose()
