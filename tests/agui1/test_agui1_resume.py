"""Resuming a run whose stream broke off (docs/protocol-agui.md, "Resuming a run"), in
process: every event has an id; a client back with ``Last-Event-ID`` gets the rest of the run
in order, each event once (whether the run still runs or ended meanwhile); history that is
gone is said (RUN_ERROR ``RESUME_UNAVAILABLE``, the run ended so the thread's next run starts
from the session's state), never skipped; a run nobody came back to ends after
``AGUI_RESUME_SECONDS``, and gives way at once to a new run of the thread."""

import asyncio
import json

import pytest
from ag_ui_validate.pytest_plugin import validate_agui
from channels.db import database_sync_to_async
from django.test import AsyncClient

from a2ui import agents
from a2ui.models import A2UISessionLog, AgentRun
from a2ui.runs import log as runlog
from tests.agui1.sse import URL, Run, issue, post, start

pytestmark = pytest.mark.django_db(transaction=True)


async def back(token, run_id, after, thread="t1"):
    """The response to a client coming back to ``run_id`` after event ``after``."""
    body = {"threadId": thread, "runId": run_id, "messages": []}
    return await AsyncClient().post(URL, json.dumps(body), content_type="application/json",
                                    headers={"Authorization": f"Bearer {token}",
                                             "Last-Event-ID": str(after)})


@database_sync_to_async
def session_of(run_id):
    return str(AgentRun.objects.get(run_id=run_id).session_id)


@database_sync_to_async
def row(run_id):
    return AgentRun.objects.filter(run_id=run_id).values("status", "outcome").get()


@database_sync_to_async
def run_count():
    return AgentRun.objects.count()


async def settled(run_id, status, timeout=5):
    for _ in range(int(timeout * 50)):
        found = await row(run_id)
        if found["status"] == status:
            return found
        await asyncio.sleep(0.02)
    raise AssertionError(f"{run_id}: {found}")


async def take(run, n):
    return [await run.next() for _ in range(n)]


def clean(events):
    """The stream as a client put it together passes ag-ui-validate: no error or warning."""
    report = validate_agui(events, features=["agentic-chat", "shared-state",
                                              "agentic-generative-ui"])
    bad = [(d.rule, d.message) for d in report.diagnostics if d.severity in ("error", "warning")]
    assert not bad, bad


async def forget(sid, run_id, number=None):
    """Redis (or the process) loses the run's log, or only frame ``number`` of it."""
    key, _, _ = runlog._keys(sid, run_id)
    redis = runlog._redis()
    if redis is None:
        entry = runlog._local_logs[key]
        if number is None:
            del runlog._local_logs[key]
        else:
            entry["entries"] = [e for e in entry["entries"] if e[0] != number]
    elif number is None:
        await redis.execute(("DEL", key))
    else:
        await redis.execute(("XDEL", key, f"{number}-0"))


async def test_a_client_back_mid_run_gets_the_rest_in_order_and_once(user, agent):
    token = await issue(user, agent)
    run = await start(token, "r1")
    seen = await take(run, 2)
    sid = await session_of("r1")
    await agents.anotify(agent, sid, "one")
    seen += await take(run, 3)
    assert run.ids == [1, 2, 3, 4, 5]  # every event has its id, in order
    await run.close()  # the stream broke off after event 5; the run goes on without it

    await agents.anotify(agent, sid, "two")
    await agents.aprogress(agent, sid, "work", value=1, total=2)
    assert (await row("r1"))["status"] == AgentRun.Status.RUNNING
    again = Run(await back(token, "r1", 5))
    missed = await take(again, 5)
    assert [e["type"] for e in missed] == [
        "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "STEP_STARTED",
        "ACTIVITY_SNAPSHOT"]
    assert missed[1]["delta"] == "two"
    # Live from here on: the same stream carries what the agent does next.
    await agents.aprogress(agent, sid, "work", value=2, total=2)
    await agents.afinish_run(agent, sid, "r1", {"ok": True})
    rest = missed + await again.rest()
    assert [e["type"] for e in rest[5:]] == ["ACTIVITY_SNAPSHOT", "STEP_FINISHED",
                                             "RUN_FINISHED"]
    assert rest[-1]["result"] == {"ok": True}
    assert again.ids == list(range(6, 6 + len(rest)))  # each once, none skipped
    clean(seen + rest)

    # The log is kept after the run's end: a client cut again gets the same events again
    # (the same ids), and one that has the final event gets nothing more.
    once_more = Run(await back(token, "r1", 7))
    assert await once_more.rest() == rest[2:]
    assert once_more.ids == list(range(8, 6 + len(rest)))
    assert await Run(await back(token, "r1", 5 + len(rest))).rest() == []
    assert await run_count() == 1  # coming back starts no run


