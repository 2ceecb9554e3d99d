"""The demo agent: walks a new session through everything the server can show.

Used by ``manage.py a2ui_demo``; it is an ordinary agent on the agent WebSocket (a2ui.sdk), so
it doubles as an example of how to write one.
"""

import asyncio
import logging

from a2ui.rpc.errors import ErrorCode, ProtocolError
from a2ui.sdk import AgentClient

log = logging.getLogger("a2ui.demo")
BASIC = "https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"


COMPONENTS = [
    ("card", {
        "title": "Agent Summary",
        "description": "Performance overview for the last 7 days.",
        "sections": [{"label": "Total Calls", "value": "1,247"},
                     {"label": "Success Rate", "value": "99.2%"}],
        "actions": [{"label": "Open the API docs", "action": "navigate", "url": "/api/docs/"}],
    }, {"priority": "high"}),
    ("table", {
        "headers": [{"key": "name", "label": "Agent Name", "sortable": True},
                    {"key": "calls", "label": "API Calls", "sortable": True},
                    {"key": "status", "label": "Status"}],
        "rows": [{"name": "WeatherBot", "calls": 5420, "status": "active"},
                 {"name": "DataMiner", "calls": 3180, "status": "active"},
                 {"name": "Summarizer", "calls": 912, "status": "paused"}],
    }, None),
    ("chart", {
        "chart_type": "bar", "title": "API Usage Over Time",
        "x_axis": {"label": "Date", "values": ["Mon", "Tue", "Wed", "Thu", "Fri"]},
        "y_axis": {"label": "Calls"},
        "series": [{"name": "Successful", "data": [120, 150, 180, 160, 200]},
                   {"name": "Failed", "data": [5, 3, 8, 2, 4]}],
    }, None),
    ("chart", {
        "chart_type": "line", "title": "Latency (ms)",
        "x_axis": {"label": "Hour", "values": ["9", "10", "11", "12", "13"]},
        "series": [{"name": "p50", "data": [12, 14, 11, 13, 12]},
                   {"name": "p99", "data": [40, 52, 38, 45, 41]}],
    }, None),
    ("chart", {
        # A pie: x_axis.values are the slice labels, series[0].data their values.
        "chart_type": "pie", "title": "Calls by category",
        "x_axis": {"label": "Category", "values": ["research", "trading", "analytics"]},
        "series": [{"name": "Calls", "data": [45, 30, 25]}],
    }, {"position": "sidebar"}),
    ("markdown", {
        "content": "## Analysis Report\n\nThe agent identified **3 key findings**:\n\n"
                   "1. Market demand is rising\n2. Supply gap exists in the `research` category"
                   "\n3. Price elasticity suggests a $0.05 optimal price point",
    }, None),
    ("code", {
        "language": "python", "title": "API Request Example",
        "code": "import httpx\n\nasync with httpx.AsyncClient() as client:\n"
                "    resp = await client.get('https://api.example.com/data')\n"
                "    print(resp.json())",
    }, None),
    ("image", {
        "url": "/static/a2ui/demo/chart.svg", "alt": "Generated chart showing market trends",
        "caption": "Market trends for Q1 2026", "width": 400, "height": 200,
    }, {"position": "sidebar"}),
    ("alert", {
        "severity": "warning", "title": "Budget Warning",
        "message": "This workflow has consumed 80% of its allocated budget ($40.00 / $50.00).",
        "dismissible": True,
    }, None),
    ("form", {
        "fields": [{"name": "query", "type": "text", "label": "Search Query", "required": True},
                   {"name": "max_price", "type": "number", "label": "Max Price (USD)",
                    "min": 0, "max": 1000},
                   {"name": "category", "type": "select", "label": "Category",
                    "options": ["research", "trading", "analytics"]}],
        "submit_label": "Search", "cancel_label": "Reset",
    }, None),
]

# The demo form's field labels by name: its result card shows "Max Price (USD)", not "max_price".
FORM_LABELS = {field["name"]: field.get("label") or field["name"]
               for kind, data, _ in COMPONENTS if kind == "form" for field in data["fields"]}

STEPS = [{"label": "Data Collection", "status": "active"},
         {"label": "Analysis", "status": "pending"},
         {"label": "Report Generation", "status": "pending"}]


