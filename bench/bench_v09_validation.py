"""Messages/s of our A2UI v0.9 validator versus plain jsonschema on the 30 official examples.

Not a test: run ``python bench/bench_v09_validation.py [--seconds N]``.

* ours (full): ``validate_batch({}, example, strict=True)`` per example — envelope,
  catalog, graph rules, surface state, URL policy: everything we enforce.
* ours (stateless): ``validate_server_message`` per message (schema-level checks).
* jsonschema: ``Draft202012Validator`` for the official server_to_client.json,
  with a ``referencing`` registry holding common_types.json and the basic catalog
  (also under the ``catalog.json`` placeholder); no format checking.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from a2ui.v09 import validate_batch, validate_server_message  # noqa: E402

SHARED = ROOT.parent / "shared" / "a2ui-v0.9"
PACKAGED = ROOT / "a2ui" / "v09"
PLACEHOLDER = "https://a2ui.org/specification/v0_9/catalog.json"


def load_examples() -> list[list[dict]]:
    folder = SHARED / "catalogs" / "basic" / "examples"
    return [json.loads(p.read_text())["messages"] for p in sorted(folder.glob("*.json"))]


def schema_file(name: str) -> dict:
    shared = SHARED / "json" / name
    path = shared if shared.exists() else PACKAGED / "schemas" / name
    return json.loads(path.read_text())


def catalog_file() -> dict:
    shared = SHARED / "catalogs" / "basic" / "catalog.json"
    path = shared if shared.exists() else PACKAGED / "catalogs" / "basic_catalog.json"
    return json.loads(path.read_text())


def jsonschema_validator():
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    server = schema_file("server_to_client.json")
    common = schema_file("common_types.json")
    catalog = catalog_file()
    registry = Registry().with_resources([
        (server["$id"], Resource.from_contents(server, DRAFT202012)),
        (common["$id"], Resource.from_contents(common, DRAFT202012)),
        (catalog["$id"], Resource.from_contents(catalog, DRAFT202012)),
        (PLACEHOLDER, Resource.from_contents(catalog, DRAFT202012)),
    ])
    return Draft202012Validator(server, registry=registry)


def rate(run: Callable[[], None], per_run: int, seconds: float) -> float:
    run()  # warm up (and fail loudly if invalid)
    runs = 0
    start = time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        run()
        runs += 1
    return runs * per_run / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args()
    examples = load_examples()
    messages = [m for ex in examples for m in ex]
    validator = jsonschema_validator()

    def ours_full() -> None:
        for ex in examples:
            validate_batch({}, ex, strict=True)

    def ours_stateless() -> None:
        for m in messages:
            validate_server_message(m)

    def plain_jsonschema() -> None:
        for m in messages:
            validator.validate(m)

    full = rate(ours_full, len(messages), args.seconds)
    stateless = rate(ours_stateless, len(messages), args.seconds)
    reference = rate(plain_jsonschema, len(messages), args.seconds)
    print(f"{len(examples)} examples, {len(messages)} messages, Python {sys.version.split()[0]}")
    print(f"ours, full (validate_batch strict):     {full:12,.0f} msg/s")
    print(f"ours, stateless (validate_server_message): {stateless:9,.0f} msg/s")
    print(f"jsonschema Draft 2020-12 (official schemas): {reference:8,.0f} msg/s")
    print(f"ratio full/jsonschema: {full / reference:.1f}x; "
          f"stateless/jsonschema: {stateless / reference:.1f}x")


if __name__ == "__main__":
    main()
