"""Shared fixtures: users, agents with keys, stream tokens, and WebSocket helpers.

Tier 1 runs in-process (WebsocketCommunicator, APIClient) on whatever database and channel
layer the settings name: SQLite and the in-memory layer by default, PostgreSQL and Redis when
DATABASE_URL and REDIS_URL are set (as CI does). Tier 2 (tests/live) runs real Daphne processes.
"""

import contextlib
import time

import pytest

# Progress per tier (in-process, live, browser) printed during the run: tests/tierprogress.py;
# a test hung past its timeout ends its worker with its stacks: tests/hangwatch.py
pytest_plugins = ["tests.tierprogress", "tests.hangwatch"]


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    """A failed live or browser test shows what its servers, the demo and the page said."""
    rep = yield
    if rep.failed:
        for server in getattr(item, "_live_servers", ()):
            rep.sections.append((f"daphne {server.name} (port {server.port})", server.log()))
        demo = getattr(item, "_demo_output", None)
        if demo is not None:
            rep.sections.append(("a2ui_demo output", demo.output))
        watch = getattr(item, "_page_watch", None)
        if watch is not None:
            rep.sections.append(("browser console", "\n".join(watch.console) or "(nothing)"))
    return rep


def get_user_model():
    from django.contrib.auth import get_user_model as get

    return get()


@pytest.fixture(autouse=True)
def _to_thread_gives_database_connections_back(monkeypatch):
    """``asyncio.to_thread``'s threads belong to the event loop's executor, one per test, and
    end with it: a connection of the database pool (``DB_POOL_MAX``, 10) one of them took would
    never go back, and after a few tests of a worker the pool is empty (PoolTimeout). Each
    call gives its thread's connections back when it returns."""
    import asyncio

    from django.db import connections

    original = asyncio.to_thread

    async def to_thread(func, /, *args, **kwargs):
        def call():
            try:
                return func(*args, **kwargs)
            finally:
                connections.close_all()

        return await original(call)

    monkeypatch.setattr(asyncio, "to_thread", to_thread)


@pytest.fixture(autouse=True)
def _no_agent_pings(settings):
    """The in-process tests' agent sockets are Channels communicators, which answer nothing
    by themselves: the server's pings (``a2ui.jsonrpc.liveness``) are off unless a test turns
    them on (tests/sessions/test_agent_liveness.py); the live tests' agents answer them."""
    settings.A2UI = {**getattr(settings, "A2UI", {}), "AGENT_PING_SECONDS": 0}


@pytest.fixture(autouse=True)
def _fresh_local_state():
    """Process-local stand-ins for Redis keys, and direct-delivery registrations, start empty.

    Session counters a finished test left in the metrics buffer are dropped: their rows are
    gone, and the exit flush would otherwise wait on a test database that no longer exists.
    Outages a test caused are forgotten with their summary's timer (which would otherwise log
    into the next test, or into pytest's closed capture after the last one).
    """
    from a2ui.infra import outages, shared
    from a2ui.push import direct
    from a2ui.sessions import agentroute, presence
    from a2ui.sessions.counters import buffer

    shared.local.clear()
    direct.clear()
    agentroute.clear()
    presence.clear()
    yield
    shared.local.clear()
    direct.clear()
    agentroute.clear()
    presence.clear()
    buffer._take()
    outages.reset()


_redis_clients = {}


@pytest.fixture(autouse=True)
def _fresh_redis():
    """Each test starts on an empty Redis database, as on an empty database: counters, rate
    limits and leases a previous test left (a user id or address used again) do not carry over
    into the next test of the process, whatever order the tests run in."""
    from a2ui.conf import a2ui_settings

    url = a2ui_settings.REDIS_URL
    if url:
        import redis

        client = _redis_clients.get(url)
        if client is None:
            client = _redis_clients[url] = redis.Redis.from_url(url, socket_timeout=5)
        client.flushdb()
    yield
    # Replay events a test kept and the flusher has not written yet belong to that test's
    # database: they are not written into the next test's (or, at exit, the real one).
    from a2ui.compliance import replay as replaylog

    replaylog.buffer.clear()


@pytest.fixture(scope="session", autouse=True)
def _db_threads_closed_before_teardown(django_db_setup):
    """The per-message database threads (a2ui.infra.dbthreads) hold connections to the test
    database, and so may asgiref's one thread for ``sync_to_async`` outside a request (a
    connection it took from psycopg's pool stays out of it, and closing the pool leaves such
    a connection open); close them before pytest-django drops the database."""
    yield
    from asgiref.sync import SyncToAsync
    from django.db import connections

    from a2ui.infra import dbthreads

    dbthreads.shutdown()
    SyncToAsync.single_thread_executor.submit(connections.close_all).result(DRAIN_TIMEOUT)