def booking_surface(surface_id="demo-booking"):
    """A v0.9 form surface: a name field and a button whose action the agent answers."""
    return [
        {"version": "v0.9", "createSurface": {"surfaceId": surface_id, "catalogId": BASIC}},
        {"version": "v0.9", "updateComponents": {"surfaceId": surface_id, "components": [
            {"id": "root", "component": "Card", "child": "col"},
            {"id": "col", "component": "Column", "children": ["title", "name", "book"]},
            {"id": "title", "component": "Text", "text": "Book a table (A2UI v0.9)",
             "variant": "h3"},
            {"id": "name", "component": "TextField", "label": "Your name",
             "value": {"path": "/name"}},
            {"id": "book", "component": "Button", "child": "book_label", "variant": "primary",
             "action": {"event": {"name": "book", "context": {"name": {"path": "/name"}}}}},
            {"id": "book_label", "component": "Text", "text": "Book"},
        ]}},
        {"version": "v0.9", "updateDataModel": {"surfaceId": surface_id, "path": "/",
                                                "value": {"name": ""}}},
    ]


def booked_surface(name, surface_id="demo-booked"):
    return [
        {"version": "v0.9", "createSurface": {"surfaceId": surface_id, "catalogId": BASIC}},
        {"version": "v0.9", "updateComponents": {"surfaceId": surface_id, "components": [
            {"id": "root", "component": "Text",
             "text": f"Booked! See you tonight, {name or 'friend'}."},
        ]}},
    ]


#: The AG-UI activity the demo keeps beside the cards (docs/agents.md, "AG-UI activity").
TREE = {"id": "root", "name": "research", "node_type": "folder", "children": [
    {"id": "data", "name": "data", "node_type": "folder", "children": [
        {"id": "calls", "name": "calls.csv", "node_type": "file"}]},
    {"id": "report", "name": "report.md", "node_type": "file"}]}
PLAN = "1. Show every component\n2. Ask what to search for\n3. Search, then report"


def roster(status):
    return {"type": "AGENT_ROSTER", "agents": [
        {"id": "demo", "name": "Demo Agent", "status": status},
        {"id": "reviewer", "name": "Reviewer", "status": "IDLE"}]}


def plan(status):
    return {"type": "PLAN_CARD", "id": "demo-plan", "title": "Walkthrough", "content": PLAN,
            "status": status}


def report(topic):
    return {"type": "ARTIFACT_OPEN", "id": "demo-report", "title": "report.md",
            "content_type": "text/markdown", "read_only": False,
            "content": f"# Results for {topic}\n\n- WeatherBot: 5,420 calls\n"
                       "- DataMiner: 3,180 calls\n- Summarizer: 912 calls\n"}


#: The consent type the demo asks for (``manage.py a2ui_demo`` makes it required): the person
#: is prompted when the session starts, the agent's questions wait until it is granted, and a
#: revocation (``POST /api/v4/consents/revoke``, or the admin's consent list) stops them again.
DEMO_CONSENT = "data_collection"


