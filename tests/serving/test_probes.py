"""The health probes (``a2ui.probes``, ``a2ui.infra.health``; docs/operations.md, "Health and
readiness probes"): liveness answers on the event loop whatever the dependencies do; readiness
is 503 with the failed check's error class when the database or Redis is down or hung, or the
process is draining; cheap (cached, one run at a time), never a 500, nothing sensitive shown.
tests/live/test_live_probes.py shows them on a real Daphne."""

import asyncio
import json
import socket
import threading
import time

import pytest
from django.db import OperationalError
from django.test import Client
from django.urls import include, path

from a2ui import probes, serving
from a2ui.infra import health

# A URLconf that includes the app under another prefix (test_the_paths_follow_the_urlconf).
urlpatterns = [path("ops/", include("a2ui.urls"))]

SECRET = "10.9.8.7"  # what a failure's message may name (a host): never in a probe's body
DB_DOWN = OperationalError(f'connection to server at "{SECRET}", port 5432 failed: refused')


@pytest.fixture(autouse=True)
def fresh_health():
    health.reset()
    yield
    health.reset()


@pytest.fixture
def app():
    from a2ui.asgi import http_application

    return http_application()


async def call(app, path, *, method="GET", host="localhost", root_path=""):
    """One HTTP request to an ASGI app: ``(status, headers dict, body bytes)``."""
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
             "method": method, "scheme": "http", "path": root_path + path,
             "raw_path": (root_path + path).encode(), "query_string": b"",
             "root_path": root_path, "headers": [(b"host", host.encode())],
             "client": ("127.0.0.1", 50000), "server": ("localhost", 80)}
    sent, requested, done = [], [], asyncio.Event()

    async def receive():
        if not requested:
            requested.append(True)
            return {"type": "http.request", "body": b"", "more_body": False}
        await done.wait()
        return {"type": "http.disconnect"}

    async def send(message):
        sent.append(message)
        if message["type"] == "http.response.body" and not message.get("more_body"):
            done.set()

    await asyncio.wait_for(app(scope, receive, send), 10)
    start = sent[0]
    headers = {k.decode().lower(): v.decode() for k, v in start["headers"]}
    return start["status"], headers, b"".join(m.get("body", b"") for m in sent[1:])


def closed_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Queries:
    """Stands in for the database query: counts the calls; raises, or hangs until released."""

    def __init__(self, error=None, hang=False):
        self.error, self.calls = error, 0
        self.release = threading.Event()
        if not hang:
            self.release.set()

    def __call__(self):
        self.calls += 1
        self.release.wait(10)
        if self.error is not None:
            raise self.error


# Liveness ---------------------------------------------------------------------------------------


async def test_liveness_answers_on_the_loop_before_any_middleware(settings, monkeypatch):
    """No database access (not allowed here: pytest-django would raise), no thread, and none
    of the project's middleware (here one that sends every anonymous request to the login
    page, which would fail the probe)."""
    from asgiref.sync import SyncToAsync

    from a2ui.asgi import http_application

    settings.MIDDLEWARE = [*settings.MIDDLEWARE,
                           "django.contrib.auth.middleware.LoginRequiredMiddleware"]
    app = http_application()

    def no_thread(*args, **kwargs):
        raise AssertionError("a thread hop")

    monkeypatch.setattr(SyncToAsync, "__call__", no_thread)
    status, headers, body = await call(app, "/a2ui/healthz")
    assert status == 200
    assert headers["content-type"] == "application/json"
    assert headers["cache-control"] == "no-store"
    report = json.loads(body)
    assert report["status"] == "ok"
    assert report["checks"]["event_loop"]["status"] == "ok"
    assert isinstance(report["checks"]["event_loop"]["latency_ms"], float)


@pytest.mark.django_db
async def test_liveness_stays_ok_while_draining_and_while_the_database_is_down(app, monkeypatch):
    monkeypatch.setattr(health, "_query_database", Queries(DB_DOWN))
    health.start_draining()
    status, _, body = await call(app, "/a2ui/healthz")
    assert status == 200 and json.loads(body)["status"] == "ok"


# Readiness --------------------------------------------------------------------------------------