async def test_a_client_back_after_the_run_ended_gets_its_end(user, agent):
    token = await issue(user, agent)
    run = await start(token, "r1")
    seen = await take(run, 2)
    await run.close()
    sid = await session_of("r1")
    await agents.anotify(agent, sid, "done soon")
    await agents.afinish_run(agent, sid, "r1", "ok")
    await settled("r1", AgentRun.Status.FINISHED)
    again = Run(await back(token, "r1", 2))
    rest = await again.rest()
    assert [e["type"] for e in rest] == ["TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT",
                                         "TEXT_MESSAGE_END", "RUN_FINISHED"]
    assert again.ids == [3, 4, 5, 6]
    clean(seen + rest)


@pytest.mark.parametrize("loss", ["log", "frame"])
async def test_history_that_is_gone_is_said_and_the_thread_starts_again(user, agent, loss):
    """Redis lost the run's log (or a frame of it): the client is told to start again, the
    run ends, and the thread's next run starts with the session's state."""
    token = await issue(user, agent)
    run = await start(token, "r1")
    await take(run, 2)
    await run.close()
    sid = await session_of("r1")
    await agents.arender(agent, sid, "card", {"title": "Kept"}, component_id="c1")
    await agents.anotify(agent, sid, "lost")
    for _ in range(100):  # the stream has logged the card and the message
        if runlog.check(2, [], None).lost is False and len(
                (await runlog.read(sid, "r1", 2, "probe")).entries) == 4:
            break
        await asyncio.sleep(0.02)
    await runlog.detach(sid, "r1", "probe")
    await forget(sid, "r1", None if loss == "log" else 4)

    again = Run(await back(token, "r1", 2))
    told = await again.rest()
    assert [(e["type"], e.get("code")) for e in told] == [("RUN_ERROR", "RESUME_UNAVAILABLE")]
    assert again.ids == [None]  # not an event of the run's log
    ended = await settled("r1", AgentRun.Status.CANCELLED)
    assert ended["outcome"]["reason"] == "resume_unavailable"

    fresh = await start(token, "r2", text="")
    first = await take(fresh, 3)
    assert [e["type"] for e in first] == ["RUN_STARTED", "STATE_SNAPSHOT", "ACTIVITY_SNAPSHOT"]
    assert first[2]["content"]["data"] == {"title": "Kept"}  # the session's state
    await agents.afinish_run(agent, sid, "r2")


def test_the_log_check_never_skips():
    """Sans-I/O: what a reader makes of what it found after the client's frame 5."""
    frames = [(6, b"f6", False), (7, b"f7", True)]
    assert runlog.check(5, frames, 7, True).entries == frames
    assert runlog.check(5, [], 5, False) == runlog.Read()  # nothing new yet
    assert runlog.check(5, [], 5, True).complete  # the client has the final frame
    assert runlog.check(5, [], None).lost  # no log, the client had frames of it
    assert not runlog.check(0, [], None).lost  # no log yet: the first frame is coming
    assert runlog.check(5, [], 3).lost  # the log began again
    assert runlog.check(5, frames[1:], 7).lost  # frame 6 is missing
    assert runlog.check(5, [(6, b"", False), (8, b"", False)], 8).lost


async def test_refusals_before_anything_changes(user, agent, other_user):
    token = await issue(user, agent)
    run = await start(token, "r1")
    await take(run, 2)
    for bad in ("x", "-1", "1.5", "9" * 19, ""):
        response = await back(token, "r1", bad)
        assert response.status_code == 400, bad
        assert response.json()["error"]["field"] == "Last-Event-ID"
    unknown = await back(token, "nope", 1)
    assert unknown.status_code == 404 and unknown.json()["error"]["field"] == "runId"
    assert (await back(token, "r1", 1, thread="another")).status_code == 404
    other = await issue(other_user, agent)  # another person's run is not there for them
    assert (await back(other, "r1", 1)).status_code == 404
    assert await run_count() == 1
    assert (await row("r1"))["status"] == AgentRun.Status.RUNNING
    sid = await session_of("r1")
    await agents.afinish_run(agent, sid, "r1")
    assert (await run.rest())[-1]["type"] == "RUN_FINISHED"


async def test_a_run_nobody_comes_back_to_ends_and_a_reader_keeps_it(settings, user, agent):
    settings.A2UI = {**getattr(settings, "A2UI", {}), "AGUI_RESUME_SECONDS": 1}
    token = await issue(user, agent)
    async with agents.events(agent, events="all") as listener:
        run = await start(token, "r1")
        await take(run, 2)
        await run.close()
        ended = await settled("r1", AgentRun.Status.CANCELLED)
        assert ended["outcome"]["reason"] == "client_gone"
        while True:
            event = await listener.next(timeout=3)
            if event["method"] == "agui.run_ended":
                break
        assert event["params"]["reason"] == "client_gone"
    # Its log says so to a client that comes back late (within the log's retention).
    told = await Run(await back(token, "r1", 2)).rest()
    assert [(e["type"], e["code"]) for e in told] == [("RUN_ERROR", "CLIENT_GONE")]

    # A client back in time keeps the run going past AGUI_RESUME_SECONDS.
    run = await start(token, "r2", text="")
    await take(run, 2)
    await run.close()
    again = Run(await back(token, "r2", 2))
    reading = asyncio.ensure_future(again.rest(timeout=5))
    await asyncio.sleep(2.5)
    assert (await row("r2"))["status"] == AgentRun.Status.RUNNING
    await agents.afinish_run(agent, await session_of("r2"), "r2")
    assert [e["type"] for e in await reading] == ["RUN_FINISHED"]


