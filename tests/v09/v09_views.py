"""Shared pieces for the tests of seed-000 components shown to v0.9 clients (a2ui.v09.view).

``ClientModel`` is what a v0.9 client holds: the messages it receives applied with the strict
validator (``a2ui.v09.SessionSurfaces``, a complete tree after every updateComponents), so a
message that breaks a rule fails the test; ``shown()`` is what it shows (each surface's
reachable components and data model). ``webcore(batches)`` runs the official
@a2ui/web_core MessageProcessor on them (tests/v09/node/webcore_check.mjs).
"""

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from a2ui.core.surfaces import SessionSurfaces

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tests" / "v09" / "node" / "webcore_check.mjs"

SAMPLES = {
    "card": {"title": "Order #12 <b>", "description": "Shipped *today*", "sections": [
        {"label": "Total", "value": 12.5}, {"label": "Paid", "value": True}],
        "actions": [{"label": "Track", "action": "navigate", "url": "https://example.com/t"},
                    {"label": "Nothing", "action": "noop"}]},
    "table": {"title": "People", "caption": "two", "headers": [
        {"key": "name", "label": "Name"}, {"key": "age", "label": "Age", "sortable": True}],
        "rows": [{"name": "Ada", "age": 36}, {"name": "Alan", "age": 41}, {"name": "x|y"}]},
    "form": {"title": "Sign up", "fields": [
        {"name": "name", "type": "text", "label": "Name", "required": True},
        {"name": "mail", "type": "email", "label": "Mail", "pattern": "^.+@.+$"},
        {"name": "age", "type": "number", "min": 0, "max": 120},
        {"name": "bio", "type": "textarea"},
        {"name": "plan", "type": "select", "options": ["free", "pro"], "default": "pro"},
        {"name": "day", "type": "date"},
        {"name": "a/b", "type": "checkbox", "label": "Terms"}],
        "submit_label": "Go"},
    "chart": {"chart_type": "bar", "title": "Sales", "x_axis": {"label": "Month",
              "values": ["Jan", "Feb", "Mar"]}, "y_axis": {"label": "EUR"},
              "series": [{"name": "2025", "data": [1, 2, None]}, {"name": "2026", "data": [3]}]},
    "markdown": {"content": "# Title\n\n*text* and `code`"},
    "code": {"code": "x = '```'\nprint(x)", "language": "python", "title": "Snippet"},
    "image": {"url": "https://example.com/a.png", "alt": "A cat", "caption": "Cat",
              "width": 10},
    "alert": {"severity": "warning", "title": "Careful", "message": "Disk *almost* full"},
    "steps": {"title": "Deploy", "steps": [
        {"label": "Build", "status": "completed"},
        {"label": "Test", "status": "active", "description": "running"},
        {"label": "Ship", "status": "pending"}, {"label": "Oops", "status": "error"}],
        "current_step": 1},
}
EMPTY = {"table": {"headers": [], "rows": []}, "card": {"title": ""},
         "chart": {"chart_type": "pie", "series": []}, "steps": {"steps": []},
         "form": {"fields": []}, "alert": {"message": "m"}, "code": {"code": ""},
         "markdown": {"content": ""}, "image": {"url": "/a.png"},
         "content": {"title": "T", "content": {"description": "from content"}}}


class ClientModel:
    """What a v0.9 client holds after the messages it was sent, checked strictly."""

    def __init__(self):
        self.surfaces = SessionSurfaces()
        self.batches = []

    def receive(self, messages):
        for message in messages:  # one at a time: each must be valid where it arrives
            self.surfaces.apply_batch([message], strict="updateComponents" in message)
        if messages:
            self.batches.append(list(messages))

    def shown(self, only=None):
        out = {}
        for sid, state in self.surfaces.states.items():
            if only is None or sid.startswith(only):
                out[sid] = state.snapshot_messages()
        return json.loads(json.dumps(out))


def webcore(batches):
    """The official web_core's verdict on ``batches``: {"ok", "surfaces"} or a failure."""
    node = shutil.which("node")
    if node is None or not (ROOT / "node_modules" / "@a2ui" / "web_core").exists():
        pytest.skip("needs node and node_modules/@a2ui/web_core (npm ci)")
    done = subprocess.run([node, str(SCRIPT)], input=json.dumps(batches), capture_output=True,
                          text=True, cwd=ROOT, timeout=120)
    lines = done.stdout.strip().splitlines()
    assert lines, done.stderr
    return json.loads(lines[-1])
