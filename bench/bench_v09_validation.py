"""Messages/s of the A2UI v0.9 validator (jsonschema-rs) versus the old hand-written compiler.

Not a test: run ``python bench/bench_v09_validation.py [--seconds N] [--baseline-ref REF]``.
All rates are over the 90 messages of the 30 official examples, in the same run
(median of ``--rounds`` interleaved rounds, so machine load hits all alike):

* new, full: ``validate_batch({}, example, strict=True)`` per example: envelope,
  catalog (jsonschema-rs), post-checks, graph rules, surface state, URL policy.
* new, stateless: ``validate_server_message`` per message.
* old, full / old, stateless: the same calls on the ``a2ui.v09`` package as it was
  before the compiler was deleted (the baseline). It is read with ``git show`` from
  ``REF`` (default: the parent of the commit that deleted ``a2ui/v09/compiler.py``)
  into a temporary package, so the baseline is the exact old code, not a copy (only its
  ``from ..protocol`` imports are pointed at today's ``a2ui.protocol``).
* jsonschema-rs alone: the official ``server_to_client.json`` with the common types
  and the basic catalog in its registry, formats checked (the library's raw speed;
  no graph rules, no policies).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import jsonschema_rs  # noqa: E402

from a2ui.core.surfaces import validate_batch, validate_server_message  # noqa: E402

PACKAGED = ROOT / "a2ui" / "core" / "surfaces"
PLACEHOLDER = "https://a2ui.org/specification/v0_9/catalog.json"
EXAMPLES = ROOT / "tests" / "v09" / "official" / "examples"
BASELINE_PACKAGE = "a2ui_v09_baseline"


def load_examples() -> list[list[dict]]:
    return [json.loads(p.read_text())["messages"] for p in sorted(EXAMPLES.glob("*.json"))]


def git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], check=True, capture_output=True,
                          text=True).stdout


def default_baseline_ref() -> str:
    deleted_in = git("rev-list", "-n1", "HEAD", "--", "a2ui/v09/compiler.py").strip()
    if not deleted_in:
        raise SystemExit("cannot find the commit that deleted a2ui/v09/compiler.py; "
                         "pass --baseline-ref")
    return deleted_in + "^"


def import_baseline(ref: str, into: Path):
    """Materialize a2ui/v09 at ``ref`` as the package ``a2ui_v09_baseline``."""
    package = into / BASELINE_PACKAGE
    files = git("ls-tree", "-r", "--name-only", ref, "a2ui/v09/").split()
    if "a2ui/v09/compiler.py" not in files:
        raise SystemExit(f"{ref} has no a2ui/v09/compiler.py: not the old validator")
    for name in files:
        if not name.endswith((".py", ".json")):
            continue
        target = package / Path(name).relative_to("a2ui/v09")
        target.parent.mkdir(parents=True, exist_ok=True)
        text = git("show", f"{ref}:{name}")
        target.write_text(text.replace("from ..protocol", "from a2ui.protocol"))
    sys.path.insert(0, str(into))
    return importlib.import_module(BASELINE_PACKAGE)


def jsonschema_rs_validator():
    def doc(folder: str, name: str) -> dict:
        return json.loads((PACKAGED / folder / name).read_text())

    server = doc("schemas", "server_to_client.json")
    common = doc("schemas", "common_types.json")
    catalog = doc("catalogs", "basic_catalog.json")
    placeholder = {**catalog, "$id": PLACEHOLDER}
    registry = jsonschema_rs.Registry(
        [(common["$id"], common), (catalog["$id"], catalog), (PLACEHOLDER, placeholder)],
        draft=jsonschema_rs.Draft202012)
    return jsonschema_rs.Draft202012Validator(server, registry=registry, validate_formats=True)


def rate(run: Callable[[], None], per_run: int, seconds: float) -> float:
    runs = 0
    start = time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        run()
        runs += 1
    return runs * per_run / elapsed


def measure(workloads: dict[str, Callable[[], None]], per_run: int, seconds: float,
            rounds: int) -> dict[str, float]:
    """Median msg/s per workload over ``rounds`` interleaved rounds (fair under load)."""
    for run in workloads.values():
        run()  # warm up (and fail loudly if invalid)
    samples: dict[str, list[float]] = {name: [] for name in workloads}
    for _ in range(rounds):
        for name, run in workloads.items():
            samples[name].append(rate(run, per_run, seconds / rounds))
    return {name: statistics.median(values) for name, values in samples.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="per workload")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--baseline-ref", default=None,
                        help="git ref whose a2ui/v09 still has compiler.py")
    args = parser.parse_args()
    examples = load_examples()
    messages = [m for ex in examples for m in ex]
    ref = args.baseline_ref or default_baseline_ref()
    with tempfile.TemporaryDirectory() as tmp:
        old = import_baseline(ref, Path(tmp))
        raw = jsonschema_rs_validator()

        def runner(batch, single) -> tuple[Callable[[], None], Callable[[], None]]:
            def full() -> None:
                for ex in examples:
                    batch({}, ex, strict=True)

            def stateless() -> None:
                for m in messages:
                    single(m)

            return full, stateless

        new_full, new_stateless = runner(validate_batch, validate_server_message)
        old_full, old_stateless = runner(old.validate_batch, old.validate_server_message)

        def library() -> None:
            for m in messages:
                raw.validate(m)

        results = measure({
            "new, full (validate_batch strict)": new_full,
            "old, full (validate_batch strict)": old_full,
            "new, stateless (validate_server_message)": new_stateless,
            "old, stateless (validate_server_message)": old_stateless,
            "jsonschema-rs alone (official schemas)": library,
        }, len(messages), args.seconds, args.rounds)
    print(f"{len(examples)} examples, {len(messages)} messages, Python {sys.version.split()[0]}, "
          f"jsonschema-rs {importlib.metadata.version('jsonschema-rs')}, baseline {ref}")
    for name, value in results.items():
        print(f"{name:44s} {value:10,.0f} msg/s")
    full = results["new, full (validate_batch strict)"] / results["old, full (validate_batch strict)"]
    single = (results["new, stateless (validate_server_message)"]
              / results["old, stateless (validate_server_message)"])
    print(f"ratio new/old: full {full:.2f}x, stateless {single:.2f}x")


if __name__ == "__main__":
    main()
