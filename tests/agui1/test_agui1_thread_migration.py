"""Migration 0009: live sessions that concurrent first runs of one AG-UI thread opened before
the unique index existed do not stop it from being created: the newest keeps the thread."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.django_db(transaction=True)
BEFORE = [("a2ui", "0008_agentrun")]


def test_duplicate_thread_sessions_are_unnamed_but_the_newest(user, agent):
    from datetime import timedelta

    from django.utils import timezone

    executor = MigrationExecutor(connection)
    leaves = [node for node in executor.loader.graph.leaf_nodes() if node[0] == "a2ui"]
    executor.migrate(BEFORE)
    try:
        Session = executor.loader.project_state(BEFORE).apps.get_model("a2ui", "A2UISessionLog")
        now = timezone.now()

        def make(thread, state="active", age=0):
            return Session.objects.create(
                user_id=user.pk, agent_id=agent.pk, state=state, created_at=now - timedelta(
                    seconds=age), client_info={"protocol": "agui", "agui_thread_id": thread}).pk

        old, older, newest = make("t", age=10), make("t", age=20), make("t", age=1)
        closed, other = make("t", state="closed"), make("u", age=30)
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(leaves)
    from a2ui.models import A2UISessionLog

    def info(pk):
        return A2UISessionLog.objects.get(pk=pk).client_info

    assert info(newest)["agui_thread_id"] == "t"
    for pk in (old, older):
        assert "agui_thread_id" not in info(pk) and info(pk)["agui_thread_id_duplicate"] == "t"
    assert info(closed)["agui_thread_id"] == "t" and info(other)["agui_thread_id"] == "u"
