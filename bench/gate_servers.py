"""Servers and services of bench/bench_gate.py: ``manage.py a2ui_serve`` processes of a tree,
its PostgreSQL database, the bench's Redis database."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

HOST = "127.0.0.1"


def free_port():
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def pinned(cpus):
    """A ``preexec_fn`` confining the child to ``cpus`` (None when ``cpus`` is None)."""
    if cpus is None:
        return None
    return lambda: os.sched_setaffinity(0, cpus)


def pin_plan(pin):
    """``--pin``'s CPU sets: (servers, load generator), or (None, None) without it. The servers
    get the last CPU, the load generator the others, so that the load's own work and the
    scheduler's choices do not fall on the measured process differently from one measurement to
    the next."""
    if not pin:
        return None, None
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        raise SystemExit("--pin needs at least 2 CPUs")
    return {cpus[-1]}, set(cpus[:-1])


class Server:
    """``python manage.py a2ui_serve -p PORT APP`` in ``tree`` (that tree's code and settings)."""

    def __init__(self, name, tree, app, env, cpus=None):
        """``cpus``: the CPUs the process may run on (``os.sched_setaffinity``; None: any)."""
        self.name, self.port = name, free_port()
        self.log = tempfile.NamedTemporaryFile(prefix=f"bench-{name}-", suffix=".log",
                                               delete=False)
        argv = [sys.executable, "manage.py", "a2ui_serve", "-v", "0", "-b", HOST, "-p",
                str(self.port), app]
        self.proc = subprocess.Popen(argv, cwd=tree, env=env, stdout=self.log,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     preexec_fn=pinned(cpus))

    def wait_ready(self, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited early:\n{self.read_log()}")
            try:
                with socket.create_connection((HOST, self.port), timeout=0.5):
                    return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"{self.name} not listening after {timeout} s:\n{self.read_log()}")

    def read_log(self):
        return Path(self.log.name).read_text(errors="replace")[-4000:]

    def dump_log(self):
        print(f"--- log of {self.name} ---\n{self.read_log()}", file=sys.stderr, flush=True)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self.log.close()
        if os.environ.get("BENCH_KEEP_LOGS"):
            print(f"{self.name} log: {self.log.name}", flush=True)
        else:
            os.unlink(self.log.name)


def flush_redis(url):
    import redis

    client = redis.Redis.from_url(url)
    client.flushdb()
    client.close()


def prepare_database(tree, database_url, env):
    """Create the database if absent and migrate it with ``tree``'s own migrations."""
    parts = urlsplit(database_url)
    name = parts.path.lstrip("/")
    pg = ["-h", parts.hostname or HOST, "-p", str(parts.port or 5432), "-U",
          parts.username or "postgres"]
    pg_env = dict(os.environ, PGPASSWORD=parts.password or os.environ.get("PGPASSWORD", ""))
    exists = subprocess.run(
        ["psql", *pg, "-d", "postgres", "-tAc",
         f"SELECT 1 FROM pg_database WHERE datname='{name}'"],
        capture_output=True, text=True, check=True, env=pg_env,
    ).stdout.strip()
    if exists != "1":
        subprocess.run(["createdb", *pg, name], check=True, env=pg_env)
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=tree, env=env,
                   check=True)