@pytest.mark.django_db
async def test_readiness_ok_names_every_check(app):
    status, headers, body = await call(app, "/a2ui/readyz")
    assert status == 200, body
    report = json.loads(body)
    assert report["status"] == "ok"
    checks = report["checks"]
    expected = {"serving", "database", "channel_layer"} | (
        {"redis"} if health.a2ui_settings.REDIS_URL else set())
    assert set(checks) == expected
    assert all(c["status"] == "ok" for c in checks.values())
    assert checks["database"]["latency_ms"] >= 0


@pytest.mark.django_db
async def test_the_database_down_is_503_with_the_error_class_only(app, monkeypatch):
    monkeypatch.setattr(health, "_query_database", Queries(DB_DOWN))
    status, headers, body = await call(app, "/a2ui/readyz")
    assert status == 503
    report = json.loads(body)
    assert report["status"] == "fail"
    assert report["checks"]["database"]["status"] == "fail"
    assert report["checks"]["database"]["error"] == "OperationalError"
    assert report["checks"]["channel_layer"]["status"] == "ok"
    assert SECRET.encode() not in body and b"5432" not in body


@pytest.mark.django_db
def test_through_django_the_view_answers_its_own_503(monkeypatch, settings):
    """Through Django's middleware too (a project that builds its own HTTP application):
    ServiceUnavailableMiddleware does not replace the report with its own 503, and
    LoginRequiredMiddleware does not send the probe to the login page."""
    settings.MIDDLEWARE = [*settings.MIDDLEWARE,
                           "django.contrib.auth.middleware.LoginRequiredMiddleware"]
    monkeypatch.setattr(health, "_query_database", Queries(DB_DOWN))
    response = Client().get("/a2ui/readyz")
    assert response.status_code == 503
    assert response["Content-Type"] == "application/json"
    assert response.json()["checks"]["database"] == {
        "status": "fail", "error": "OperationalError",
        "latency_ms": response.json()["checks"]["database"]["latency_ms"]}
    health.reset()
    assert Client().get("/a2ui/healthz").json()["status"] == "ok"
    assert Client().post("/a2ui/readyz").status_code == 405


@pytest.mark.django_db
async def test_a_hung_database_fails_fast_and_is_queried_once(app, monkeypatch, settings):
    settings.A2UI = {**settings.A2UI, "HEALTH_CHECK_TIMEOUT_SECONDS": 0.2,
                     "HEALTH_CACHE_SECONDS": 0.01}
    hung = Queries(hang=True)
    monkeypatch.setattr(health, "_query_database", hung)
    try:
        for _ in range(3):
            started = time.monotonic()
            status, _, body = await call(app, "/a2ui/readyz")
            assert time.monotonic() - started < 1.0
            assert status == 503
            assert json.loads(body)["checks"]["database"]["error"] == "TimeoutError"
            await asyncio.sleep(0.02)  # past the cache: a new run, the same query waited for
        assert hung.calls == 1
    finally:
        hung.release.set()
    await asyncio.sleep(0.05)
    status, _, _ = await call(app, "/a2ui/readyz")
    assert status == 200 and hung.calls == 2


@pytest.mark.django_db
async def test_redis_and_the_channel_layer_down(app, settings):
    """A2UI['REDIS_URL'] and the channel layer's Redis on a port nobody listens on."""
    url = f"redis://127.0.0.1:{closed_port()}/0"
    settings.A2UI = {**settings.A2UI, "REDIS_URL": url}
    settings.CHANNEL_LAYERS = {"default": {
        "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
        "CONFIG": {"hosts": [{"address": url, "socket_connect_timeout": 5}]}}}
    status, _, body = await call(app, "/a2ui/readyz")
    assert status == 503
    checks = json.loads(body)["checks"]
    assert checks["database"]["status"] == "ok"
    for name in ("redis", "channel_layer"):
        assert checks[name]["status"] == "fail", checks
        assert "Connection" in checks[name]["error"], checks  # ConnectionRefusedError, ...
    assert url.encode() not in body and b"127.0.0.1" not in body


