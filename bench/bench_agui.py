"""Cost of the AG-UI (seed 003) wire per event, against seed 000's JSON-RPC encoding.

Not a test: run ``python bench/bench_agui.py [--seconds N]``. Single-threaded, no I/O.
Each AG-UI frame carries its own UUID v4 and timestamp (seed 003), so it is built per socket,
where seed 000 encodes an event once for every socket (``encode_cached``). For each session
event it prints the time of

* jsonrpc: ``a2ui.jsonrpc.events.encode(kind, data)`` (one encode, shared by the sockets);
* agui: ``mapping.translate`` + ``protocol.encode`` (validate, envelope, dumps), per socket;

and the ratio agui/jsonrpc; then the parse of a client frame: ``protocol.parse_text`` against
``jsonvalue.loads`` alone (the envelope and event checks on top of the JSON value policy).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from a2ui.agui import mapping  # noqa: E402
from a2ui.agui import protocol as p  # noqa: E402
from a2ui.core.content import jsonvalue  # noqa: E402
from a2ui.core.events import Kind  # noqa: E402
from a2ui.jsonrpc import events as wire  # noqa: E402

EVENTS = {
    "card": (Kind.COMPONENT_RENDERED, {"component_id": "c1", "component_type": "card",
                                       "data": {"title": "Trip", "body": "x" * 200},
                                       "metadata": {"position": "main"}}),
    "table 100 rows": (Kind.COMPONENT_RENDERED, {
        "component_id": "t", "component_type": "table", "data": {
            "headers": [{"key": f"c{i}", "label": f"C{i}"} for i in range(8)],
            "rows": [{f"c{i}": f"r{r}c{i}" for i in range(8)} for r in range(100)]}}),
    "progress": (Kind.PROGRESS, {"task_id": "t", "progress_type": "determinate", "value": 3,
                                 "total": 4, "message": "busy"}),
    "notify": (Kind.NOTIFY, {"level": "info", "title": "Hi", "message": "there"}),
}
CLIENT = json.dumps({"version": "0.1.0", "id": str(uuid.uuid4()),
                     "timestamp": "2026-01-09T12:00:00.000Z", "event": {
                         "type": "USER_ACTION", "action_type": "submit",
                         "component_id": "form_settings",
                         "payload": {"theme": "dark", "language": "en"}}})


def per_call(fn, seconds):
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(100):
            fn()
        n += 100
    return (time.perf_counter() - start) / n


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=1.0)
    seconds = parser.parse_args().seconds
    print(f"{'event':16} {'jsonrpc us':>11} {'agui us':>9} {'ratio':>6}")
    for name, (kind, data) in EVENTS.items():
        base = per_call(lambda k=kind, d=data: wire.encode(k, d), seconds)
        agui = per_call(lambda k=kind, d=data: [p.encode(e) for e in mapping.translate(k, d)],
                        seconds)
        print(f"{name:16} {base * 1e6:11.1f} {agui * 1e6:9.1f} {agui / base:6.2f}")
    base = per_call(lambda: jsonvalue.loads(CLIENT), seconds)
    parse = per_call(lambda: p.parse_text(CLIENT), seconds)
    print(f"{'parse USER_ACTION':16} {base * 1e6:11.1f} {parse * 1e6:9.1f} {parse / base:6.2f}"
          "  (jsonvalue.loads vs parse_text)")


if __name__ == "__main__":
    main()
