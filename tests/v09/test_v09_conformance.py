"""Official v0.9 material: schema test vectors, the 30 examples, the contact-form stream."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from a2ui.v09 import (
    ValidationFailed,
    validate_batch,
    validate_client_message,
    validate_server_message,
)

# A copy of the official vectors and examples (Apache-2.0), so no checkout layout can skip them.
OFFICIAL = Path(__file__).resolve().parent / "official"
CASES = OFFICIAL / "test-cases"
EXAMPLES = sorted((OFFICIAL / "examples").glob("*.json"))
assert len(EXAMPLES) == 30 and len(list(CASES.glob("*.json"))) == 8


def _vectors() -> list:
    out = []
    for path in sorted(CASES.glob("*.json")):
        suite = json.loads(path.read_text())
        for i, test in enumerate(suite["tests"]):
            out.append(pytest.param(suite["schema"], test, id=f"{path.stem}-{i}"))
    return out


def _accepts(schema: str, data: dict) -> bool:
    try:
        if schema == "client_to_server.json":
            validate_client_message(data)
        else:
            validate_server_message(data)
    except ValidationFailed:
        return False
    return True


@pytest.mark.parametrize(("schema", "test"), _vectors())
def test_vector(schema: str, test: dict) -> None:
    assert _accepts(schema, test["data"]) is test["valid"], test["description"]


def test_vector_count() -> None:
    assert len(_vectors()) >= 76


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_validates_strictly(path: Path) -> None:
    messages = json.loads(path.read_text())["messages"]
    changes = validate_batch({}, messages, strict=True)
    (state,) = changes.states.values()
    # the snapshot of a strict surface validates strictly as well
    validate_batch({}, state.snapshot_messages(), strict=True)


def test_thirty_examples() -> None:
    assert len(EXAMPLES) == 30


def test_contact_form_stream_matches_its_test_file() -> None:
    expected = json.loads((CASES / "contact_form_example_test.json").read_text())
    lines = (CASES / "contact_form_example.jsonl").read_text().splitlines()
    messages = [json.loads(line) for line in lines if line.strip()]
    everything_valid = all(t["valid"] for t in expected["tests"])
    for test in expected["tests"]:
        assert _accepts(expected["schema"], test["data"]) is test["valid"]
    try:
        changes = validate_batch({}, messages, strict=True)
    except ValidationFailed as e:  # pragma: no cover - failure message
        pytest.fail(f"contact form stream refused: {e!r}")
    assert everything_valid
    assert changes.states == {}  # the stream ends with deleteSurface
    assert [next(k for k in m if k != "version") for m in changes.messages] == [
        "createSurface", "updateComponents", "updateDataModel", "deleteSurface"]
