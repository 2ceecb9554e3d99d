"""Session metrics written for every kind of caller (seed 000 section 6.3).

The REST view is a sync DRF view that calls the async service layer with ``async_to_sync``.
Under an ASGI server that runs the coroutine on the server's loop, inside a context that
points thread-sensitive work at the view's thread, which is gone once the view returns; with
no server loop (WSGI, tests, a management command) ``async_to_sync`` runs a loop of its own
that ends with the call. Either way the counts must reach the database.
"""

import asyncio
import time

import pytest
from asgiref.sync import sync_to_async
from channels.db import database_sync_to_async
from django.test import override_settings
from django.utils import timezone
from rest_framework.test import APIClient

from a2ui import tokens
from a2ui.models import A2UISessionLog
from a2ui.sessions import admission
from a2ui.sessions.counters import MetricsBuffer, _Counts, buffer

pytestmark = pytest.mark.django_db(transaction=True)
FAST = {"METRICS_FLUSH_SECONDS": 0.05}


def _open(user, agent):
    record = tokens.issue_stream_token(user, agent).record
    session = admission.open_session(record, {"name": "t"}, {})
    old = timezone.now() - timezone.timedelta(minutes=30)
    A2UISessionLog.objects.filter(pk=session.pk).update(last_activity=old)
    return session.pk, old


def _push(key, sid):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    response = client.post(
        f"/api/v4/sessions/{sid}/messages",
        [{"jsonrpc": "2.0", "method": "ui.notify", "params": {"level": "info", "title": "t"}}],
        format="json",
    )
    assert response.status_code == 202, response.content


def _wait_written(sid, old, timeout=3.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        row = A2UISessionLog.objects.get(pk=sid)
        # the counters and the move to active are two statements of one flush
        if row.message_count >= 1 and row.last_activity > old and row.state == "active":
            return row
        time.sleep(0.05)
    return A2UISessionLog.objects.get(pk=sid)


def test_rest_push_from_a_sync_caller_is_written(user, agent, agent_key):
    """No server loop: async_to_sync's own loop ends with the request."""
    with override_settings(A2UI=FAST):
        sid, old = _open(user, agent)
        _push(agent_key, sid)
        row = _wait_written(sid, old)
    assert row.message_count >= 1
    assert row.last_activity > old
    assert row.state == "active"


async def test_rest_push_under_an_asgi_server_loop_is_written(user, agent, agent_key):
    """As under Daphne: the sync view runs in a thread while a server loop runs."""
    with override_settings(A2UI=FAST):
        sid, old = await database_sync_to_async(_open)(user, agent)
        await sync_to_async(_push)(agent_key, sid)
        await asyncio.sleep(0.5)  # the server loop goes on after the request
        row = await database_sync_to_async(_wait_written)(sid, old)
    assert row.message_count >= 1
    assert row.last_activity > old
    assert row.state == "active"


def test_a_failed_write_keeps_the_counts(user, agent, monkeypatch):
    """A flush that fails (database away) puts its counts back for the next one."""
    sid, old = _open(user, agent)
    buf = MetricsBuffer()
    counts = _Counts()
    counts.messages, counts.last_activity = 3, timezone.now()
    buf._counts[str(sid)] = counts
    from a2ui.sessions import counters as metrics

    def broken(taken):
        raise RuntimeError("database away")

    monkeypatch.setattr(metrics, "_write", broken)
    with pytest.raises(RuntimeError):
        buf.flush_sync()
    monkeypatch.undo()
    buf.add(sid, messages=2)
    buf.flush_sync()
    assert A2UISessionLog.objects.get(pk=sid).message_count == 5


def test_the_flusher_outlives_every_loop(user, agent):
    """Counts added on a loop that then closes are still written, with no later call."""
    with override_settings(A2UI=FAST):
        sid, old = _open(user, agent)

        async def add():
            buffer.add(sid)

        asyncio.run(add())  # the loop is closed when this returns
        row = _wait_written(sid, old)
    assert row.message_count >= 1


def test_a_flush_waits_for_the_write_in_progress(user, agent, monkeypatch):
    """When flush returns, everything counted before it is written, even counts the flusher
    thread had already taken (a closing session, tests)."""
    import threading

    from django.db import connections

    from a2ui.sessions import counters as metrics

    sid, old = _open(user, agent)
    buf = MetricsBuffer()
    buf.flusher._thread = object()  # no flusher thread: the writes below are driven by hand
    buf.add(sid)
    real, started, release = metrics._write, threading.Event(), threading.Event()

    def slow(taken):
        started.set()
        release.wait(5)
        real(taken)

    def run(target, done=None):
        try:
            target()
        finally:
            connections.close_all()
            if done is not None:
                done.set()

    monkeypatch.setattr(metrics, "_write", slow)
    first = threading.Thread(target=run, args=(buf.flush_sync,))
    first.start()
    assert started.wait(5)
    monkeypatch.setattr(metrics, "_write", real)
    done = threading.Event()
    second = threading.Thread(target=run, args=(buf.flush_sync, done))
    second.start()
    assert not done.wait(0.3)  # it waits for the first write
    release.set()
    first.join(5)
    second.join(5)
    assert done.is_set()
    assert A2UISessionLog.objects.get(pk=sid).message_count == 1


def test_a_passing_flush_failure_is_a_warning_a_lasting_one_an_error(user, agent, monkeypatch,
                                                                      caplog):
    """The flusher thread retries a failed write each interval: the first failures are
    warnings (a locked SQLite table, a lost connection), five in a row an error."""
    from a2ui.sessions import counters as metrics

    sid, _ = _open(user, agent)
    failures = []

    def broken(taken):
        failures.append(1)
        raise RuntimeError("database away")

    monkeypatch.setattr(metrics, "_write", broken)
    buf = MetricsBuffer()
    with override_settings(A2UI=FAST), caplog.at_level("WARNING", logger="a2ui"):
        buf.add(sid, messages=1)
        deadline = time.monotonic() + 5
        while len(failures) < metrics.FAILURES_BEFORE_ERROR and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.1)
        monkeypatch.undo()  # the database is back: the next interval writes the counts
        row = _wait_written(sid, timezone.now() - timezone.timedelta(hours=1))
    levels = [r.levelname for r in caplog.records if "metrics flush failed" in r.getMessage()]
    assert levels[:metrics.FAILURES_BEFORE_ERROR - 1] == ["WARNING"] * (
        metrics.FAILURES_BEFORE_ERROR - 1)
    assert "ERROR" in levels
    assert row.message_count == 1


@pytest.mark.parametrize("use_tz", [True, False])
def test_the_last_activity_written_is_the_last_adds_time(user, agent, settings, use_tz):
    """A message stamps a float (no datetime per message); the flush writes it as the datetime
    ``timezone.now()`` would have given at that moment, aware or (without USE_TZ) naive."""
    sid, _ = _open(user, agent)
    settings.USE_TZ = use_tz
    buf = MetricsBuffer()
    before = timezone.now()
    buf.add(sid)
    time.sleep(0.01)
    buf.add(sid, messages=2)
    after = timezone.now()
    counts = buf._counts[str(sid)]
    assert counts.messages == 3
    assert (counts.last_activity.tzinfo is not None) is use_tz
    assert before <= counts.last_activity <= after
    later = _Counts()
    later.last_activity = after
    counts.merge(later)
    assert counts.last_activity == after  # the newer of the two
    buf.flush_sync()
    settings.USE_TZ = True
    row = A2UISessionLog.objects.get(pk=sid)
    assert row.message_count == 3
    if use_tz:
        assert abs((row.last_activity - after).total_seconds()) < 1e-3
