"""Tier 2: every example of docs/agents.md runs against a live server and does what it says.

Each code block after an ``<!-- example: NAME -->`` comment is taken from the page and run in
order: ``python`` blocks (top-level ``await`` allowed; blocks without one run in a thread, as
sync code would) share one namespace per path (``ws-``, ``rest-``, ``py-``, ``sdk-``), ``sh``
blocks run in bash with ``$KEY`` and ``$SID``. The page's ``127.0.0.1:8000`` is replaced by the
agent's Daphne process; the person is on another one, driven by :class:`Person` (it answers,
approves, cancels the task ``export`` past 30 %, submits forms, presses v0.9 buttons). The
Python API blocks run in this process, on the servers' database and Redis. After each block a
check asserts what the page says it does.
"""

import ast
import asyncio
import inspect
import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from channels.db import database_sync_to_async
from django.db import connections

from a2ui.apps import default_channel_layers
from a2ui.core.surfaces.catalog import BASIC_CATALOG_ID
from a2ui.push import sessions as session_actions
from tests.live.client import init, open_user

pytestmark = pytest.mark.django_db(transaction=True)

DOC = Path(__file__).resolve().parents[2] / "docs" / "agents.md"
EXAMPLE = re.compile(r"<!-- example: ([\w-]+) -->\n```(\w+)\n(.*?)\n```", re.S)
ANSWERS = {"Your name?": "Ada", "Which city?": "Paris"}
TIMEOUT = 60


def doc_examples():
    return EXAMPLE.findall(DOC.read_text())


class Person:
    """A person's page on the JSON-RPC socket: opens a session, then reacts like a person."""

    def __init__(self, server, token, hold=()):
        self.server, self.token = server, token
        self.hold = set(hold)  # request ids answered only when released
        self.seen, self.asked, self.cancelled = [], {}, set()
        self.replies = {}
        self.ids = iter(range(1000, 10**6))

    async def open(self, **params):
        """``session_id=``: resume that session (a reload)."""
        self.client = await open_user(self.server, self.token)
        reply = await init(self.client, client_info={"name": "docs-person", "version": "1.0"},
                           capabilities={"supported_components": ["card", "form"],
                                         "v0.9": {"supportedCatalogIds": [BASIC_CATALOG_ID]}},
                           **params)
        self.sid = reply["result"]["session_id"]
        self.reader = asyncio.get_running_loop().create_task(self._read())
        return self

    async def _send(self, method, params):
        rpc_id = next(self.ids)
        await self.client.send({"jsonrpc": "2.0", "id": rpc_id, "method": method,
                                "params": params})
        return rpc_id

    async def _read(self):
        async for raw in self.client.ws:
            msg = json.loads(raw)
            if "method" not in msg:
                self.replies[msg.get("id")] = msg
                continue
            self.seen.append(msg)
            await self._react(msg["method"], msg.get("params") or {})

    async def _react(self, method, p):
        if method == "ui.request_input":
            self.asked[p["request_id"]] = p
            if p["request_id"] not in self.hold:
                await self.answer(p["request_id"])
        elif method == "ui.confirm":
            await self._send("user.approve", {"request_id": p["request_id"], "approved": True,
                                              "reason": "Looks right"})
        elif (method == "ui.progress" and p["task_id"] == "export"
              and p.get("value", 0) >= 30 and "export" not in self.cancelled):
            self.cancelled.add("export")
            await self._send("user.cancel", {"task_id": "export",
                                             "reason": "Not needed any more"})
        elif method == "ui.render" and p["component_type"] == "form":
            await self._send("user.respond", {"request_id": p["component_id"],
                                              "value": {"email": "ada@example.com"}})
        elif method == "a2ui.v09":
            await self._press(p["messages"])

    async def _press(self, messages):
        for message in messages:
            for component in message.get("updateComponents", {}).get("components", []):
                if component.get("component") != "Button":
                    continue
                event = component["action"]["event"]
                surface = message["updateComponents"]["surfaceId"]
                params = {"messages": [{"version": "v0.9", "action": {
                    "name": event["name"], "surfaceId": surface,
                    "sourceComponentId": component["id"],
                    "timestamp": "2026-01-01T00:00:00Z",
                    "context": {"name": "Ada"} if "context" in event else {}}}]}
                if "context" in event:
                    params["dataModel"] = {"version": "v0.9",
                                           "surfaces": {surface: {"name": "Ada"}}}
                await self._send("a2ui.v09", params)

    async def answer(self, request_id):
        prompt = self.asked[request_id]["prompt"]
        return await self._send("user.respond", {"request_id": request_id,
                                                 "value": ANSWERS.get(prompt, "Ada")})

    async def release(self, request_id):
        """Answer a held request once it arrived; wait for the server's ``{"ok": true}``."""
        for _ in range(200):
            if request_id in self.asked:
                break
            await asyncio.sleep(0.05)
        rpc_id = await self.answer(request_id)
        for _ in range(200):
            if rpc_id in self.replies:
                assert self.replies[rpc_id].get("result") == {"ok": True}, self.replies[rpc_id]
                return
            await asyncio.sleep(0.05)
        raise AssertionError(f"no reply to the answer of {request_id}")

    def got(self, method, **match):
        return [m["params"] for m in self.seen if m["method"] == method
                and all(m["params"].get(k) == v for k, v in match.items())]

    async def close(self):
        await self.client.close()
        self.reader.cancel()


