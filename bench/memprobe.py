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


def _thread_stacks():
    """(stack pointer, thread name) of each thread waiting in a system call (the pointer read
    from ``/proc/self/task/TID/syscall``): the mapping it falls in is that thread's stack."""
    import threading

    names = {t.native_id: t.name for t in threading.enumerate()}
    found = []
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/syscall") as f:
                fields = f.read().split()
        except OSError:
            continue
        if len(fields) >= 8:
            found.append((int(fields[-2], 16), names.get(int(tid), f"tid {tid}")))
    return found


def mappings():
    """Resident KB per kind of mapping (``/proc/self/smaps``): ``[heap]`` (the main arena),
    ``[stack]``, anonymous ones by reserved size and place (glibc's other arenas reserve 64 MB
    at a multiple of 64 MB and grow within it, a thread's stack 8 MB, ``malloc``'s large
    blocks their own size), and files."""
    kinds = {}
    kind = None
    stacks = _thread_stacks()
    try:
        with open("/proc/self/smaps") as smaps:
            for line in smaps:
                first = line.split(None, 1)[0]
                if "-" in first and not first.endswith(":"):
                    fields = line.split()
                    start, end = (int(x, 16) for x in fields[0].split("-"))
                    path = fields[5] if len(fields) > 5 else ""
                    size_mb = (end - start) / 2**20
                    if path.startswith("["):
                        kind = path
                    elif path:
                        kind = "file"
                    elif size_mb >= 60 or start % (64 << 20) == 0:  # glibc aligns its heaps
                        kind = "anon, 64 MB aligned (arenas)"
                    elif size_mb >= 7.9:
                        kind = "anon 8 MB (thread stacks)"
                    else:
                        kind = "anon < 8 MB"
                elif first == "Rss:":
                    rss = int(line.split()[1])
                    kinds[kind] = kinds.get(kind, 0) + rss
                    if kind.startswith("anon") and rss >= 256:
                        users = [n for sp, n in stacks if start <= sp < end]
                        kinds[f"anon of {size_mb:.1f} MB at {start:x}"
                              f"{' (stack of ' + ', '.join(users) + ')' if users else ''}"] = rss
    except OSError:
        return {}
    return kinds


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


def pymalloc():
    """Python's own small-object allocator (``sys._debugmallocstats``, which writes to the C
    stderr): its arenas (1 MB each) and the bytes in them in use and free. An arena goes back
    to the system only once every block in it is free."""
    import tempfile

    with tempfile.TemporaryFile("w+") as out:
        sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(out.fileno(), 2)
        try:
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        out.seek(0)
        text = out.read()
    stats = {}
    for line in text.splitlines():
        name, _, value = line.partition("=")
        name = name.strip().lstrip("#").strip()
        if name in ("arenas allocated current", "bytes in allocated blocks",
                    "bytes in available blocks", "bytes in arenas"):
            try:
                stats[name] = int(value.strip().replace(",", ""))
            except ValueError:
                pass
    arenas = stats.get("arenas allocated current", 0)
    return {"arenas": arenas,
            "used_mb": stats.get("bytes in allocated blocks", 0) / 2**20,
            "free_in_pools_mb": stats.get("bytes in available blocks", 0) / 2**20}


#: ``id(obj) >> BUCKET``: the page (4 KB) an object starts on. Objects that outlive the
#: sockets on a page that held nothing before they opened keep that page resident (C malloc,
#: ``a2ui_serve``'s default, hands back free pages anywhere in its heap: ``malloc_trim``).
BUCKET = 12

#: A page with this many live objects or fewer is held by them alone, in effect.
SPARSE = 4

_before = {}


def live_objects():
    """Every object the collector tracks and the untracked ones reachable from them (strings,
    bytes, numbers, and the tuples and dicts of those, which the collector stops tracking, with
    what they hold): id -> object."""
    found = {}
    for obj in gc.get_objects():
        found[id(obj)] = obj
    untracked = []
    for obj in list(found.values()):
        for ref in gc.get_referents(obj):
            if id(ref) not in found and not gc.is_tracked(ref):
                found[id(ref)] = ref
                untracked.append(ref)
    while untracked:  # what untracked tuples and dicts hold
        for ref in gc.get_referents(untracked.pop()):
            if id(ref) not in found:
                found[id(ref)] = ref
                untracked.append(ref)
    return found


