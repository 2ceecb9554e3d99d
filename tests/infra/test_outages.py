"""While Redis or PostgreSQL is unreachable: one log line per failure and a periodic summary
(``a2ui.infra.outages``), never a traceback per push; HTTP answers a JSON 503, sockets their
protocol's error (issue 23, items 7 and 12)."""

import json
import logging
import time

import pytest
import redis.exceptions
from django.db import OperationalError
from django.test import Client

from a2ui.infra import outages, shared
from tests.wsutil import connect_agent, connect_user, init_session, recv, send

pytestmark = pytest.mark.django_db(transaction=True)

REDIS_DOWN = redis.exceptions.ConnectionError("Error 111 connecting to 127.0.0.1:6379. "
                                              "Connection refused.")
DB_DOWN = OperationalError("connection failed: Connection refused\n\tIs the server running?")


@pytest.fixture(autouse=True)
def fresh_outages():
    outages.reset()
    yield
    outages.reset()


def _records(caplog, name="a2ui"):
    return [r for r in caplog.records if r.name.startswith(name)]


# The helper -----------------------------------------------------------------------------------


def test_causes():
    assert outages.cause(REDIS_DOWN) == outages.REDIS
    assert outages.cause(ConnectionError("Redis connection lost")) == outages.REDIS  # redisline
    assert outages.cause(DB_DOWN) == outages.DATABASE
    import psycopg
    from psycopg_pool import PoolTimeout

    assert outages.cause(psycopg.OperationalError("x")) == outages.DATABASE
    assert outages.cause(PoolTimeout("couldn't get a connection")) == outages.DATABASE
    try:
        try:
            raise REDIS_DOWN
        except redis.exceptions.ConnectionError as exc:
            raise RuntimeError("wrapped") from exc
    except RuntimeError as exc:
        assert outages.cause(exc) == outages.REDIS
    for fault in (ValueError("a bug"), KeyError("k"), redis.exceptions.ResponseError("WRONGTYPE")):
        assert outages.cause(fault) is None


def _wrapped(driver_error):
    """A driver's error as Django raises it (its own class, the driver's as the cause)."""
    from django.db import utils

    wrapper = next(getattr(utils, klass.__name__) for klass in type(driver_error).__mro__
                   if hasattr(utils, klass.__name__))
    try:
        try:
            raise driver_error
        except Exception as exc:
            raise wrapper(*exc.args) from exc
    except Exception as exc:
        return exc


def test_only_a_lost_or_refused_database_is_an_outage():
    """A deadlock, a cancelled statement or SQLite's lock is no outage: an ERROR as before."""
    import sqlite3

    from psycopg import errors

    for lost in (errors.AdminShutdown("terminating connection due to administrator command"),
                 errors.CannotConnectNow("the database system is starting up"),
                 errors.TooManyConnections("too many clients already")):
        assert outages.cause(lost) == outages.DATABASE, lost
        assert outages.cause(_wrapped(lost)) == outages.DATABASE, lost
    for fault in (errors.DeadlockDetected("deadlock detected"),
                  errors.QueryCanceled("canceling statement due to statement timeout"),
                  errors.SerializationFailure("could not serialize access"),
                  errors.UniqueViolation("duplicate key"),
                  sqlite3.OperationalError("database is locked")):
        assert outages.cause(_wrapped(fault)) is None, fault


def test_one_line_per_failure_and_the_traceback_once(caplog):
    caplog.set_level(logging.INFO)
    assert outages.report(ValueError("a bug"), "ui.render") is False
    assert _records(caplog) == []
    for i in range(5):
        assert outages.report(REDIS_DOWN, "ui.render", session=f"{i}" * 32) is True
    assert outages.report(DB_DOWN, "GET /api/v4/requests") is True
    records = _records(caplog)
    assert [r.levelno for r in records] == [logging.WARNING] * 6
    assert [r.exc_info is not None for r in records] == [True, False, False, False, False, True]
    line = records[1].getMessage()
    assert line == (f"a2ui: ui.render failed for session {'1' * 32}: Redis unreachable "
                    "(ConnectionError: "
                    "Error 111 connecting to 127.0.0.1:6379. Connection refused.)")
    assert "\n" not in records[5].getMessage()  # the message's first line only
    # A client's text is never written: a session id that is not one is left out.
    outages.report(REDIS_DOWN, "ui.render", session="x\nFAKE LOG LINE")
    assert "FAKE" not in _records(caplog)[-1].getMessage()
    outages.report(REDIS_DOWN, "ui.render\nFAKE LOG LINE " + "x" * 10**5)  # a client's method
    assert _records(caplog)[-1].getMessage().startswith("a2ui: a message failed: Redis")
    assert "database unreachable (OperationalError: connection failed" in records[5].getMessage()


