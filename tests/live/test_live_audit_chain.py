"""Tier 2: concurrent audit writers in two OS processes (each with two threads) against
PostgreSQL keep one valid hash chain, in commit order, with no gap or duplicate."""

import subprocess
import sys
import time

import pytest

from a2ui.compliance import chain as auditchain
from a2ui.models import AuditEvent
from tests.live.conftest import ROOT, live_env

pytestmark = [pytest.mark.live, pytest.mark.django_db(transaction=True)]

N = 150  # events per thread

WRITER = f"""
import os, sys, threading, time
import django
django.setup()
from django.db import close_old_connections
from a2ui.compliance import audit

name, start = sys.argv[1], float(sys.argv[2])
while time.time() < start:
    time.sleep(0.005)

def write(thread):
    for i in range({N}):
        audit.record("test.write", target=("writer", f"{{name}}-{{thread}}"),
                     details={{"i": i, "pid": os.getpid()}})
    close_old_connections()

threads = [threading.Thread(target=write, args=(t,)) for t in range(2)]
for t in threads: t.start()
for t in threads: t.join()
print("done", name)
"""


def test_two_processes_writing_keep_one_valid_chain(live_services):
    env = live_env(live_services)
    start = time.time() + 3  # both start writing at once, once Django is up
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, name, str(start)], cwd=ROOT,
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for name in ("a", "b")]
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err[-3000:]
        assert out.startswith("done")
    writers = list(AuditEvent.objects.filter(action="test.write").order_by("seq")
                   .values_list("seq", "target_id"))
    assert len(writers) == 4 * N
    assert [s for s, _ in writers] == list(range(1, 4 * N + 1))  # gapless, one chain
    # the writers really interleaved (the test would prove nothing otherwise)
    switches = sum(1 for (_, a), (_, b) in zip(writers, writers[1:], strict=False) if a[0] != b[0])
    assert switches >= 10
    result = auditchain.verify()
    assert result.ok, result.problems
    assert result.checked == 4 * N
