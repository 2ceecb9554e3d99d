"""Official v0.9 material: schema test vectors, the 30 examples, the contact-form stream."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from a2ui.core.surfaces import (
    ValidationFailed,
    validate_batch,
    validate_client_message,
    validate_server_message,
)

# A copy of the official vectors and examples (Apache-2.0), so no checkout layout can skip them.
OFFICIAL = Path(__file__).resolve().parent / "official"
CASES = OFFICIAL / "test-cases"
# The 30 official examples by name: a missing or renamed file fails its own test
# instead of silently shrinking the parametrization.
EXAMPLE_NAMES = (
    "01_flight-status", "02_email-compose", "03_calendar-day", "04_weather-current",
    "05_product-card", "06_music-player", "07_task-card", "08_user-profile", "09_login-form",
    "10_notification-permission", "11_purchase-complete", "12_chat-message",
    "13_coffee-order", "14_sports-player", "15_account-balance", "16_workout-summary",
    "17_event-detail", "18_track-list", "19_software-purchase", "20_restaurant-card",
    "21_shipping-status", "22_credit-card", "23_step-counter", "24_recipe-card",
    "25_contact-card", "26_podcast-episode", "27_stats-card", "28_countdown-timer",
    "29_movie-card", "30_live-invitation-builder",
)


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


def test_official_files_present() -> None:
    assert len(EXAMPLE_NAMES) == 30
    on_disk = sorted(p.stem for p in (OFFICIAL / "examples").glob("*.json"))
    assert on_disk == list(EXAMPLE_NAMES)  # no extra example escapes the parametrization
    assert len(list(CASES.glob("*.json"))) == 8


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_official_example_accepted(name: str) -> None:
    """Each official example: every message alone, then the stream strictly as a surface."""
    messages = json.loads((OFFICIAL / "examples" / f"{name}.json").read_text())["messages"]
    assert messages
    for i, message in enumerate(messages):
        try:
            validate_server_message(message)
        except ValidationFailed as e:
            pytest.fail(f"{name} message {i} refused: {e!r}")
    try:
        changes = validate_batch({}, messages, strict=True)
    except ValidationFailed as e:
        pytest.fail(f"{name} refused as a stream: {e!r}")
    (state,) = changes.states.values()
    # the snapshot of a strict surface validates strictly as well
    validate_batch({}, state.snapshot_messages(), strict=True)


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
