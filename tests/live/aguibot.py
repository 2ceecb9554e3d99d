"""A scripted agent for AG-UI 1.0 runs (tier 2), on the agent WebSocket: the exchange of
docs/agents.md "Runs", as an agent would do it.

On ``agui.run_started``: a run whose new message asks for a name gets a notice and a
``ui.request_input`` (the run ends with an interrupt); a run that resumes gets the answer as the
result of that request and finishes with ``{"name": answer}`` (or, when the request was
refused, e.g. the person cancelled it: -32013, with ``{"cancelled": True, "code": code}``);
any other run gets a reply, a card, a surface, progress, and ``agui.run_finish``. ``outcomes``
lists every outcome of a request the bot received, in order.
"""

import asyncio
import itertools

from tests.live.client import open_agent

CATALOG = "https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"


class Refused:
    """The error a ``ui.request_input`` was answered with instead of a value."""

    def __init__(self, error):
        self.error = error


class Bot:
    def __init__(self, client):
        self.client = client
        self.ids = itertools.count(100)
        self.asked = {}  # rpc id of a request_input -> (session id, request id)
        self.answers = {}  # request id -> the person's answer
        self.resuming = {}  # request id -> (session id, the run that resumes it)
        self.seen = []  # every notification
        self.outcomes = []  # (request id, the answer or the error) of each request, in order
        self.task = asyncio.ensure_future(self._loop())

    @classmethod
    async def start(cls, server, key):
        return cls(await open_agent(server, key))

    async def push(self, method, params):
        await self.client.send({"jsonrpc": "2.0", "id": next(self.ids), "method": method,
                                "params": params})

    async def _loop(self):
        while True:
            msg = await self.client.recv(timeout=3600)
            if msg.get("method"):
                self.seen.append(msg)
                if msg["method"] == "agui.run_started":
                    await self._started(msg["params"])
            elif msg.get("id") in self.asked:
                _, request_id = self.asked.pop(msg["id"])
                answer = Refused(msg["error"]) if "error" in msg else msg.get("result")
                self.outcomes.append((request_id, msg.get("error", msg.get("result"))))
                self.answers[request_id] = answer
                await self._continue(request_id)

    async def _continue(self, request_id):
        """Both known (the answer, and the run that resumed the request, in either order)."""
        if request_id in self.answers and request_id in self.resuming:
            sid, run_id = self.resuming.pop(request_id)
            await self._answered(sid, run_id, self.answers.pop(request_id))

    async def _started(self, p):
        sid, run_id = p["session_id"], p["run_id"]
        if p.get("resume"):  # the answer arrives as the result of the request
            for entry in p["resume"]:
                self.resuming[entry["interruptId"]] = (sid, run_id)
                await self._continue(entry["interruptId"])
            return
        text = " ".join(str(m.get("content")) for m in p["messages"])
        await self.push("ui.notify", {"session_id": sid, "level": "info", "title": "On it",
                                      "run_id": run_id})
        if "name" in text.lower():
            rpc = next(self.ids)
            self.asked[rpc] = (sid, f"ask-{rpc}")
            await self.client.send({"jsonrpc": "2.0", "id": rpc, "method": "ui.request_input",
                                    "params": {"session_id": sid, "request_id": f"ask-{rpc}",
                                               "input_type": "text", "prompt": "Your name?"}})
            return
        await self.push("ui.progress", {"session_id": sid, "task_id": "work",
                                        "progress_type": "determinate", "value": 1, "total": 2})
        await self.push("ui.render", {"session_id": sid, "component_id": "card",
                                      "component_type": "card",
                                      "data": {"title": "Result", "description": "Done"}})
        await self.push("ui.update", {"session_id": sid, "component_id": "card",
                                      "operation": "merge", "data": {"description": "Checked"}})
        await self.push("a2ui.v09", {"session_id": sid, "messages": [
            {"version": "v0.9", "createSurface": {"surfaceId": "s1", "catalogId": CATALOG}},
            {"version": "v0.9", "updateComponents": {"surfaceId": "s1", "components": [
                {"id": "root", "component": "Text", "text": "Hello"}]}}]})
        await self.push("ui.progress", {"session_id": sid, "task_id": "work",
                                        "progress_type": "determinate", "value": 2, "total": 2})
        await self.push("agui.run_finish", {"session_id": sid, "run_id": run_id})

    async def _answered(self, sid, run_id, answer):
        if isinstance(answer, Refused):  # e.g. the person cancelled: the session goes on
            await self.push("agui.run_finish", {"session_id": sid, "run_id": run_id, "result": {
                "cancelled": True, "code": answer.error.get("code")}})
            return
        await self.push("ui.notify", {"session_id": sid, "level": "success",
                                      "title": f"Hello {answer}"})
        await self.push("agui.run_finish", {"session_id": sid, "run_id": run_id,
                                            "result": {"name": answer}})

    async def close(self):
        self.task.cancel()
        await self.client.close()
