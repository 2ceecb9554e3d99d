"""``dbthreads.drain``: every call handed to the pool before it has ended when it returns (the
suite relies on it before it empties a test's database)."""

import threading
import time

from a2ui.infra import dbthreads


def test_drain_returns_once_every_earlier_call_has_ended():
    pool = dbthreads._pool()
    release = threading.Event()
    ended = []

    def call(n):
        release.wait(5)
        time.sleep(0.01 * n)
        ended.append(n)

    for n in range(3 * dbthreads.THREADS):  # more calls than threads: some still queued
        pool.submit(call, n)
    threading.Timer(0.2, release.set).start()
    assert dbthreads.drain(timeout=5)
    assert sorted(ended) == list(range(3 * dbthreads.THREADS))


def test_drain_says_so_when_a_call_outlives_its_timeout():
    pool = dbthreads._pool()
    release = threading.Event()
    pool.submit(release.wait, 5)
    try:
        assert dbthreads.drain(timeout=0.2) is False
    finally:
        release.set()
    assert dbthreads.drain(timeout=5)  # and the pool works on afterwards


def test_drain_with_no_pool_yet(monkeypatch):
    monkeypatch.setattr(dbthreads, "_executor", [])
    assert dbthreads.drain(timeout=0.1)
