"""A test that swallows its timeout ends its worker with its stacks; the run goes on
(tests/hangwatch.py)."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

HUNG = '''
import time

import pytest

import tests.hangwatch

tests.hangwatch.GRACE = 1.0


@pytest.mark.timeout(1)
def test_swallows_its_timeout():
    while True:  # what an event loop does with an exception raised in a callback
        try:
            time.sleep(60)
        except BaseException:
            pass


def test_after_it():
    pass
'''


def test_a_test_that_swallows_its_timeout_ends_its_worker_and_the_run_goes_on(tmp_path):
    # a directory of the repository's tests, so that tests/conftest.py's plugins load
    folder = ROOT / "tests" / "core" / f"_hang_{os.getpid()}"
    folder.mkdir()
    try:
        (folder / "test_hung.py").write_text(HUNG)
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-n", "1", "-p", "no:cacheprovider", "-q",
             str(folder)], cwd=ROOT, capture_output=True, text=True, timeout=90,
            env={**os.environ, "DATABASE_URL": "", "REDIS_URL": ""})
    finally:
        for path in folder.iterdir():
            path.unlink()
        folder.rmdir()
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert "stacks of a test past its timeout" in out, out
    assert "test_swallows_its_timeout ran past 2 s" in out, out
    assert "in test_swallows_its_timeout" in out, out  # the hung frame
    assert "1 failed, 1 passed" in out, out
