"""The project's settings for bench/bench_capacity.py's servers: its one person opens thousands
of sessions, so one process may keep as many MCP sessions (``MCP_MAX_SESSIONS_PER_PROCESS``,
5000 by default) and the person may start as many AG-UI 1.0 runs a minute
(``RATE_LIMIT_PER_MINUTE``, 60) as the bench opens, and keep them open
(``AGUI_RUN_TIMEOUT_SECONDS``, 300). The caps are lifted in the environment
(``bench_push.NO_CAPS``)."""

from a2ui_project.settings import *  # noqa: F403

A2UI = {**A2UI, "MCP_MAX_SESSIONS_PER_PROCESS": 100_000,  # noqa: F405
        "RATE_LIMIT_PER_MINUTE": 1_000_000,
        # an AG-UI 1.0 run the agent never answers ends after 300 s: opening 10,000 takes longer
        "AGUI_RUN_TIMEOUT_SECONDS": 3600}

# The process's connection cap is what its descriptor limit allows at two descriptors per
# connection (a2ui.edge: one more for a spooled request body over 100 KB): 9,000 under the hard
# limit of 20,000 a container without CAP_SYS_RESOURCE cannot raise, even as root. An idle
# socket or stream holds one: counted so, 10,000 fit.
import a2ui.edge  # noqa: E402

a2ui.edge.DESCRIPTORS_PER_CONNECTION = 1

# ``bench_capacity.py --probe``: a memory report on SIGUSR1 (bench/memprobe.py).
import memprobe  # noqa: E402

memprobe.install()

# ``A2UI_BENCH_MEMORY_SKIP=step,...``: the collection after a close without the named steps that
# reach into a library's internals (``a2ui.infra.memory.PRIVATE_STEPS``), to measure what each one
# pays (docs/performance.md, "Memory after close: what the collection does").
import os  # noqa: E402

_SKIP = {s for s in os.environ.get("A2UI_BENCH_MEMORY_SKIP", "").split(",") if s}
if _SKIP:
    from a2ui.infra import memory

    _unknown = _SKIP - set(memory.PRIVATE_STEPS)
    if _unknown:
        raise SystemExit(f"A2UI_BENCH_MEMORY_SKIP: no step {', '.join(sorted(_unknown))}; the "
                         f"steps: {', '.join(memory.PRIVATE_STEPS)}")
    for _name in _SKIP:
        del memory.PRIVATE_STEPS[_name]