@pytest.mark.django_db
async def test_a_hung_redis_fails_fast(app, settings):
    """A server that accepts and never answers (a stopped Redis): the check's timeout."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    url = f"redis://127.0.0.1:{listener.getsockname()[1]}/0"
    settings.A2UI = {**settings.A2UI, "REDIS_URL": url, "HEALTH_CHECK_TIMEOUT_SECONDS": 0.2}
    settings.CHANNEL_LAYERS = {"default": {
        "BACKEND": "channels_redis.core.RedisChannelLayer", "CONFIG": {"hosts": [url]}}}
    try:
        started = time.monotonic()
        status, _, body = await call(app, "/a2ui/readyz")
        assert time.monotonic() - started < 1.0
    finally:
        listener.close()
    assert status == 503
    checks = json.loads(body)["checks"]
    assert checks["redis"]["error"] == checks["channel_layer"]["error"] == "TimeoutError"


@pytest.mark.django_db
async def test_the_result_is_cached_and_concurrent_probes_share_one_run(app, monkeypatch,
                                                                       settings):
    settings.A2UI = {**settings.A2UI, "HEALTH_CACHE_SECONDS": 0.3}
    queries = Queries()
    monkeypatch.setattr(health, "_query_database", queries)
    answers = await asyncio.gather(*(call(app, "/a2ui/readyz") for _ in range(5)))
    assert [a[0] for a in answers] == [200] * 5
    assert queries.calls == 1
    await call(app, "/a2ui/readyz")
    assert queries.calls == 1
    await asyncio.sleep(0.35)
    await call(app, "/a2ui/readyz")
    assert queries.calls == 2


@pytest.mark.django_db
async def test_draining_is_503_at_once_without_checks(app, monkeypatch):
    queries = Queries()
    monkeypatch.setattr(health, "_query_database", queries)
    assert (await call(app, "/a2ui/readyz"))[0] == 200
    health.start_draining()
    status, _, body = await call(app, "/a2ui/readyz")
    assert status == 503
    assert json.loads(body) == {"status": "fail", "checks": {
        "serving": {"status": "fail", "error": "draining"}}}
    assert queries.calls == 1  # the cached ok is not answered either


def test_the_server_drains_when_it_stops(monkeypatch):
    """SIGTERM runs Daphne's shutdown hook (A2UIServer.kill_all_applications): readiness is
    503 from its first line, while the sockets are being closed."""
    server = serving.build_server(lambda *a: None, ["tcp:port=0"])
    server.connections = {}
    monkeypatch.setattr(server, "cancel_applications", lambda: None)
    assert not health.draining()
    server.kill_all_applications()
    assert health.draining()


# The HTTP side ----------------------------------------------------------------------------------


async def test_a_host_outside_allowed_hosts_is_400(app):
    status, headers, body = await call(app, "/a2ui/healthz", host="evil.example")
    assert status == 400 and headers["content-type"] == "application/json"
    assert json.loads(body)["detail"]


async def test_only_get_and_head(app):
    status, headers, _ = await call(app, "/a2ui/healthz", method="POST")
    assert status == 405 and headers["allow"] == "GET, HEAD"
    status, headers, body = await call(app, "/a2ui/healthz", method="HEAD")
    assert status == 200 and body == b"" and int(headers["content-length"]) > 0


@pytest.mark.django_db
async def test_an_unexpected_failure_is_503_not_500(app, monkeypatch):
    async def broken():
        raise ValueError(f"something about {SECRET}")

    monkeypatch.setattr(health, "readiness", broken)
    status, _, body = await call(app, "/a2ui/readyz")
    assert status == 503
    assert json.loads(body) == {"status": "fail", "error": "ValueError"}
    assert SECRET.encode() not in body


async def test_the_paths_follow_the_urlconf(settings):
    """A project that includes a2ui.urls under ``ops/`` has its probes there (and under a
    root path, after it)."""
    from a2ui.asgi import http_application

    settings.ROOT_URLCONF = __name__
    app = http_application()
    assert probes.probe_paths() == {"/ops/a2ui/healthz": probes.LIVENESS,
                                    "/ops/a2ui/readyz": probes.READINESS,
                                    "/ops/a2ui/metrics": probes.METRICS}
    assert (await call(app, "/ops/a2ui/healthz"))[0] == 200
    assert (await call(app, "/ops/a2ui/healthz", root_path="/site"))[0] == 200
