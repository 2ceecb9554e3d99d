"""Settings for bench/probe_memory.py's server: bench/capacity_settings.py, and on SIGUSR1 a
tracemalloc snapshot and the live objects' counts per type written to ``A2UI_PROBE_DIR``
(``snap-N.pickle``, ``types-N.json``). Tracing is on when the process starts with
``PYTHONTRACEMALLOC`` set (its value: frames kept per allocation)."""

import gc
import json
import os
import signal
import tracemalloc
from collections import Counter

from capacity_settings import *  # noqa: F403

_probe = {"n": 0}


def _dump(signum, frame):
    out = os.environ["A2UI_PROBE_DIR"]
    n = _probe["n"]
    _probe["n"] += 1
    gc.collect()
    counts = Counter(type(o).__qualname__ if type(o).__module__ == "builtins"
                     else f"{type(o).__module__}.{type(o).__qualname__}" for o in gc.get_objects())
    if tracemalloc.is_tracing():
        tracemalloc.take_snapshot().dump(os.path.join(out, f"snap-{n}.pickle"))
    with open(os.path.join(out, f"types-{n}.json"), "w") as f:
        json.dump(counts, f)
    with open(os.path.join(out, f"done-{n}"), "w") as f:
        f.write("1")


signal.signal(signal.SIGUSR1, _dump)