async def run_python(code, ns, name):
    compiled = compile(code, f"docs/agents.md:{name}", "exec",
                       flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    if compiled.co_flags & inspect.CO_COROUTINE:
        await asyncio.wait_for(eval(compiled, ns), TIMEOUT)
    else:
        await asyncio.wait_for(asyncio.to_thread(_run_sync, compiled, ns), TIMEOUT)


def _run_sync(compiled, ns):
    from django.db import connections

    try:
        exec(compiled, ns)
    finally:
        connections.close_all()  # this worker thread's connection, as a sync worker would


async def run_sh(code, env):
    done = await asyncio.to_thread(subprocess.run, ["bash", "-euo", "pipefail", "-c", code],
                                   env={**os.environ, **env}, capture_output=True, text=True,
                                   timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr
    return done.stdout


#: Every example the page must have: each operation on each path.
NAMES = [
    "ws-connect", "ws-session-opened", "ws-render-update", "ws-progress-navigate-notify",
    "ws-request-input-confirm", "ws-form", "ws-cancel", "ws-v09", "ws-session-closed",
    "ws-reconnect-before", "ws-reconnect",
    "rest-messages", "rest-refused", "rest-surfaces", "rest-requests",
    "py-listen", "py-session-opened", "py-push", "py-sync", "py-ask", "py-cancel", "py-v09",
    "py-pending",
    "sdk-connect", "sdk-session-opened", "sdk-push", "sdk-ask", "sdk-cancel", "sdk-v09",
    "sdk-reconnect-before", "sdk-reconnect",
]


def test_the_page_has_every_example():
    assert [name for name, _, _ in doc_examples()] == NAMES
    assert all(lang in ("python", "sh") for _, lang, _ in doc_examples())
    text = DOC.read_text()
    assert "/work/" not in text and "/home/" not in text  # no paths outside the repository


async def test_every_example_on_the_page_works(daphne_server, live_services, settings, user,
                                               agent, agent_key):
    from a2ui import tokens

    settings.CHANNEL_LAYERS = default_channel_layers(live_services)
    settings.A2UI = {**getattr(settings, "A2UI", {}), "REDIS_URL": live_services}
    agent_server, person_server = daphne_server(), daphne_server()
    token = await asyncio.to_thread(lambda: tokens.issue_stream_token(user, agent).token)
    people = []

    async def person(hold=()):
        people.append(await Person(person_server, token, hold).open())
        return people[-1]

    spaces = {prefix: {"key": agent_key} for prefix in ("ws", "py", "sdk")}
    env = {"KEY": agent_key}
    p = None
    try:
        for name, lang, code in doc_examples():
            code = code.replace("http://127.0.0.1:8000", agent_server.url)
            code = code.replace("ws://127.0.0.1:8000", agent_server.ws_url)
            ns = spaces.get(name.split("-")[0])
            # Before: what the person (or an operator) does first.
            if name in ("ws-session-opened", "py-session-opened", "sdk-session-opened",
                        "rest-messages"):
                p = await person()
                env["SID"] = p.sid
            elif name == "ws-session-closed":
                await session_actions.aclose_session(p.sid, reason="ended by the docs test",
                                              close_code=4010)
            elif name in ("ws-reconnect-before", "sdk-reconnect-before"):
                if name.startswith("ws"):
                    p = await person(hold={"ask-city"})
                else:
                    p.hold.add("ask-city")
            elif name in ("ws-reconnect", "sdk-reconnect"):
                await p.release("ask-city")
            if lang == "sh":
                out = await run_sh(code, env)
            else:
                await run_python(code, ns, name)
            await check(name, ns, p, out if lang == "sh" else None)
    finally:
        for each in people:
            await each.close()
        for ns in spaces.values():
            for task in [ns.get("listener")]:
                if task is not None:
                    task.cancel()
            if ns.get("events") is not None and hasattr(ns["events"], "stop"):
                await ns["events"].stop()
        await database_sync_to_async(connections.close_all)()  # the Python API's connection


async def eventually(predicate, what, timeout=10):
    for _ in range(int(timeout / 0.05)):
        if predicate():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"never happened: {what}")


async def check(name, ns, p, out):  # noqa: C901 - one branch per example, read top to bottom
    prefix = name.split("-")[0]
    if name in ("ws-session-opened", "sdk-session-opened"):
        assert ns["sid"] == p.sid
    if name == "ws-session-opened":
        assert ns["opened"]["user"] == "alice"
        assert ns["opened"]["client_info"]["name"] == "docs-person"
    elif name == "py-session-opened":
        assert ns["session_id"] == p.sid and ns["opened"]["user"] == "alice"
    elif name in ("ws-render-update", "py-push", "sdk-push"):
        cid = {"ws": "status", "py": "hello", "sdk": "hello"}[prefix]
        await eventually(lambda: p.got("ui.render", component_id=cid)
                         and p.got("ui.update", component_id=cid), "render and update")
        if name == "ws-render-update":
            assert ns["result"]["delivered"] is True and ns["result"]["seq"] >= 1
    if name in ("ws-progress-navigate-notify", "py-push", "sdk-push"):
        await eventually(lambda: p.got("ui.progress") and p.got("ui.navigate")
                         and p.got("ui.notify"), "progress, navigate and notify")
        assert p.got("ui.navigate")[-1]["new_tab"] is True
    elif name in ("ws-request-input-confirm", "py-ask", "sdk-ask"):
        assert ns["name"] == "Ada"
        assert ns["decision"] == {"approved": True, "reason": "Looks right"}
        if name == "sdk-ask":
            assert ns["form"]["component_id"] == "signup"
            assert ns["form"]["value"] == {"email": "ada@example.com"}
    elif name == "ws-form":
        assert ns["form"]["component_id"] == "signup"
        assert ns["form"]["value"] == {"email": "ada@example.com"}
    elif name in ("ws-cancel", "py-cancel", "sdk-cancel"):
        assert "export" in p.cancelled and ns["step"] < 10  # stopped early
        await eventually(lambda: p.got("ui.notify", title="Export stopped"), "stop notice")
        done = [m for m in p.got("ui.progress", task_id="export")]
        assert max(m["value"] for m in done) < 100
    elif name == "ws-v09":
        assert ns["result"] == {"delivered": 3, "seq": ns["result"]["seq"],
                                "clients": ns["result"]["clients"],
                                "reached": ns["result"]["reached"]}
        assert ns["result"]["reached"]  # the protocols the batch reached
        assert ns["action"]["name"] == "book" and ns["action"]["context"] == {"name": "Ada"}
        assert ns["event"]["dataModel"]["surfaces"]["booking"] == {"name": "Ada"}
    elif name == "py-v09":
        assert ns["event"]["messages"][0]["action"]["name"] == "book"
    elif name == "sdk-v09":
        assert ns["event"]["session_id"] == ns["sid"]
        assert ns["event"]["messages"][0]["action"]["name"] == "book"
    elif name == "ws-session-closed":
        assert ns["closed"] == {"session_id": p.sid, "state": "closed",
                                "reason": "ended by the docs test"}
    elif name == "ws-reconnect":
        assert ns["hello"] == {"jsonrpc": "2.0", "method": "a2ui.pending",
                               "params": {"outcomes": 1}}
        (item,) = ns["waiting"]["requests"]
        assert (item["request_id"], item["status"], item["answer"]) == (
            "ask-city", "answered", "Paris")
    elif name == "sdk-reconnect":
        assert ns["city"] == "Paris"
    elif name == "rest-messages":
        body = json.loads(out)
        assert [d["method"] for d in body["delivered"]] == [
            "ui.render", "ui.progress", "ui.update", "ui.notify", "ui.navigate"]
        await eventually(lambda: p.got("ui.navigate", url="https://example.com/builds/7"),
                         "the REST pushes")
        assert p.got("ui.update", component_id="nightly")
    elif name == "rest-refused":
        assert out.strip() == "400"
    elif name == "rest-surfaces":
        assert json.loads(out)["delivered"] == 2
        await eventually(lambda: any("createSurface" in m for e in p.got("a2ui.v09")
                                     for m in e["messages"]), "the surface")
    elif name == "rest-requests":
        assert json.loads(out) == {"requests": []}
    elif name == "py-sync":
        assert isinstance(ns["seq"], int)
        await eventually(lambda: p.got("ui.notify", title="Synced from a worker"), "notify")
    elif name == "py-pending":
        assert ns["listener"].cancelled() or ns["listener"].cancelling()