def _where(obj):
    """Where ``obj`` was allocated (tracemalloc's traceback, when tracing with frames): the two
    innermost frames of this app or a library, as ``file:line``."""
    import tracemalloc

    if not tracemalloc.is_tracing():
        return "?"
    tb = tracemalloc.get_object_traceback(obj)
    if tb is None:
        return "before tracing"
    return _frames(tb, 2)


#: The repository, cut from the file names the probe prints.
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _frames(tb, n=3):
    """The ``n`` innermost frames of ``tb`` in this app, a library or the standard library, as
    ``file:line`` (the innermost frame when none is)."""
    frames = [f for f in reversed(list(tb)) if f.filename.startswith(ROOT)
              or "site-packages" in f.filename or "/lib/python" in f.filename][:n] or [tb[-1]]
    return " < ".join(f"{_short(f.filename)}:{f.lineno}" for f in frames)


def _short(filename):
    if filename.startswith(ROOT):
        return filename[len(ROOT):]
    return filename.split("site-packages/")[-1].rsplit("/lib/", 1)[-1]


#: Objects shown (their start) per group.
SAMPLES = 12


def _sample(obj):
    """The start of ``obj``'s repr, and what refers to it (types), to tell one pinning object
    from another."""
    try:
        text = repr(obj)[:100]
    except Exception as exc:  # noqa: BLE001 - a probe names what it can
        text = f"<repr failed: {type(exc).__name__}>"
    owners = [type(r).__qualname__ for r in gc.get_referrers(obj)][:4]
    return f"{text} <- {owners}"


def pinning(objects):
    """The objects alive now on pages that held none before the sockets opened (the first
    probe): how many such pages, how many hold SPARSE objects or fewer; and per (type, where
    allocated), the objects and the pages they are on. What keeps freed memory resident is the
    pages whose only live objects are a few long-lived ones."""
    before = _before.get("buckets")
    if before is None:
        return {}
    per_bucket = {}
    for oid, obj in objects.items():
        bucket = oid >> BUCKET
        if bucket not in before:
            per_bucket.setdefault(bucket, []).append(obj)
    groups = {}
    for bucket, objs in per_bucket.items():
        for obj in objs:
            key = f"{type(obj).__qualname__} @ {_where(obj)}"
            entry = groups.setdefault(key, [0, set(), 0, []])
            entry[0] += 1
            entry[1].add(bucket)
            if len(objs) <= SPARSE:
                entry[2] += 1
            if len(entry[3]) < SAMPLES:
                entry[3].append(_sample(obj))
    top = sorted(groups.items(), key=lambda kv: -len(kv[1][1]))[:40]
    return {"new_pages_with_live_objects": len(per_bucket),
            "sparse_pages": sum(1 for objs in per_bucket.values() if len(objs) <= SPARSE),
            "groups": [{"what": k, "objects": n, "pages": len(b), "in_sparse_pages": sparse,
                        "samples": samples} for k, (n, b, sparse, samples) in top]}


def _owners(obj):
    owners = []
    for ref in gc.get_referrers(obj):
        if type(ref) is dict:
            for key, value in list(ref.items())[:10000]:
                if value is obj:
                    holders = [type(h).__qualname__ for h in gc.get_referrers(ref)
                               if getattr(h, "__dict__", None) is ref][:1]
                    owners.append(f"{'.'.join(holders) or 'dict'}[{key!r:.60}]")
                    break
        elif len(owners) < 3:
            owners.append(type(ref).__qualname__)
    return owners[:4]


def big_containers(limit=1000):
    """Sets, dicts and lists of more than ``limit`` entries, with what holds them: the owner's
    type and, for an object's ``__dict__``, the attribute (to tell a registry that outlived its
    sockets from a cache)."""
    found = []
    for obj in gc.get_objects():
        if type(obj) not in (set, dict, list) or len(obj) <= limit:
            continue
        sample = next(iter(obj), None)
        found.append({"type": type(obj).__name__, "len": len(obj), "owners": _owners(obj),
                      "sample": repr(sample)[:80]})
    return sorted(found, key=lambda f: -f["len"])[:20]