def test_a_summary_of_the_window(caplog):
    caplog.set_level(logging.INFO)
    assert outages.summarize() is None  # nothing failed
    for _ in range(3):
        outages.report(REDIS_DOWN, "ui.render")
    outages.report(REDIS_DOWN, "ui.progress")
    outages.report(DB_DOWN, "ui.render")
    line = outages.summarize()
    assert line == ("a2ui: 5 requests failed in the last 10 s: Redis unreachable 4 "
                    "(ui.render 3, ui.progress 1); database unreachable 1 (ui.render 1)")
    assert _records(caplog)[-1].getMessage() == line
    assert outages.summarize() is None  # counted once


def test_the_summary_comes_by_itself(caplog, monkeypatch):
    caplog.set_level(logging.INFO)
    monkeypatch.setattr(outages, "SUMMARY_SECONDS", 0.05)
    outages.report(REDIS_DOWN, "ui.render")
    deadline = time.monotonic() + 5
    while not any("failed in the last" in r.getMessage() for r in _records(caplog)):
        assert time.monotonic() < deadline, "no summary"
        time.sleep(0.02)


def test_a_new_outage_shows_its_traceback_again(caplog, monkeypatch):
    caplog.set_level(logging.INFO)
    outages.report(REDIS_DOWN, "ui.render")
    outages.report(REDIS_DOWN, "ui.render")
    monkeypatch.setattr(outages, "QUIET_SECONDS", 0.0)
    time.sleep(0.01)
    outages.report(REDIS_DOWN, "ui.render")
    assert [r.exc_info is not None for r in _records(caplog)] == [True, False, True]


# Where failures are caught ---------------------------------------------------------------------


def _redis_down(monkeypatch):
    async def down(*args, **kwargs):
        raise REDIS_DOWN

    monkeypatch.setattr(shared, "next_seq_and_sockets", down)
    monkeypatch.setattr(shared, "cached_session_and_next_seq", down)


async def test_pushes_while_redis_is_down_log_no_traceback(caplog, monkeypatch, stream_token,
                                                          agent_key):
    """Every failed push (progress: nothing stored) is answered -32603 and logged as one
    WARNING line; a render stored before Redis failed is answered delivered with a warning
    (its clients resync) and logged as one line too; only the first line of the outage carries
    a traceback (each was an ERROR with its traceback)."""
    caplog.set_level(logging.INFO)
    agent = await connect_agent(agent_key)
    person = await connect_user(stream_token)
    sid = await init_session(person)
    await recv(agent)  # session.opened
    _redis_down(monkeypatch)
    for i in range(6):
        method, params = (("ui.render", {"component_id": f"c{i}", "component_type": "card",
                                         "data": {"title": "t"}}) if i % 2 else
                          ("ui.progress", {"task_id": "t", "progress_type": "determinate",
                                           "value": i, "total": 100}))
        await send(agent, {"jsonrpc": "2.0", "id": f"r{i}", "method": method,
                           "params": {"session_id": sid, **params}})
        reply = await recv(agent)
        assert reply["id"] == f"r{i}"
        if i % 2:  # stored, then Redis failed: delivered late (a2ui.push.keys)
            assert reply["result"]["delivered"] is True and reply["result"]["warning"], reply
        else:
            assert reply["error"]["code"] == -32603, reply
    records = _records(caplog)
    assert [r for r in records if r.levelno >= logging.ERROR] == []
    failed = [r for r in records if r.name == "a2ui.outages"]
    assert len(failed) == 3
    late = [r for r in records if "stored but not delivered" in r.getMessage()]
    assert len(late) == 3 and all(r.exc_info is None for r in late)
    assert sum(r.exc_info is not None for r in records) == 1
    assert all(sid in r.getMessage() and "Redis unreachable" in r.getMessage() for r in failed)
    await person.disconnect()
    await agent.disconnect()


def test_rest_answers_503_while_the_database_is_down(caplog, monkeypatch, agent_key):
    from a2ui import tokens

    def down(raw):
        raise DB_DOWN

    caplog.set_level(logging.INFO)
    monkeypatch.setattr(tokens, "verify_agent_key", down)
    response = Client().get("/api/v4/requests", HTTP_AUTHORIZATION=f"Bearer {agent_key}")
    assert response.status_code == 503, response.content
    assert "a2ui: GET /api/v4/requests failed: database unreachable" in caplog.text
    assert response["Retry-After"] == "2"
    assert "database unreachable" in response.json()["detail"]
    assert [r for r in _records(caplog, "") if r.levelno >= logging.ERROR] == []


