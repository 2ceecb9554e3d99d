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
# reach into a library's private tables (a2ui.infra.memory), to measure what each one pays.
import os  # noqa: E402

_SKIP = {s for s in os.environ.get("A2UI_BENCH_MEMORY_SKIP", "").split(",") if s}
if _SKIP:
    import asyncio
    import sys
    import types
    import weakref

    from a2ui.infra import memory

    def _step_tables():
        found = {}
        if "asyncio" in _SKIP:
            loop = asyncio.get_running_loop()
            found["asyncio"] = [asyncio.tasks._all_tasks.data, loop._selector._fd_to_key]
        if "anyio" in _SKIP:
            anyio = sys.modules.get("anyio._backends._asyncio")
            found["anyio"] = [getattr(getattr(anyio, "_task_states", None), "data", None)]
        if "twisted" in _SKIP:
            reactor = sys.modules.get("twisted.internet.reactor")
            found["twisted"] = [getattr(reactor, "_readers", None),
                                getattr(reactor, "_writers", None)]
        if "weakref" in _SKIP:
            found["weakref"] = [weakref.finalize._registry]
        return {id(t) for tables in found.values() for t in tables if t is not None}

    def _owner_skipped(owner):
        from a2ui.layer import PubSubChannelLayer
        from a2ui.mcp.manager import SessionManager
        return (("channels_redis" in _SKIP and isinstance(owner, PubSubChannelLayer))
                or ("mcp" in _SKIP and isinstance(owner, SessionManager)))

    def _shrink_registries():
        skipped = _step_tables()
        for ref in list(memory.REGISTRIES):
            containers = ref()
            if containers is None or _owner_skipped(getattr(containers, "__self__", None)):
                continue
            for container in containers():
                if isinstance(container, dict | set) and id(container) not in skipped:
                    memory.shrink(container)

    memory.shrink_registries = _shrink_registries
    if "psycopg" in _SKIP:
        memory.forget_parsed_statements = lambda: None
    if "typecache" in _SKIP:
        memory.sys = types.SimpleNamespace(modules=sys.modules, _clear_type_cache=lambda: None)