def hollow_containers(min_waste=32 * 1024):
    """Dicts, sets and lists much bigger than their entries need (a dict keeps the table it
    grew to at the peak however many entries leave it): each with the bytes a copy would save
    and its owners. Dicts of plain values are not tracked by the collector, so the referents
    of tracked objects, and the values of those that are dicts, are searched too."""
    seen, found, waste = set(), [], 0
    kinds = (dict, set, list)
    tracked = gc.get_objects()
    candidates = [o for o in tracked if type(o) in kinds]
    for obj in tracked:  # and one level down: a collection untracks an empty dict
        for ref in gc.get_referents(obj):
            if type(ref) in kinds:
                candidates.append(ref)
                if type(ref) is dict:
                    candidates.extend(r for r in ref.values() if type(r) in kinds)
    del tracked
    for obj in candidates:
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        size = sys.getsizeof(obj)
        if size < min_waste:
            continue
        saved = size - sys.getsizeof(type(obj)(obj))
        if saved >= min_waste:
            waste += saved
            sample = next(iter(obj), None)
            found.append({"type": type(obj).__name__, "len": len(obj), "bytes": size,
                          "saved": saved, "owners": _owners(obj), "sample": repr(sample)[:80]})
    found.sort(key=lambda f: -f["saved"])
    return {"total_saved": waste, "containers": found[:25]}


def _rss_kb():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def trim_gives_back():
    """KB of resident memory one more ``malloc_trim(0)`` hands back now (after a full
    collection): free memory the process's last trim did not see (freed after it)."""
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return None
    gc.collect()
    before = _rss_kb()
    libc.malloc_trim(0)
    return before - _rss_kb()


def traced_growth(limit=40):
    """Under ``PYTHONTRACEMALLOC=N`` with ``A2UI_MEMPROBE_TRACEDIFF``: the first report keeps a
    snapshot; later ones list the tracebacks whose live memory grew most since (what the
    sockets left alive, where it was allocated)."""
    import tracemalloc

    if not tracemalloc.is_tracing():
        return None
    snap = tracemalloc.take_snapshot().filter_traces(
        [tracemalloc.Filter(False, tracemalloc.__file__), tracemalloc.Filter(False, __file__)])
    first = _before.get("snapshot")
    if first is None:
        _before["snapshot"] = snap
        return None
    diff = [d for d in snap.compare_to(first, "traceback") if d.size_diff > 0]
    total = sum(d.size_diff for d in diff)
    return {"grown_kb": total / 1024,
            "top": [{"kb": d.size_diff / 1024, "blocks": d.count_diff, "where": _frames(d.traceback)}
                    for d in diff[:limit]]}


def report(label=""):
    trimmed = trim_gives_back() if os.environ.get("A2UI_MEMPROBE_TRIM") else None
    gc.collect()
    types = {}
    for obj in gc.get_objects():
        key = f"{type(obj).__module__}.{type(obj).__qualname__}"
        types[key] = types.get(key, 0) + 1
    out = {"label": label, "at": time.time(), "malloc": mallinfo(), "objects": types,
           "registries": registries(), "gc_objects": sum(types.values()),
           "pymalloc": pymalloc(), "big": big_containers(), "hollow": hollow_containers(),
           "mappings": mappings(), "threads": len(os.listdir("/proc/self/task")),
           "trim_gave_back_kb": trimmed}
    if os.environ.get("A2UI_MEMPROBE_TRACEDIFF"):
        out["traced_growth"] = traced_growth()
    if os.environ.get("A2UI_MEMPROBE_PINNING"):
        objects = live_objects()
        if "buckets" not in _before:
            _before["buckets"] = {oid >> BUCKET for oid in objects}
        else:
            out["pinning"] = pinning(objects)
        del objects
    return out


def _on_signal(signum, frame):
    with open(os.environ["A2UI_MEMPROBE"], "a") as out:
        out.write(json.dumps(report()) + "\n")


def install():
    if os.environ.get("A2UI_MEMPROBE"):
        signal.signal(signal.SIGUSR1, _on_signal)
