"""Row locks taken to serialize work (an agent's sessions, a session's state) are FOR NO KEY
UPDATE on PostgreSQL: a transaction that wrote a row referring to the locked one (an audit
event naming the agent) checks that reference at its COMMIT (Django's foreign keys are
deferred) with a key-share lock, which FOR UPDATE blocks. With the audit chain's head locked
by the committing transaction and wanted by the one holding the agent (admission audits the
session it opens), that was a deadlock: concurrent AG-UI 1.0 first runs answered HTTP 500."""

import threading
import time

import pytest
from django.db import close_old_connections, connection, transaction

from a2ui.compliance import audit
from a2ui.sessions import admission

pytestmark = pytest.mark.django_db(transaction=True)


def test_an_audit_naming_the_agent_commits_while_admission_holds_the_agent(
        user, agent, stream_token):
    if connection.vendor != "postgresql":
        pytest.skip("row locks and their deadlocks are PostgreSQL's (SQLite locks the database)")
    from a2ui.models import StreamToken

    token = StreamToken.objects.get(user=user)
    errors, opened = [], []
    audited = threading.Event()

    def auditor():  # holds the chain head, then commits a reference to the agent
        try:
            with transaction.atomic():
                audit.record("test.event", agent=agent)
                audited.set()
                time.sleep(1.0)  # meanwhile admission locks the agent, then waits on the head
        except Exception as exc:
            errors.append(exc)
        finally:
            close_old_connections()

    def admitter():
        audited.wait(10)
        try:
            opened.append(admission.admit(token, {"name": "t"}, {}))
        except Exception as exc:
            errors.append(exc)
        finally:
            close_old_connections()

    workers = [threading.Thread(target=auditor), threading.Thread(target=admitter)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(30)
    assert errors == []
    assert opened and opened[0].session is not None
