"""The audit trail stores what a client sent, NUL included (PostgreSQL's JSON cannot)."""

import pytest

from a2ui.compliance import audit
from a2ui.models import AuditEvent

pytestmark = pytest.mark.django_db


def test_nul_is_taken_out_of_details_and_target():
    audit.record("x", target=("t", "a\x00b"), details={
        "k\x00": "v\x00", "list": ["\x00", {"n": "a\x00"}], "n": 1, "none": None})
    row = AuditEvent.objects.get(action="x")
    assert row.target_id == "ab"
    assert row.details == {"k": "v", "list": ["", {"n": "a"}], "n": 1, "none": None}
