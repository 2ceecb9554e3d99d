"""Cost of the JSON value policy at the edge: ``jsonvalue.loads`` versus plain ``json.loads``.

Not a test: run ``python bench/bench_jsonvalue.py [--seconds N]``. A micro-benchmark of the
parse step alone, single-threaded, no I/O. For each frame it prints the time per parse of

* plain: ``json.loads(text, parse_constant=...)`` (what the edges did before issue 10);
* policy: ``a2ui.core.content.jsonvalue.loads(text)`` (the fast path: a UTF-8 encode, one
  ``translate`` and two substring searches, a regex only if the text has a ``\\u`` escape, then
  the same C decoder; the slow path: number hooks when the text has a 16-digit run or a 3-digit
  exponent, and a walk only when something was refused);

the ratio policy/plain, and for JSON-RPC frames the time of ``validate_params`` (what the
socket does next with the frame) and the policy's extra cost as a share of parse + validate.
Frames: a small ui.render card, a ui.notify, a 100-row and a
~1 MB table, the same table with every cell a 16-digit id (forces the slow path), and a
v0.9 batch.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from a2ui.core.content import jsonvalue  # noqa: E402
from a2ui.core.content.methods import validate_params  # noqa: E402


def _reject(name: str) -> None:
    raise ValueError(name)


def plain(text: str):
    return json.loads(text, parse_constant=_reject)


def rpc(method: str, params: dict) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})


def table(rows: int, cell) -> str:
    return rpc("ui.render", {"session_id": "5b1c0e52-56b4-4f7e-9c43-5c4d36b7a1f0",
                             "component_id": "t", "component_type": "table", "data": {
                                 "headers": [{"key": f"c{i}", "label": f"Col {i}"}
                                             for i in range(8)],
                                 "rows": [{f"c{i}": cell(r, i) for i in range(8)}
                                          for r in range(rows)]}})


def frames() -> dict[str, str]:
    v09 = [{"version": "v0.9", "updateDataModel": {"surfaceId": "s1", "path": f"/r/{i}",
                                                   "value": {"name": f"row {i}", "n": i * 1.5}}}
           for i in range(200)]
    return {
        "card (small)": rpc("ui.render", {
            "session_id": "5b1c0e52-56b4-4f7e-9c43-5c4d36b7a1f0", "component_id": "c1",
            "component_type": "card", "data": {"title": "Welcome", "description": "Ready."}}),
        "notify": rpc("ui.notify", {"session_id": "5b1c0e52-56b4-4f7e-9c43-5c4d36b7a1f0",
                                    "level": "info", "title": "Done", "duration_ms": 3000}),
        "table 100 rows": table(100, lambda r, i: f"cell {r}.{i} é" if i % 2 else r * i),
        "table ~1 MB": table(9000, lambda r, i: f"cell {r}.{i} é" if i % 2 else r * i + 0.5),
        "table 16-digit ids (slow path)": table(
            2000, lambda r, i: 1_000_000_000_000_000 + r * 8 + i),
        "v0.9 batch 200 msgs": json.dumps(v09),
    }


ROUNDS = 10


def per_call(fn, text: str, seconds: float) -> float:
    fn(text)
    n, start = 0, time.process_time()
    deadline = start + seconds
    while True:
        fn(text)
        n += 1
        now = time.process_time()
        if now >= deadline:
            return (now - start) / n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=4.0, help="per frame")
    args = parser.parse_args()
    print(f"{'frame':34} {'bytes':>9} {'plain':>11} {'policy':>11} {'ratio':>6} "
          f"{'validate':>11} {'overhead':>8}")
    for name, text in frames().items():
        assert jsonvalue.loads(text) == plain(text)
        doc = plain(text)
        validate = None
        if isinstance(doc, dict) and "method" in doc:
            validate = min(per_call(lambda _t, d=doc: validate_params(d["method"], d["params"]),
                                    text, args.seconds / ROUNDS / 2) for _ in range(3))
        # alternate in short rounds and keep each side's best: neighbours on a shared machine
        # slow down whole rounds, and the minimum is the least disturbed
        a = b = float("inf")
        for _ in range(ROUNDS):
            a = min(a, per_call(plain, text, args.seconds / ROUNDS / 2))
            b = min(b, per_call(jsonvalue.loads, text, args.seconds / ROUNDS / 2))
        # overhead: what the policy adds, as a share of parse + validate_params (seed-000 frames)
        extra = (f"{validate * 1e6:>9.1f}us {(b - a) / (a + validate):>8.1%}"
                 if validate is not None else "")
        print(f"{name:34} {len(text):>9,} {a * 1e6:>9.1f}us {b * 1e6:>9.1f}us {b / a:>6.2f} "
              f"{extra}")


if __name__ == "__main__":
    main()
