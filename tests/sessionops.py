"""Random, valid session operations for the snapshot-invariant tests (seeded, bounded).

An operation is what an agent or a person does to a session: ``("push", method, params)`` (an
agent-to-UI message, as ``services.pushes.apush`` takes it), ``("answer", request_id, kind,
value)`` (``services.pending.aanswer``), ``("expire", request_id)`` (the deadline passes, the
housekeeping sweep times it out), ``("surfaces", messages)`` (``services.surfaces.apush``).
``Ops`` keeps the little it needs to make only valid ones (component types, open requests,
live surfaces), the way an agent that knows its session would.

``events(op, surfaces)`` gives the session events the operation is expected to emit, computed
with the protocol modules alone (``a2ui.core.content.methods`` validation and ``events.to_event``,
``a2ui.v09`` validation), so the pure tests need no service.
"""

import random

from a2ui.core.content import methods
from a2ui.core.events import Kind
from a2ui.core.surfaces import BASIC_CATALOG_ID, SessionSurfaces

V = "v0.9"
KIND_BY_METHOD = methods.REQUEST_KIND_BY_METHOD


def component_data(kind, rng):
    n = rng.randrange(100)
    if kind == "card":
        data = {"title": f"Card {n}"}
        if rng.random() < 0.5:
            data["description"] = f"<b>about</b> {n}"
        return data
    if kind == "table":
        return {"headers": [{"key": "n", "label": "N"}], "rows": [{"n": i} for i in range(n % 3)]}
    return {"content": f"# Note {n}\n\n*text* <script>x</script>"}


def update_params(kind, rng):
    n = rng.randrange(100)
    if kind == "card":
        return rng.choice([("merge", {"description": f"now {n}"}), ("merge", {"description": None}),
                           ("replace", {"title": f"New {n}"})])
    if kind == "table":
        return rng.choice([("append", {"rows": [{"n": n}]}), ("merge", {"caption": f"<i>{n}</i>"}),
                           ("replace", {"headers": [{"key": "m", "label": "M"}], "rows": []})])
    return rng.choice([("replace", {"content": f"v{n}"}), ("merge", {"content": f"m{n}"})])


def surface_create(sid, n):
    return [
        {"version": V, "createSurface": {"surfaceId": sid, "catalogId": BASIC_CATALOG_ID}},
        {"version": V, "updateComponents": {"surfaceId": sid, "components": [
            {"id": "root", "component": "Column", "children": ["title", "name"]},
            {"id": "title", "component": "Text", "text": f"Form {n}"},
            {"id": "name", "component": "TextField", "label": "Name",
             "value": {"path": "/name"}}]}},
        {"version": V, "updateDataModel": {"surfaceId": sid, "path": "/", "value": {"name": ""}}},
    ]


class Ops:
    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.components = {}  # id -> type
        self.requests = {}  # id -> kind
        self.surfaces = set()
        self.counter = 0

    def _next(self, prefix):
        self.counter += 1
        return f"{prefix}{self.counter}"

    def one(self):
        rng = self.rng
        choices = ["render", "render", "progress", "notify", "navigate", "request", "surface_new"]
        if self.components:
            choices += ["render_again", "update", "update"]
        if self.requests:
            choices += ["answer", "answer", "expire"]
        if self.surfaces:
            choices += ["surface_data", "surface_text", "surface_delete"]
        what = rng.choice(choices)
        if what in ("render", "render_again"):
            cid = (rng.choice(sorted(self.components)) if what == "render_again"
                   else self._next("c"))
            kind = rng.choice(["card", "table", "markdown"])
            self.components[cid] = kind
            params = {"component_id": cid, "component_type": kind,
                      "data": component_data(kind, rng)}
            if rng.random() < 0.3:
                params["metadata"] = {"priority": rng.choice(["high", "low"])}
            return ("push", "ui.render", params)
        if what == "update":
            cid = rng.choice(sorted(self.components))
            operation, data = update_params(self.components[cid], rng)
            return ("push", "ui.update", {"component_id": cid, "operation": operation,
                                          "data": data})
        if what == "progress":
            return ("push", "ui.progress", {"task_id": "t", "progress_type": "determinate",
                                            "value": rng.randrange(10), "total": 10})
        if what == "notify":
            return ("push", "ui.notify", {"title": "Saved", "level": "info"})
        if what == "navigate":
            return ("push", "ui.navigate", {"url": "https://example.com/", "new_tab": False})
        if what == "request":
            rid = self._next("r")
            method = rng.choice(["ui.request_input", "ui.confirm"])
            self.requests[rid] = KIND_BY_METHOD[method]
            if method == "ui.confirm":
                return ("push", method, {"request_id": rid, "title": "Go?"})
            return ("push", method, {"request_id": rid, "input_type": "text", "prompt": "Name?"})
        if what == "answer":
            rid = rng.choice(sorted(self.requests))
            kind = self.requests.pop(rid)
            value = "Ada" if kind == "input" else {"approved": True, "reason": ""}
            return ("answer", rid, kind, value)
        if what == "expire":  # its deadline passes; the sweep times it out
            rid = rng.choice(sorted(self.requests))
            del self.requests[rid]
            return ("expire", rid)
        if what == "surface_new":
            sid = self._next("s")
            self.surfaces.add(sid)
            return ("surfaces", surface_create(sid, self.counter))
        sid = rng.choice(sorted(self.surfaces))
        if what == "surface_data":
            return ("surfaces", [{"version": V, "updateDataModel": {
                "surfaceId": sid, "path": "/name", "value": f"n{rng.randrange(100)}"}}])
        if what == "surface_text":
            return ("surfaces", [{"version": V, "updateComponents": {"surfaceId": sid, "components": [
                {"id": "title", "component": "Text", "text": f"Title {rng.randrange(100)}"}]}}])
        self.surfaces.discard(sid)
        return ("surfaces", [{"version": V, "deleteSurface": {"surfaceId": sid}}])

    def many(self, count):
        return [self.one() for _ in range(count)]


def events(op, surfaces):
    """The events ``op`` emits; ``surfaces`` (a ``SessionSurfaces``) is advanced by it."""
    if op[0] in ("answer", "expire"):
        status = "answered" if op[0] == "answer" else "timed_out"
        return [(Kind.REQUEST_CLOSED, {"request_id": op[1], "status": status})]
    if op[0] == "surfaces":
        changes = surfaces.apply_batch(op[1])
        return [(Kind.SURFACE_BATCH, {"first_seq": None, "messages": changes.messages})]
    _, method, params = op
    return [methods.to_event(method, methods.validate_params(method, params))]

def all_events(ops):
    surfaces = SessionSurfaces()
    return [event for op in ops for event in events(op, surfaces)]