async def test_a_new_run_takes_the_place_of_a_run_whose_client_went(user, agent):
    """A page reload starts a new run of the thread: the run its old page left gives way
    (``superseded``) instead of a 409; a run someone reads still holds the thread."""
    token = await issue(user, agent)
    run = await start(token, "r1")
    await take(run, 2)
    again = Run(await back(token, "r1", 2))  # a reader keeps it: the thread stays busy
    reading = asyncio.ensure_future(again.next(timeout=5))
    await run.close()
    await asyncio.sleep(0.2)
    assert (await post(token, "r2")).status_code == 409
    reading.cancel()
    await asyncio.gather(reading, return_exceptions=True)
    await again.close()
    for _ in range(100):
        response = await post(token, "r3")
        if response.status_code == 200:
            break
        await asyncio.sleep(0.05)
    assert response.status_code == 200
    ended = await settled("r1", AgentRun.Status.CANCELLED)
    assert ended["outcome"]["reason"] == "superseded"
    new = Run(response)
    assert (await new.next())["type"] == "RUN_STARTED"
    sid = await session_of("r3")
    await agents.afinish_run(agent, sid, "r3")
    assert (await new.rest())[-1]["type"] == "RUN_FINISHED"
    told = await Run(await back(token, "r1", 2)).rest()  # its log ends with why it ended
    assert (told[-1]["type"], told[-1]["code"]) == ("RUN_ERROR", "SUPERSEDED")
    live = await database_sync_to_async(
        lambda: A2UISessionLog.objects.get(session_id=sid).state)()
    assert live in A2UISessionLog.LIVE_STATES


def test_the_docs_give_the_resumable_fetch_the_live_tests_run():
    """docs/protocol-agui.md, "With your host": the fetch it gives HttpAgent is, byte for
    byte, the one tests/live/test_live_agui_resume.py runs."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    marker = "<!-- resumable-fetch: tests/live/node/agui_resumable_fetch.mjs -->\n```js\n"
    docs = (root / "docs" / "protocol-agui.md").read_text()
    block = docs.split(marker, 1)[1].split("```\n", 1)[0]
    assert block == (root / "tests/live/node/agui_resumable_fetch.mjs").read_text()


async def test_a_client_too_far_behind_is_cut_off_and_reads_the_rest_from_the_log(
        user, agent, monkeypatch):
    """The stream does not wait for a slow client, nor hold what it has not taken without
    bound: past ``BEHIND_BYTES`` its response ends, and it comes back for the rest."""
    from a2ui.agui1 import stream

    monkeypatch.setattr(stream, "BEHIND_BYTES", 2000)
    token = await issue(user, agent)
    run = await start(token, "r1")
    seen = await take(run, 2)
    sid = await session_of("r1")
    for i in range(20):  # about 3 KB the client does not read
        await agents.anotify(agent, sid, f"n{i}")
    seen += await run.rest()  # what it had been given before the cut, then the end
    assert len(seen) < 2 + 60 and seen[-1]["type"] != "RUN_FINISHED"
    again = Run(await back(token, "r1", run.ids[-1]))
    await agents.afinish_run(agent, sid, "r1")
    seen += await again.rest()
    assert run.ids + again.ids == list(range(1, 2 + 60 + 2))
    assert [e["delta"] for e in seen if e["type"] == "TEXT_MESSAGE_CONTENT"] == [
        f"n{i}" for i in range(20)]
    clean(seen)


async def test_a_client_back_with_a_token_revoked_meanwhile_is_stopped(user, agent):
    """Another token of the person (e.g. a new page's) is revoked while it reads the run:
    that response ends with RUN_ERROR AUTH_FAILED; the run and its session go on."""
    from a2ui.models import StreamToken
    from a2ui.push import revocation

    token = await issue(user, agent)
    run = await start(token, "r1")
    await take(run, 2)
    await run.close()
    other = await issue(user, agent)
    again = Run(await back(other, "r1", 2))
    reading = asyncio.ensure_future(again.rest(timeout=6))
    await asyncio.sleep(0.2)
    jti = await database_sync_to_async(lambda: StreamToken.objects.order_by(
        "-issued_at").values_list("jti", flat=True).first())()
    await database_sync_to_async(revocation.revoke_tokens)([jti], None)
    told = await reading
    assert [(e["type"], e["code"]) for e in told] == [("RUN_ERROR", "AUTH_FAILED")]
    assert (await row("r1"))["status"] == AgentRun.Status.RUNNING
    await agents.afinish_run(agent, await session_of("r1"), "r1")
