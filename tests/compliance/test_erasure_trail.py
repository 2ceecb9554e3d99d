"""Tier 1: the audit trail keeps its meaning through an erasure: a redaction is valid only as
named by a chained ``person.erase``, operators' events keep their operator, dry runs are
audited as such; the head's hash and a NULL ``seq`` are named by verify."""

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

from a2ui.compliance import audit
from a2ui.compliance import chain as auditchain
from a2ui.models import AuditChainHead, AuditEvent
from a2ui.push import revocation
from tests.compliance.test_person import SECRET, make_person

pytestmark = pytest.mark.django_db
T = AuditEvent._meta.db_table


def sql(statement, params=()):
    with connection.cursor() as cursor:
        cursor.execute(statement, params)


def broken(*args):
    with pytest.raises(CommandError) as info:
        call_command("a2ui_audit", "verify", *args, stdout=StringIO())
    return str(info.value)


@pytest.fixture
def officer(db):
    from django.contrib.auth import get_user_model

    return get_user_model().objects.create_user("officer", "o@example.com", "pw-officer-123",
                                                is_staff=True)


@pytest.fixture
def zoe(agent, officer):
    user, session = make_person("zoe-person", agent, SECRET)
    # an officer's own events about her: they stay the officer's after her erasure
    audit.record("session.replay", actor=officer, session_id=session.session_id,
                 details={"at": 3, "note": SECRET})
    audit.record("session.terminate", actor=officer, target=session,
                 session_id=session.session_id, details={"reason": "x"})
    audit.record("token.revoke", actor=officer, target=("streamtoken", "j1"),
                 details={"user_id": user.pk})
    return user, session


def test_operators_events_keep_their_operator_after_an_erasure(zoe, officer):
    user, session = zoe
    revocation.erase_person(user, actor=officer)
    for action in ("session.replay", "session.terminate", "token.revoke"):
        # the officer's, and the token revocation the erasure itself did in her name
        for event in AuditEvent.objects.filter(action=action):
            assert (event.actor_label, event.actor_id) == ("user:officer", officer.pk), action
            assert (event.target_id, event.details) == ("", {"redacted": True})
            assert event.redacted_at is not None
    # hers are hers no longer
    mine = AuditEvent.objects.get(action="session.open")
    assert (mine.actor_label, mine.actor_id, mine.details) == ("erased", None,
                                                               {"redacted": True})
    erase = AuditEvent.objects.get(action="person.erase")
    assert erase.actor_label == "user:officer"
    named = erase.details["redacted"]
    assert sum(b - a + 1 for a, b in named["seqs"]) == erase.details["counts"]["audit events"]
    assert set(named["actors"].values()) == {"user:officer", "agent:demo-agent", "system"}
    result = auditchain.verify()
    assert result.ok, result.problems
    assert SECRET not in json.dumps(list(AuditEvent.objects.values("details", "target_id")))


def test_a_dry_run_is_audited_as_such(zoe):
    user, _ = zoe
    revocation.erase_person(user, dry_run=True)
    event = AuditEvent.objects.get(target_type="user", target_id=str(user.pk))
    assert event.action == "person.erase.dry_run" and event.details["dry_run"] is True
    assert not AuditEvent.objects.filter(action="person.erase").exists()


@pytest.mark.parametrize("actor", ["erased", "user:officer"])
def test_a_forged_redaction_fails_verify_with_or_without_a_checkpoint(zoe, tmp_path, actor):
    user, _ = zoe
    revocation.erase_person(user)
    other = audit.record("agent.create", details={"name": "kept"})
    cp = tmp_path / "cp.json"
    call_command("a2ui_audit", "checkpoint", "--out", str(cp), stdout=StringIO())
    assert auditchain.verify().ok
    # an UPDATE that marks an event nobody erased as redacted
    sql(f"UPDATE {T} SET actor_label = %s, target_id = '', details = %s, redacted_at = at "
        f"WHERE id = %s", [actor, json.dumps({"redacted": True}), other.pk])
    for args in ((), ("--checkpoint", str(cp))):
        problem = broken(*args)
        assert f"seq {other.seq} (id {other.pk}): marked erased but no person.erase event " \
               f"names it" in problem, problem


def test_an_erased_events_kept_actor_cannot_be_changed(zoe, officer):
    user, _ = zoe
    revocation.erase_person(user, actor=officer)
    event = AuditEvent.objects.get(action="session.replay")
    sql(f"UPDATE {T} SET actor_label = 'user:someone-else' WHERE id = %s", [event.pk])
    assert "but its erasure kept 'user:officer'" in broken()
    sql(f"UPDATE {T} SET actor_label = 'erased' WHERE id = %s", [event.pk])
    assert "but its erasure kept 'user:officer'" in broken()


def test_rewriting_only_the_heads_hash_fails_verify(zoe):
    audit.record("agent.create", details={})
    assert auditchain.verify().ok
    AuditChainHead.objects.filter(site="default").update(hash="ab" * 32)
    assert "the chain head's hash differs from the hash of the newest event" in broken()


def test_a_null_seq_is_one_bad_row_of_its_site(zoe):
    with override_site("other"):
        audit.record("agent.create", details={"site": "other"})
        audit.record("agent.create", details={"site": "other"})
    victim = AuditEvent.objects.filter(site="default").order_by("seq")[2]
    sql(f"UPDATE {T} SET seq = NULL WHERE id = %s", [victim.pk])
    problems = auditchain.verify().problems
    assert len(problems) == 1 and problems[0].startswith(f"id {victim.pk}: no seq"), problems
    assert "1 such in site 'default'" in problems[0]
    assert auditchain.verify("other").ok  # another site is not concerned


def override_site(name):
    from django.conf import settings
    from django.test import override_settings

    return override_settings(A2UI={**(getattr(settings, "A2UI", None) or {}),
                                   "AUDIT_SITE": name})
