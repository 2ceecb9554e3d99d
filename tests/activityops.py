"""Valid activity events (``a2ui.core.activity``) for the pure tests: examples of each kind and
seeded random sequences, made the way an agent that knows its session would (only known
artifacts updated, old values that match, removals of what is there)."""

import random

from a2ui.core import activity as A
from a2ui.core.events import Kind

TREE = {"id": "root", "name": "Project", "node_type": "folder", "children": [
    {"id": "src", "name": "src", "node_type": "folder", "children": [
        {"id": "main", "name": "main.rs", "node_type": "file"}]}]}

#: Every seed-003 event an agent pushes, once (the agent paths' tests and the fuzz templates).
AGUI_EVENTS = [
    {"type": "TEXT_MESSAGE", "sender": "bot", "content": "Hello **there**"},
    {"type": "TOOL_CALL_REQUEST", "id": "tc1", "tool_name": "grep",
     "parameters": {"pattern": "error"}, "agent_id": "main"},
    {"type": "TOOL_CALL_STATUS", "id": "tc1", "status": "RUNNING", "progress": 75,
     "message": "Processing"},
    {"type": "TOOL_CALL_RESULT", "id": "tc1", "result": {"matches": ["a"]}},
    {"type": "STATE_DELTA", "path": "user.theme", "new_value": "dark"},
    {"type": "STATE_DELTA", "path": "user.theme", "old_value": "dark", "new_value": "light"},
    {"type": "PLAN_CARD", "id": "p1", "title": "Plan", "content": "## Steps\n1. a",
     "status": "ACTIVE"},
    {"type": "RESOURCE_TREE", "root": TREE},
    {"type": "AGENT_ROSTER", "agents": [{"id": "main", "name": "Main", "status": "BUSY"}]},
    {"type": "ARTIFACT_OPEN", "id": "art1", "title": "main.rs", "content": "fn main() {}\n",
     "content_type": "code", "language": "rust"},
    {"type": "ARTIFACT_UPDATE", "id": "art1", "content": "// more\n", "change_type": "partial"},
]

ACTIVITY_EXAMPLES = {
    Kind.MESSAGE: [(Kind.MESSAGE, {"message_id": "m1", "role": "agent", "sender": "bot",
                                   "content": "Hello"}),
                   (Kind.MESSAGE, {"message_id": "m2", "role": "user", "sender": "ada",
                                   "content": "Hi", "metadata": {"author_name": "Ada"}})],
    Kind.MESSAGE_BATCH: [(Kind.MESSAGE_BATCH, {"messages": [
        {"message_id": "b1", "role": "user", "sender": "ada", "content": "One"},
        {"message_id": "m1", "role": "user", "sender": "ada", "content": "Two"}]})],
    Kind.TOOL_CALL: [
        (Kind.TOOL_CALL, {"call_id": "tc1", "phase": "requested", "tool_name": "grep",
                          "parameters": {"pattern": "error"}, "status": "PENDING"}),
        (Kind.TOOL_CALL, {"call_id": "tc1", "phase": "status", "status": "RUNNING",
                          "progress": 50, "message": "half"}),
        (Kind.TOOL_CALL, {"call_id": "tc1", "phase": "result", "status": "COMPLETED",
                          "result": {"matches": 2}})],
    Kind.STATE_DELTA: [(Kind.STATE_DELTA, {"path": "user.theme", "new_value": "dark",
                                           "removed": False}),
                       (Kind.STATE_DELTA, {"path": "a", "new_value": [1], "removed": False}),
                       (Kind.STATE_DELTA, {"path": "a", "old_value": [1], "removed": True})],
    Kind.PLAN: [(Kind.PLAN, {"plan_id": "p1", "title": "Plan", "content": "## Steps\n1. x",
                             "status": "ACTIVE"})],
    Kind.RESOURCES: [(Kind.RESOURCES, {"root": TREE})],
    Kind.ROSTER: [(Kind.ROSTER, {"agents": [{"id": "a1", "name": "Main", "status": "BUSY"}]})],
    Kind.ARTIFACT: [
        (Kind.ARTIFACT, {"artifact_id": "art1", "phase": "opened", "title": "main.rs",
                         "content": "fn main() {}\n", "content_type": "code",
                         "language": "rust", "read_only": False}),
        (Kind.ARTIFACT, {"artifact_id": "art1", "phase": "updated", "change_type": "partial",
                         "content": "// end\n"})],
}