def test_django_views_answer_503_while_the_database_is_down(caplog, monkeypatch, user):
    """Not only the app's REST views: any view (the web client's page, the admin) through
    ServiceUnavailableMiddleware."""
    import django.contrib.auth

    client = Client()
    client.force_login(user)

    def down(request):
        raise DB_DOWN

    caplog.set_level(logging.INFO)
    monkeypatch.setattr(django.contrib.auth, "get_user", down)
    for path in ("/a2ui/", "/admin/"):
        response = client.get(path)
        assert response.status_code == 503, (path, response.status_code)
        assert response["Content-Type"] == "application/json"
        assert "database unreachable" in response.json()["detail"]
    assert [r for r in _records(caplog, "") if r.levelno >= logging.ERROR] == []


async def test_mcp_authentication_answers_503_while_the_database_is_down(caplog, monkeypatch,
                                                                        agent_key):
    from django.conf import settings

    from a2ui import tokens
    from a2ui.mcp.app import MCPApp
    from a2ui.mcp.server import build_server
    from tests.fuzz.mcp import INIT_BODY, MCP_HEADERS, AsgiHttp

    def down(raw):
        raise DB_DOWN

    caplog.set_level(logging.INFO)
    monkeypatch.setattr(tokens, "verify_agent_key", down)
    app = MCPApp(build_server(), settings.ALLOWED_HOSTS, max_request_body_size=1_048_576)
    http = AsgiHttp(app)
    headers = {**MCP_HEADERS, "Authorization": f"Bearer {agent_key}"}
    response = await http.request("POST", headers, json.dumps(INIT_BODY).encode())
    assert response.status == 503, (response.status, response.text)
    body = json.loads(response.text)
    assert body["error"]["code"] == -32603
    assert "database unreachable" in body["error"]["message"]
    assert [r for r in _records(caplog, "") if r.levelno >= logging.ERROR] == []


async def test_a_socket_opened_while_the_database_is_down_is_told(caplog, monkeypatch,
                                                                  stream_token):
    """The handshake's credential check failed in the auth middleware: Daphne logged a
    traceback and refused the handshake; the socket is told -32603 with the reason."""
    from a2ui import middleware

    def down(scope):
        raise DB_DOWN

    caplog.set_level(logging.INFO)
    monkeypatch.setattr(middleware, "resolve", down)
    person = await connect_user(stream_token)
    reply = await recv(person)
    assert reply["error"]["code"] == -32603
    assert "database unreachable" in reply["error"]["data"]["reason"]
    assert [r for r in _records(caplog, "") if r.levelno >= logging.ERROR] == []


async def test_v09_and_agui_sockets_opened_while_the_database_is_down_are_told(
        caplog, monkeypatch, stream_token):
    from channels.testing import WebsocketCommunicator

    from a2ui import middleware
    from a2ui.agui import consumer as agui_consumer
    from a2ui_project.asgi import application

    def down(*args):
        raise DB_DOWN

    caplog.set_level(logging.INFO)
    monkeypatch.setattr(middleware, "resolve", down)
    monkeypatch.setattr(agui_consumer, "_verify", down)
    for path in (f"/ws/v09/a2ui?token={stream_token}", "/ws/agui?token=anything"):
        socket = WebsocketCommunicator(application, path)
        connected, _ = await socket.connect()
        assert connected, path
        first = await socket.receive_from(timeout=3)
        assert "database unreachable" in first, (path, first)
        await socket.disconnect()
    assert [r for r in _records(caplog, "") if r.levelno >= logging.ERROR] == []
    assert sum(r.exc_info is not None for r in _records(caplog)) == 1


def test_failures_the_code_goes_on_after(caplog):
    """outages.warning: an outage's one line, anything else a WARNING with its traceback."""
    log = logging.getLogger("a2ui.test")
    caplog.set_level(logging.INFO)
    for exc in (REDIS_DOWN, REDIS_DOWN, ValueError("a bug")):
        try:
            raise exc
        except Exception:
            outages.warning(log, "agent socket heartbeat", "a2ui: heartbeat failed for %s", "x")
    records = _records(caplog)
    assert [(r.name, r.exc_info is not None) for r in records] == [
        ("a2ui.outages", True), ("a2ui.outages", False), ("a2ui.test", True)]
    assert records[2].getMessage() == "a2ui: heartbeat failed for x"


def test_the_channel_layer_reconnecting_logs_one_line_each(caplog):
    """channels-redis's receive task logs a traceback per reconnection attempt while Redis is
    away; the app's filter on its logger makes each one line."""
    layer_log = logging.getLogger("channels_redis.pubsub")
    caplog.set_level(logging.INFO)
    for exc in (REDIS_DOWN, REDIS_DOWN, ValueError("a bug")):
        try:
            raise exc
        except Exception:
            layer_log.exception("Unexpected exception in receive task")
    records = [r for r in caplog.records if r.name in ("a2ui.outages", "channels_redis.pubsub")]
    assert [(r.name, r.exc_info is not None) for r in records] == [
        ("a2ui.outages", True), ("a2ui.outages", False), ("channels_redis.pubsub", True)]
    assert "channel layer receive failed: Redis unreachable" in records[1].getMessage()
