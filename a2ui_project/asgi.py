"""ASGI entry point of the example project: the app's helper, plus GC tuning for many sockets."""

import gc
import os
import sys

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "a2ui_project.settings")

from a2ui.asgi import get_asgi_application  # noqa: E402

application = get_asgi_application()

# The cyclic garbage collector stops the whole process while it runs; with a thousand sockets a
# full collection takes 100-200 ms, which every socket sees as latency (docs/performance.md).
# Everything loaded so far lives as long as the process: freeze it out of the collector's view,
# and collect less often (young cycles still die young; a full collection comes about every
# 10^8 allocations instead of every 7*10^5). A2UI_GC_THRESHOLD="700,10,10" restores Python's.
gc.collect()
gc.freeze()
gc.set_threshold(
    *(int(n) for n in os.environ.get("A2UI_GC_THRESHOLD", "50000,20,100").split(","))
)

# The event loop shares the interpreter lock with the per-message database threads: each time
# it releases the lock (every socket write, every wait for the next event) a database thread
# may take it and keep it for up to the switch interval, 5 ms by default, before the loop gets
# it back. At 1 ms the soak's p99 roughly halved (docs/performance.md). A2UI_SWITCH_INTERVAL
# (seconds) sets another value; "0.005" restores Python's.
sys.setswitchinterval(float(os.environ.get("A2UI_SWITCH_INTERVAL", "0.001")))
