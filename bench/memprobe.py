"""What a bench server's memory holds, on demand: ``kill -USR1 <pid>`` appends a report to the
file named by ``A2UI_MEMPROBE`` (bench/bench_capacity.py ``--probe``). Not for production.

The report (one JSON line): glibc's ``mallinfo2`` (bytes in use and free but kept), the count
of each type of object the cyclic collector tracks (after a full collection), and the length
of this app's process-wide registries. Two reports subtracted say what outlived the sockets.
"""

import ctypes
import gc
import json
import os
import signal
import sys
import time


class _Mallinfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
        "fordblks", "keepcost")]


def mallinfo():
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallinfo2.restype = _Mallinfo2
    except (OSError, AttributeError):
        return {}
    info = libc.mallinfo2()
    return {"in_use_mb": (info.uordblks + info.hblkhd) / 2**20, "free_kept_mb": info.fordblks / 2**20,
            "arena_mb": info.arena / 2**20, "mmapped_mb": info.hblkhd / 2**20}


def registries():
    """Lengths of the module-level dicts and sets of ``a2ui`` modules (the ones with entries)."""
    out = {}
    for name, module in list(sys.modules.items()):
        if not name.startswith("a2ui") or module is None:
            continue
        for attr, value in list(vars(module).items()):
            if isinstance(value, dict | set | list) and len(value) > 20:
                out[f"{name}.{attr}"] = len(value)
    return out


def report(label=""):
    gc.collect()
    types = {}
    for obj in gc.get_objects():
        key = f"{type(obj).__module__}.{type(obj).__qualname__}"
        types[key] = types.get(key, 0) + 1
    return {"label": label, "at": time.time(), "malloc": mallinfo(), "objects": types,
            "registries": registries(), "gc_objects": sum(types.values())}


def _on_signal(signum, frame):
    with open(os.environ["A2UI_MEMPROBE"], "a") as out:
        out.write(json.dumps(report()) + "\n")


def install():
    if os.environ.get("A2UI_MEMPROBE"):
        signal.signal(signal.SIGUSR1, _on_signal)
