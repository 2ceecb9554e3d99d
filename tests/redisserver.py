"""A redis-server of the test's own, on a free port, that a test may restart or flush.

Never the shared Redis: tests that lose Redis state start one of these (``redis-server`` on
PATH, no persistence, so a restart loses every key as a crash would).
"""

import shutil
import socket
import subprocess
import tempfile
import time

import pytest


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisServer:
    def __init__(self):
        self.binary = shutil.which("redis-server")
        if self.binary is None:
            pytest.skip("redis-server is not installed")
        self.port = _free_port()
        self.dir = tempfile.mkdtemp(prefix="a2ui-own-redis-")
        self.proc = None

    def url(self, db=0):
        return f"redis://127.0.0.1:{self.port}/{db}"

    def start(self, timeout=10.0):
        self.proc = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", self.dir],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        return self
            except OSError:
                time.sleep(0.02)
        raise RuntimeError(f"redis-server on port {self.port} did not start")

    def stop(self):
        """Kill it (SIGKILL, like a crash): every key is gone, every connection dropped."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        self.proc = None

    def restart(self, down_seconds=0.0):
        self.stop()
        if down_seconds:
            time.sleep(down_seconds)
        return self.start()

    def command(self, *args, db=0):
        import redis

        client = redis.Redis.from_url(self.url(db), socket_timeout=5)
        try:
            return client.execute_command(*args)
        finally:
            client.close()

    def flushdb(self, db=0):
        self.command("FLUSHDB", db=db)


@pytest.fixture
def own_redis():
    """A redis-server of this test's own (started, and stopped at teardown)."""
    server = RedisServer().start()
    yield server
    server.stop()
    shutil.rmtree(server.dir, ignore_errors=True)