class DemoAgent:
    def __init__(self, client):
        self.client = client
        self.running = {}
        self.consented = {}  # session id -> asyncio.Event, set while the consent is in force

    def attach(self):
        self.client.on("session.opened", self.on_session)
        self.client.on("session.resumed", self.on_resumed)
        self.client.on("session.closed", self.on_closed)
        self.client.on("user.cancel", self.on_cancel)
        self.client.on("user.respond", self.on_form)
        self.client.on("a2ui.v09", self.on_v09)
        self.client.on("consent.changed", self.on_consent)
        self.client.on("user.message", self.on_message)

    async def show(self, sid, key, event):
        """One AG-UI event of the walkthrough under the key ``key``: a second walk (a reload,
        a reconnect) shows it once; a refusal is logged, the walk goes on."""
        try:
            await self.client.agui_event(sid, event, idempotency_key=key)
        except ProtocolError as exc:
            log.info("session %s: %s refused: %s", sid, event["type"], exc)

    async def search(self, sid, topic):
        """The walkthrough's tool call, state, report artifact and chat line for ``topic``."""
        call = "demo-search"
        await self.show(sid, "demo-state", {"type": "STATE_DELTA", "path": "search.topic",
                                            "new_value": topic})
        await self.show(sid, "demo-call", {"type": "TOOL_CALL_REQUEST", "id": call,
                                           "tool_name": "search", "parameters": {"query": topic}})
        await self.show(sid, "demo-call-running", {"type": "TOOL_CALL_STATUS", "id": call,
                                                   "status": "RUNNING", "progress": 50,
                                                   "message": "Searching"})
        await asyncio.sleep(0.5)
        await self.show(sid, "demo-call-result", {"type": "TOOL_CALL_RESULT", "id": call,
                                                  "result": {"hits": 3, "top": "WeatherBot"}})
        await self.show(sid, "demo-report", report(topic))
        await self.show(sid, "demo-chat-found", {
            "type": "TEXT_MESSAGE", "sender": "Demo Agent",
            "content": f"Found 3 results for **{topic}**: the report is open under Artifacts."})

    async def on_message(self, params):
        content = str(params.get("content", ""))[:200]
        await self.client.say(params["session_id"], (
            f"You wrote: *{content}*. I am the scripted demo agent; "
            "`manage.py a2ui_demo --agent pydantic-ai` puts a framework agent here."))

    def _consent(self, sid):
        return self.consented.setdefault(sid, asyncio.Event())

    async def on_consent(self, params):
        event = self._consent(params["session_id"])
        if params.get("granted"):
            event.set()
        else:
            event.clear()
            await self.client.toast(params["session_id"], "Consent revoked", level="warning",
                                    message="I will not ask you anything until you consent "
                                            "again.", duration_ms=5000)

    async def ask(self, sid, call):
        """``call()`` (a request_input or confirm); while the person's consent is missing
        (-32010, and they are prompted for it), wait for it and ask again."""
        while True:
            try:
                return await call()
            except ProtocolError as exc:
                if exc.code != ErrorCode.CONSENT_REQUIRED:
                    raise
                event = self._consent(sid)
                event.clear()
                await self.client.toast(sid, "Waiting for your consent", level="info",
                                        message="Allow the data collection to go on.",
                                        duration_ms=4000)
                await event.wait()

    async def on_session(self, params):
        sid = params["session_id"]
        if sid not in self.running:
            self.running[sid] = asyncio.get_running_loop().create_task(self.walkthrough(sid))

    async def on_resumed(self, params):
        """The person came back (a reload): walk them through again once the last walk ended.

        A session lives until an hour without activity (SESSION_INACTIVITY_TIMEOUT_SECONDS), so
        walking each session only once walked a person who reloads only once an hour. The
        components have fixed ids: a second walk replaces the first one's, it adds none."""
        sid = params["session_id"]
        task = self.running.get(sid)
        if task is None or task.done():
            self.running[sid] = asyncio.get_running_loop().create_task(self.walkthrough(sid))

    async def on_closed(self, params):
        self.consented.pop(params["session_id"], None)
        task = self.running.pop(params["session_id"], None)
        if task is not None:
            task.cancel()

    async def stop_walkthroughs(self):
        """The socket is going: cancel each session's walkthrough and wait for it, so that none
        is left to fail unobserved (a reconnected socket starts them again, as session.resumed)."""
        tasks = list(self.running.values())
        self.running.clear()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def on_cancel(self, params):
        await self.client.toast(params["session_id"], "Task cancelled", level="warning",
                                message=f"Stopped {params.get('task_id')}.")

    async def on_form(self, params):
        await self.client.render(params["session_id"], "card", {
            "title": "Form received", "sections": [
                {"label": FORM_LABELS.get(k, str(k)), "value": "—" if v in (None, "") else str(v)}
                for k, v in (params.get("value") or {}).items()
            ]})

    async def on_v09(self, params):
        for message in params.get("messages", []):
            action = message.get("action")
            if action and action.get("name") == "book":
                name = (action.get("context") or {}).get("name", "")
                sid = params["session_id"]
                try:
                    await self.client.surfaces(sid, booked_surface(name))
                except ProtocolError:  # booked before: replace the confirmation surface
                    await self.client.surfaces(sid, [{"version": "v0.9", "deleteSurface": {
                        "surfaceId": "demo-booked"}}, *booked_surface(name)])

    async def walkthrough(self, sid):
        c = self.client
        try:
            await c.toast(sid, "Hello from the demo agent", level="info",
                          message="Watch the components arrive.", duration_ms=4000)
            await self.show(sid, "demo-chat-hello", {
                "type": "TEXT_MESSAGE", "sender": "Demo Agent",
                "content": "Hi! I will show you what this page can do; what I do appears here. "
                           "Write to me any time."})
            await self.show(sid, "demo-roster-busy", roster("BUSY"))
            await self.show(sid, "demo-plan-active", plan("ACTIVE"))
            await self.show(sid, "demo-tree", {"type": "RESOURCE_TREE", "root": TREE})
            steps_id = await c.render(sid, "steps", {"steps": STEPS, "current_step": 0},
                                      component_id="demo-steps", metadata={"priority": "high"})
            for i, (kind, data, metadata) in enumerate(COMPONENTS):
                await c.render(sid, kind, data, metadata=metadata, component_id=f"demo-{i}")
                await asyncio.sleep(0.2)
            for value in range(0, 101, 20):
                await c.progress(sid, "demo-task", "determinate", value=value, total=100,
                                 message="Analysing")  # the client adds the percentage
                await asyncio.sleep(0.3)
            await c.update(sid, steps_id, {"steps": [
                {"label": "Data Collection", "status": "completed"},
                {"label": "Analysis", "status": "active"},
                {"label": "Report Generation", "status": "pending"}], "current_step": 1})
            for token in ("Streaming ", "tokens ", "as ", "they ", "arrive."):
                await c.progress(sid, "demo-stream", "streaming", message=token)
                await asyncio.sleep(0.15)
            # A stream has no end of its own: a determinate 1/1 closes the task.
            await c.progress(sid, "demo-stream", "determinate", value=1, total=1,
                             message="Stream finished")
            try:
                await c.surfaces(sid, booking_surface())
            except ProtocolError as exc:
                log.warning("v0.9 surface refused: %s", exc)
            # Questions with ids of their own: asked again (a reconnect, a reload's new walk)
            # they are retries, never a second question on the person's page.
            topic = await self.ask(sid, lambda: c.request_input(
                sid, "text", "What would you like to search for?",
                validation={"required": True}, request_id="demo-topic"))
            await c.render(sid, "card", {"title": "You asked for", "description": str(topic)},
                           component_id="demo-topic")
            await self.search(sid, str(topic))
            decision = await self.ask(sid, lambda: c.confirm(
                sid, "Confirm Purchase", description="This will charge $50.00 to your account.",
                severity="warning", timeout_seconds=30, request_id="demo-purchase"))
            approved = bool(decision.get("approved"))
            await c.toast(sid, "Purchase approved" if approved else "Purchase declined",
                          level="success" if approved else "warning", duration_ms=5000)
            # A declined purchase produces no report: the last step says so, not "completed".
            report = ({"label": "Report Generation", "status": "completed"} if approved else
                      {"label": "Report Generation", "status": "error",
                       "description": "Not generated: the purchase was declined."})
            await c.update(sid, steps_id, {"steps": [
                {"label": "Data Collection", "status": "completed"},
                {"label": "Analysis", "status": "completed"}, report], "current_step": 2})
            await self.show(sid, "demo-plan-done", plan("COMPLETED" if approved else "CANCELLED"))
            await self.show(sid, "demo-roster-idle", roster("IDLE"))
        except ProtocolError as exc:
            log.info("session %s: %s", sid, exc)
        except (ConnectionError, asyncio.CancelledError):
            pass


async def run_agent(url, key, stop):
    """Keep the demo agent connected until ``stop`` is set: the SDK reconnects with backoff
    (``reconnect=True``), sends a waiting question again as a retry, and gets its sessions back
    as ``session.resumed``; a walkthrough cut by a lost push starts again there."""
    client = AgentClient(url, key, reconnect=True, max_backoff=5)
    agent = DemoAgent(client)
    agent.attach()
    waits = [asyncio.ensure_future(stop.wait()), asyncio.ensure_future(client.connect())]
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        if not stop.is_set():
            for session in await client.sessions():
                await agent.on_session(session)
            waits.append(asyncio.ensure_future(client.closed.wait()))  # a revoked key
            await asyncio.wait(waits[::2], return_when=asyncio.FIRST_COMPLETED)
    finally:
        for wait in waits:
            wait.cancel()
        await asyncio.gather(*waits, return_exceptions=True)
        await agent.stop_walkthroughs()
        await client.close()
