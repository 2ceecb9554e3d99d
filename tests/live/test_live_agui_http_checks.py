"""Tier 2: the independent checks of AG-UI 1.0 against POST /api/v4/agui/run, live (Daphne,
PostgreSQL, Redis; the agent on another process than the stream):

* ``ag-ui-validate`` (PyPI), its CLI with ``--features`` naming what we serve, and its Python
  API for a run that ends with an interrupt and the run that resumes it: 0 errors, 0 warnings;
* ``@ag-ui/client``'s ``HttpAgent`` (npm, Node 20) completing a run that ends with an interrupt
  and the run that resumes it (tests/live/node/agui_httpagent.mjs).

Neither flags optional fields sent as null or a stream with no final event:
test_live_agui_http.py checks those on our side."""

import asyncio
import json
import sys
import uuid
from pathlib import Path

import pytest
from ag_ui_validate.pytest_plugin import validate_agui_endpoint
from ag_ui_validate.transport import TransportError

from tests.live.aguibot import Bot
from tests.live.aguihttp import run_input
from tests.live.test_live_mcp import issue

pytestmark = pytest.mark.django_db(transaction=True)
AGUI = "stream_agui"
ROOT = Path(__file__).resolve().parents[2]
FEATURES = ["agentic-chat", "human-in-the-loop", "shared-state", "agentic-generative-ui"]


async def _run(*cmd, timeout=120):
    proc = await asyncio.create_subprocess_exec(
        *cmd, cwd=ROOT, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), timeout)
    return proc.returncode, out.decode(), err.decode()


async def test_ag_ui_validate_cli_and_api(two_servers, user, agent, agent_key):
    a, b = two_servers
    bot = await Bot.start(a, agent_key)
    token = await issue(user, agent, AGUI)
    url = f"{b.url}/api/v4/agui/run"
    cli = str(Path(sys.executable).parent / "ag-ui-validate")
    code, out, err = await _run(cli, url, "--json", "--features", ",".join(FEATURES),
                                "--max-warnings", "0", "--header",
                                f"Authorization: Bearer {token}", "--timeout", "60")
    report = json.loads(out)
    assert code == 0 and report["summary"]["errors"] == 0, (out, err)
    assert report["summary"]["warnings"] == 0, out
    assert report["events"] if "events" in report else True

    # A run that ends with an interrupt, then the run that resumes it (the Python API).
    headers = {"Authorization": f"Bearer {token}"}
    thread = f"thread-{uuid.uuid4().hex[:8]}"
    first = run_input(thread_id=thread, text="What is my name?")
    interrupted = await validate_agui_endpoint(url, features=FEATURES, input=first,
                                               headers=headers, timeout_ms=60000)
    _clean(interrupted)
    asked = next(m for m in bot.seen if m["method"] == "agui.run_ended"
                 and m["params"]["run_id"] == first["runId"])
    (request_id,) = asked["params"]["interrupts"]
    second = run_input(thread_id=thread, resume=[
        {"interruptId": request_id, "status": "resolved", "payload": "Ada"}])
    second["messages"] = []
    resumed = await validate_agui_endpoint(url, features=FEATURES, input=second,
                                           headers=headers, timeout_ms=60000)
    _clean(resumed)
    # A resume of an interrupt that is not open is refused before any stream.
    with pytest.raises(TransportError, match="HTTP 400"):
        await validate_agui_endpoint(url, input=second, headers=headers, timeout_ms=60000)
    await bot.close()


def _clean(report):
    problems = [(d.rule, d.severity, d.message) for d in report.diagnostics
                if d.severity in ("error", "warning")]
    assert not problems, problems
    assert report.summary.errors == 0 and report.summary.warnings == 0


async def test_httpagent_completes_an_interrupt_and_its_resume(two_servers, user, agent,
                                                               agent_key):
    a, b = two_servers
    bot = await Bot.start(a, agent_key)
    token = await issue(user, agent, AGUI)
    code, out, err = await _run("node", "tests/live/node/agui_httpagent.mjs",
                                f"{b.url}/api/v4/agui/run", token)
    assert code == 0, err
    result = json.loads(out.strip().splitlines()[-1])
    assert result["ok"], result.get("error")
    first, second = result["runs"]
    assert first["types"][0] == "RUN_STARTED" and first["types"][-1] == "RUN_FINISHED"
    assert [i["reason"] for i in first["pendingInterrupts"]] == ["input_required"]
    assert second["types"][-1] == "RUN_FINISHED" and second["pendingInterrupts"] == []
    assert second["result"] == {"name": "Ada"}
    assert [m["content"] for m in second["newMessages"] if m["role"] == "assistant"] == [
        "Hello Ada"]
    await bot.close()
