"""The background work of a serving process is one list (a2ui.infra.jobs): every periodic task
and flusher thread registered by its module, listed by ``a2ui_jobs``, stopped with the process."""

import io

from django.core.management import call_command

from a2ui.infra import jobs

#: What a serving process runs in the background (docs/architecture.md, "Background jobs").
SERVING = {"agent presence sweep", "housekeeping sweep", "leases refresh", "sequence watch",
           "metrics flush", "replay flush", "metrics tallies flush"}


def test_every_job_of_a_serving_process_is_in_the_one_list():
    out = io.StringIO()
    call_command("a2ui_jobs", stdout=out)
    listed = {name for name, *_ in jobs.registered()}
    assert SERVING <= listed, SERVING - listed
    for name in SERVING:
        assert name in out.getvalue()
    assert {kind for _, kind, _, _ in jobs.registered()} <= {"task", "thread"}


async def test_stopping_flushes_what_each_flusher_holds():
    written = []
    flusher = jobs.Flusher("test flush", lambda: 60.0, lambda: written.append(1),
                           register_now=False)
    jobs.register(flusher)
    try:
        await jobs.stop()
        assert written == [1]
    finally:
        jobs._registry.pop("test flush", None)
