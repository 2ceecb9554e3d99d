"""A Redis Sentinel set of the test's own: a primary, a replica and three sentinels.

Each on a free port with a temporary directory (``redis-server`` on PATH; a sentinel is
``redis-server <conf> --sentinel``), no persistence. ``kill_primary`` SIGKILLs the primary as a
crash would; ``wait_promoted`` waits until the sentinels name the replica.
"""

import os
import shutil
import socket
import subprocess
import tempfile
import time

import pytest

from tests.redisserver import _free_port

SERVICE = "a2ui"


def _ask(port, *args, timeout=0.5):
    import redis

    client = redis.Redis(host="127.0.0.1", port=port, socket_timeout=timeout,
                         socket_connect_timeout=timeout, decode_responses=True)
    try:
        return client.execute_command(*args)
    finally:
        client.close()


def _wait(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if predicate():
                return
        except Exception:  # not up yet
            pass
        time.sleep(0.05)
    raise RuntimeError(f"{what} within {timeout} s")


class SentinelSet:
    def __init__(self, down_after_ms=1000):
        self.binary = shutil.which("redis-server")
        if self.binary is None:
            if os.environ.get("CI") or os.environ.get("A2UI_REQUIRE_LIVE", "") not in ("", "0"):
                pytest.fail("redis-server is not installed (the Sentinel tests need it)")
            pytest.skip("redis-server is not installed")
        self.dir = tempfile.mkdtemp(prefix="a2ui-sentinel-")
        self.down_after_ms = down_after_ms
        self.primary_port, self.replica_port = _free_port(), _free_port()
        self.sentinel_ports = [_free_port() for _ in range(3)]
        self.procs = {}

    def url(self, db=0):
        hosts = ",".join(f"127.0.0.1:{port}" for port in self.sentinel_ports)
        return f"redis+sentinel://{hosts}/{SERVICE}/{db}"

    def _spawn(self, name, args):
        log = open(os.path.join(self.dir, f"{name}.log"), "wb")
        self.procs[name] = subprocess.Popen([self.binary, *args], stdout=log,
                                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        log.close()

    def _server(self, name, port, *extra):
        data = os.path.join(self.dir, name)
        os.makedirs(data, exist_ok=True)
        self._spawn(name, ["--port", str(port), "--bind", "127.0.0.1", "--save", "",
                           "--appendonly", "no", "--dir", data, *extra])

    def start(self):
        self._server("primary", self.primary_port)
        self._server("replica", self.replica_port, "--replicaof", "127.0.0.1",
                     str(self.primary_port))
        _wait(lambda: _ask(self.replica_port, "INFO", "replication")["master_link_status"]
              == "up", 10, "the replica did not sync")
        for i, port in enumerate(self.sentinel_ports):
            conf = os.path.join(self.dir, f"sentinel{i}.conf")
            with open(conf, "w") as f:
                f.write(f"port {port}\nbind 127.0.0.1\ndir {self.dir}\n"
                        f"sentinel monitor {SERVICE} 127.0.0.1 {self.primary_port} 2\n"
                        f"sentinel down-after-milliseconds {SERVICE} {self.down_after_ms}\n"
                        f"sentinel failover-timeout {SERVICE} 10000\n"
                        f"sentinel parallel-syncs {SERVICE} 1\n")
            self._spawn(f"sentinel{i}", [conf, "--sentinel"])
        # Every sentinel knows the replica and the other sentinels: a failover can be agreed.
        for port in self.sentinel_ports:
            _wait(lambda p=port: int(_ask(p, "SENTINEL", "MASTER", SERVICE)[
                "num-other-sentinels"]) == 2 and _ask(p, "SENTINEL", "REPLICAS", SERVICE),
                  15, f"sentinel {port} did not see its peers and the replica")
        return self

    def primary(self, port=None):
        """``(host, port)`` the sentinel at ``port`` (the first by default) names."""
        host, primary = _ask(port or self.sentinel_ports[0], "SENTINEL",
                             "GET-MASTER-ADDR-BY-NAME", SERVICE)
        return host, int(primary)

    def kill_primary(self):
        proc = self.procs.pop("primary")
        proc.kill()
        proc.wait(10)

    def wait_promoted(self, timeout=20):
        """Block until every sentinel names the replica and it answers as a primary; return
        the monotonic time that was first seen."""
        def promoted():
            return (all(self.primary(p)[1] == self.replica_port for p in self.sentinel_ports)
                    and _ask(self.replica_port, "ROLE")[0] == "master")
        _wait(promoted, timeout, "the replica was not promoted")
        return time.monotonic()

    def command(self, port, *args):
        return _ask(port, *args, timeout=5)

    def stop(self):
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)
        self.procs.clear()
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def sentinel_set():
    """A started Sentinel set (primary, replica, three sentinels), stopped at teardown."""
    servers = SentinelSet().start()
    yield servers
    servers.stop()


def port_open(port):
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0