@pytest.fixture(scope="session", autouse=True)
def _db_work_ended_before_flush():
    """A transactional test's database is emptied (TRUNCATE on PostgreSQL) once its event loop
    has closed; database work its sockets handed to a thread before that (an audit record of
    the last message a consumer took) may still be running. Wait for it first: a TRUNCATE and
    an insert checking its foreign keys take their locks in opposite orders and deadlock."""
    from asgiref.sync import SyncToAsync
    from django.test import TransactionTestCase

    from a2ui.infra import dbthreads, jobs

    flush = TransactionTestCase._fixture_teardown

    def _fixture_teardown(self):
        ended = dbthreads.drain(timeout=DRAIN_TIMEOUT)
        try:
            SyncToAsync.single_thread_executor.submit(lambda: None).result(DRAIN_TIMEOUT)
        except TimeoutError:
            ended = False
        assert ended, f"the test's database work was still running {DRAIN_TIMEOUT} s after it"
        with contextlib.ExitStack() as paused:  # no flusher writes beside the TRUNCATE
            for job in list(jobs._registry.values()):
                if isinstance(job, jobs.Flusher):
                    paused.enter_context(job.paused())
            return _flush_retrying(flush, self)

    TransactionTestCase._fixture_teardown = _fixture_teardown
    yield
    TransactionTestCase._fixture_teardown = flush


DRAIN_TIMEOUT = 10.0
FLUSH_TRIES = 5


def _flush_retrying(flush, test):
    """pytest-django's flush, again when PostgreSQL chose its TRUNCATE as a deadlock's victim.

    A live server (tests/live, tests/browser) is another process: the writes of a socket that
    closed as the test ended (the leaving client, the session's counters) may still run there
    when the TRUNCATE starts, and take their locks in the other order."""
    from django.core.management.base import CommandError
    from django.db import OperationalError

    for attempt in range(FLUSH_TRIES):
        try:
            return flush(test)
        except CommandError as exc:
            cause = exc.__cause__
            pgcode = getattr(getattr(cause, "__cause__", None), "sqlstate", None)
            if not isinstance(cause, OperationalError) or pgcode not in ("40P01", "55P03") \
                    or attempt == FLUSH_TRIES - 1:
                raise
            time.sleep(0.2 * (attempt + 1))


@pytest.fixture(autouse=True)
def _fresh_channel_layer():
    """A new channel layer per test: channels-redis binds locks and pools to an event loop,
    and every async test runs in its own loop."""
    from channels.layers import channel_layers

    channel_layers.backends.clear()
    yield
    channel_layers.backends.clear()


@pytest.fixture
def user(db):
    return get_user_model().objects.create_user("alice", "alice@example.com", "pw-alice-123")


@pytest.fixture
def other_user(db):
    return get_user_model().objects.create_user("bob", "bob@example.com", "pw-bob-123")


@pytest.fixture
def superuser(db):
    return get_user_model().objects.create_superuser("root", "root@example.com", "pw-root-123")


@pytest.fixture
def agent_and_key(db):
    from a2ui import tokens

    return tokens.create_agent("demo-agent", display_name="Demo Agent")


@pytest.fixture
def agent(agent_and_key):
    return agent_and_key[0]


@pytest.fixture
def agent_key(agent_and_key):
    return agent_and_key[1]


@pytest.fixture
def stream_token(user, agent):
    from a2ui import tokens

    return tokens.issue_stream_token(user, agent).token


@pytest.fixture
def session(user, agent):
    """A live session of ``user`` with ``agent``, opened as a client's handshake opens one
    (``a2ui.sessions.admission``), its client declaring the v0.9 basic catalog."""
    from a2ui import tokens
    from a2ui.sessions import admission
    from tests.surfaces.helpers import V09_CAPS

    return admission.open_session(tokens.issue_stream_token(user, agent).record, {}, V09_CAPS)


@pytest.fixture
def metrics_on(settings, monkeypatch):
    """The Prometheus metrics on for the test, in this process alone (no multiprocess
    directory): ``tests.promutil`` reads its scrape."""
    from a2ui.infra import prom

    monkeypatch.delenv("PROMETHEUS_MULTIPROC_DIR", raising=False)
    settings.A2UI = {**getattr(settings, "A2UI", {}), "PROMETHEUS": True,
                     "PROMETHEUS_MULTIPROC_DIR": None}
    prom.setup(force=True)
    yield
    prom.setup(force=True)