class ActivityOps:
    """Seeded random valid activity events; ``many(n)`` gives ``[(kind, data)]``."""

    def __init__(self, seed, limits=None):
        self.rng = random.Random(seed)
        self.limits = limits or A.Limits(transcript=5, tool_calls=4, plans=3, artifacts=3)
        self.activity = A.Activity()
        self.counter = 0

    def _next(self, prefix):
        self.counter += 1
        return f"{prefix}{self.counter}"

    def _pick(self, items, prefix):
        if items and self.rng.random() < 0.5:
            return self.rng.choice(sorted(items))
        return self._next(prefix)

    def one(self):
        rng, act = self.rng, self.activity
        what = rng.choice(["message", "tool", "tool", "delta", "delta", "plan", "resources",
                           "roster", "artifact", "artifact"])
        n = rng.randrange(100)
        if what == "message":
            data = {"message_id": self._pick(act.transcript, "m"),
                    "role": rng.choice(A.ROLES), "sender": "s", "content": f"text {n}"}
        elif what == "tool":
            phase = rng.choice(A.TOOL_PHASES)
            data = {"call_id": self._pick(act.tool_calls, "tc"), "phase": phase,
                    "status": rng.choice(A.TOOL_STATUSES)}
            if phase == "requested":
                data.update(tool_name="grep", parameters={"n": n})
            elif phase == "status":
                data.update(progress=n)
            else:
                data.update(result={"n": n})
        elif what == "delta":
            path = rng.choice(["a", "a.b", "a.c", "x", "x.y.z"])
            current = A.get_path(act.state, path)
            if current is not A.ABSENT and rng.random() < 0.3:
                data = {"path": path, "old_value": current, "removed": True}
            else:
                data = {"path": path, "new_value": rng.choice([n, {"k": n}, [n], None]),
                        "removed": False}
                if A.path_problem(act.state, path, False):
                    data = {"path": rng.choice(["q", "r"]), "new_value": n, "removed": False}
        elif what == "plan":
            data = {"plan_id": self._pick(act.plans, "p"), "title": f"Plan {n}",
                    "content": f"- step {n}", "status": rng.choice(A.PLAN_STATUSES)}
            if (data["plan_id"] not in act.plans and len(act.plans) >= self.limits.plans
                    and all(p["status"] == "ACTIVE" for p in act.plans.values())):
                data["plan_id"] = next(iter(act.plans))  # the service would refuse a new one
        elif what == "resources":
            data = {"root": {"id": "r", "name": f"root {n}", "node_type": "folder",
                             "children": [TREE] if n % 2 else []}}
        elif what == "roster":
            data = {"agents": [{"id": f"a{i}", "name": f"A{i}",
                                "status": rng.choice(A.AGENT_STATUSES)} for i in range(n % 3)]}
        else:
            aid = self._pick(act.artifacts, "art")
            if aid not in act.artifacts and len(act.artifacts) >= self.limits.artifacts:
                aid = next(iter(act.artifacts))  # the service would refuse a new one
            if aid not in act.artifacts:
                data = {"artifact_id": aid, "phase": "opened", "content": f"line {n}\n",
                        "title": aid}
            else:
                change = rng.choice(A.CHANGE_TYPES)
                data = {"artifact_id": aid, "phase": "updated", "change_type": change,
                        "content": f"more {n}\n"}
                if change == "diff":
                    old = act.artifacts[aid]["content"]
                    first = old.split("\n")[0]
                    data["content"] = (f"--- a\n+++ b\n@@ -1 +1 @@\n-{first}\n+changed {n}\n")
                    data["full_content"] = A.apply_unified_diff(old, data["content"])
        kind = {"message": Kind.MESSAGE, "tool": Kind.TOOL_CALL, "delta": Kind.STATE_DELTA,
                "plan": Kind.PLAN, "resources": Kind.RESOURCES, "roster": Kind.ROSTER,
                "artifact": Kind.ARTIFACT}[what]
        self.activity = A.apply(act, kind, data, self.limits)
        return kind, data

    def many(self, n):
        return [self.one() for _ in range(n)]
