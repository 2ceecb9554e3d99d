"""The person's ``error`` tool carries ``path``: A2UI v0.9 requires it with VALIDATION_FAILED,
and the tool dropped it, so a host could never report a validation failure (-32602 "Missing
required property 'path'"; found by the valid templates of tests/fuzz/test_fuzz_mcp.py)."""

import pytest

from a2ui.core.surfaces.client import validate_client_message
from a2ui.core.surfaces.errors import Invalid, ValidationFailed
from a2ui.mcp import tools


def test_validation_failed_with_its_path_is_a_valid_message():
    arguments = {"code": "VALIDATION_FAILED", "message": "bad", "surfaceId": "s1",
                 "path": "/components/0"}
    message = tools.client_error(arguments)
    assert message["error"]["path"] == "/components/0"
    validate_client_message(message)
    assert "path" in tools.PERSON_TOOLS["error"][1]["properties"]


def test_other_codes_and_a_missing_path():
    validate_client_message(tools.client_error({"code": "RENDER_FAILED", "message": "m",
                                                "surfaceId": "s1"}))
    with pytest.raises((Invalid, ValidationFailed)):
        validate_client_message(tools.client_error({"code": "VALIDATION_FAILED",
                                                    "message": "m", "surfaceId": "s1"}))
