"""What every fuzz case checks, for sockets (in-process) and REST.

For each hostile frame: every frame the server sends is UTF-8 text (what a real transport can
carry) holding strict JSON; an error is the protocol's own (a known code, a message; never
-32603); a close carries a plain ``int`` application code (Daphne turns anything else into
1011); the consumer does not crash; no ERROR record or traceback is logged; the socket still
answers a valid request afterwards; a refused frame changes no stored state; and nothing stored
is what no client can draw (:func:`undrawable`, issue 23).
"""

from __future__ import annotations

import json
import math

from channels.db import database_sync_to_async

from a2ui.core.content import drawn
from a2ui.infra import shared
from a2ui.models import (
    A2UIConsentRecord,
    A2UISessionLog,
    AgentRun,
    AuditEvent,
    PendingRequest,
    RenderedComponent,
    SessionActivity,
    StreamToken,
    Surface,
)

#: The protocol's codes (seed 000 section 9 plus -32010). -32603 is not a refusal: it is a bug.
KNOWN_CODES = {-32700, -32600, -32601, -32602, -32000, -32001, -32002, -32003, -32004,
               -32005, -32006, -32007, -32010}
V09_CODES = {"VALIDATION_FAILED", "PARSE_ERROR", "INVALID_REQUEST", "INVALID_PARAMS",
             "METHOD_NOT_FOUND", "SESSION_NOT_FOUND", "SESSION_EXPIRED", "AUTH_FAILED",
             "MAX_SESSIONS", "PAYLOAD_TOO_LARGE", "RATE_LIMITED", "CONSENT_REQUIRED",
             "CAPABILITIES_REQUIRED", "COMPONENT_NOT_FOUND"}


def _strict_constant(name):
    raise ValueError(f"{name} is not JSON")


def strict_loads(text):
    return json.loads(text, parse_constant=_strict_constant)


def snapshot_sync(session_ids=()):
    """Every stored row a refused input must leave alone (metric counters excepted)."""
    return {
        "components": sorted(RenderedComponent.objects.values_list(
            "session_id", "component_id", "component_type", "data", "metadata", "position",
            "expires_at").order_by("pk")),
        "requests": list(PendingRequest.objects.values_list(
            "session_id", "request_id", "kind", "params", "status", "answer", "rpc_id",
            "resolved_at").order_by("pk")),
        "surfaces": list(Surface.objects.values_list(
            "session_id", "surface_id", "catalog_id", "state").order_by("pk")),
        # The first metrics flush moves a session from initialized to active, on its own clock.
        "sessions": [(row[0], "live" if row[1] in ("initialized", "active") else row[1], *row[2:])
                     for row in A2UISessionLog.objects.values_list(
                         "session_id", "state", "surface_seq", "closed_at", "close_reason",
                         "client_info", "capabilities").order_by("pk")],
        "audit": AuditEvent.objects.count(),
        "consents": list(A2UIConsentRecord.objects.values_list(
            "pk", "consent_type", "granted", "revoked_at").order_by("pk")),
        "tokens": list(StreamToken.objects.values_list("pk", "revoked_at").order_by("pk")),
        # A run's stream beats on its own clock (heartbeat_at): left out.
        "runs": list(AgentRun.objects.values_list(
            "session_id", "run_id", "thread_id", "status", "outcome", "ended_at").order_by("pk")),
        "activity": list(SessionActivity.objects.values_list(
            "session_id", "state", "transcript", "tool_calls", "plans", "resources", "roster",
            "artifacts").order_by("pk")),
    }


async def snapshot(session_ids=()):
    state = await database_sync_to_async(snapshot_sync)()
    state["seq"] = [await shared.current_seq(s.replace("-", "")) for s in session_ids]
    return state


def _beyond(value, low=-drawn.MAX_DRAWN, high=drawn.MAX_DRAWN):
    return isinstance(value, int | float) and not isinstance(value, bool) and \
        not low <= value <= high


def _chart_problem(data):
    x_axis = data.get("x_axis") if isinstance(data.get("x_axis"), dict) else {}
    values = x_axis.get("values") if isinstance(x_axis.get("values"), list) else []
    series = [s for s in data.get("series") or [] if isinstance(s, dict)]
    low = 0 if data.get("chart_type") == "pie" else -drawn.MAX_DRAWN
    points = [s.get("data") for s in series if isinstance(s.get("data"), list)]
    return (len(data.get("series") or []) > drawn.MAX_CHART_SERIES
            or len(values) > drawn.MAX_CHART_POINTS or any(_beyond(v) for v in values)
            or any(len(p) > drawn.MAX_CHART_POINTS or any(_beyond(v, low) for v in p)
                   for p in points))


def _range_problem(d):
    return isinstance(d, dict) and (_beyond(d.get("min")) or _beyond(d.get("max")))


def undrawable(state):
    """Stored components, prompts and surfaces that hold what no client can draw (numbers
    beyond a2ui/core/content/drawn.py's bounds, too many series, points or steps, a negative pie
    slice): written independently of drawn.py's functions, with its bounds."""
    found = []
    for _sid, cid, ctype, data, *_ in state["components"]:
        if not isinstance(data, dict):
            continue
        content = data.get("content")
        for view in [data] + ([{**content, **data}] if isinstance(content, dict) else []):
            if ctype == "chart" and _chart_problem(view):
                found.append(f"chart {cid}: {view!r:.200}")
            elif ctype == "form" and any(_range_problem(f) for f in view.get("fields") or []):
                found.append(f"form {cid}: {view!r:.200}")
            elif ctype == "steps" and len(view.get("steps") or []) > drawn.MAX_STEPS:
                found.append(f"steps {cid}: {len(view['steps'])} steps")
    for _sid, rid, _kind, params, *_ in state["requests"]:
        if isinstance(params, dict) and _range_problem(params.get("validation")):
            found.append(f"request {rid}: {params!r:.200}")
    for row in state["surfaces"]:
        components = row[3].get("components") if isinstance(row[3], dict) else None
        for value in (components or {}).values():
            if isinstance(value, dict) and (
                    _beyond(value.get("weight"), 0, drawn.MAX_WEIGHT)
                    or (value.get("component") == "Slider"
                        and (_range_problem(value) or _beyond(value.get("value"))))):
                found.append(f"v0.9 component: {value!r:.200}")
        stack = list((components or {}).values())
        while stack:  # formatNumber / formatCurrency calls at any depth of a component
            value = stack.pop()
            if isinstance(value, list):
                stack.extend(value)
            elif isinstance(value, dict):
                stack.extend(value.values())
                args = value.get("args")
                if value.get("call") in ("formatNumber", "formatCurrency") and \
                        isinstance(args, dict) and _beyond(args.get("decimals"), 0,
                                                           drawn.MAX_DECIMALS):
                    found.append(f"v0.9 call: {value!r:.200}")
    return found


def diff(before, after):
    """What changed, with the first differing row of each part."""
    changed = []
    for key in before:
        old, new = before[key], after.get(key)
        if old == new:
            continue
        if isinstance(old, list) and isinstance(new, list):
            rows = [(a, b) for a, b in zip(old, new, strict=False) if a != b]
            detail = f"{rows[0][0]!r:.200} -> {rows[0][1]!r:.200}" if rows else \
                f"{len(old)} -> {len(new)} rows"
        else:
            detail = f"{old!r:.100} -> {new!r:.100}"
        changed.append(f"{key}: {detail}")
    return changed


def check_text(text, problems):
    """A server frame must be UTF-8-encodable strict JSON without a traceback in it."""
    if not isinstance(text, str):
        problems.append(f"non-text frame {text!r:.80}")
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        problems.append(f"frame not encodable as UTF-8 (1011 on a real socket): {text[:120]!a}")
        return None
    try:
        obj = strict_loads(text)
    except ValueError as exc:
        problems.append(f"frame is not strict JSON ({exc}): {text[:120]!a}")
        return None
    if "Traceback" in text:
        problems.append(f"traceback in frame: {text[:200]!a}")
    return obj


def check_rpc_error(obj, problems):
    """True when ``obj`` is a JSON-RPC error reply (checked: known code, a message)."""
    if not isinstance(obj, dict) or "error" not in obj or "method" in obj:
        return False
    error = obj["error"]
    if not isinstance(error, dict) or error.get("code") not in KNOWN_CODES:
        problems.append(f"error code not the protocol's: {json.dumps(obj)[:300]}")
    elif not isinstance(error.get("message"), str) or not error["message"]:
        problems.append(f"error without a message: {json.dumps(obj)[:300]}")
    return True


def check_v09_error(obj, problems):
    if not isinstance(obj, dict) or "error" not in obj:
        return False
    error = obj["error"]
    if not isinstance(error, dict) or error.get("code") not in V09_CODES:
        problems.append(f"v0.9 error code not the protocol's: {json.dumps(obj)[:300]}")
    elif not isinstance(error.get("message"), str) or not error["message"]:
        problems.append(f"v0.9 error without a message: {json.dumps(obj)[:300]}")
    return True


AGUI_CODES = {"PARSE_ERROR", "INVALID_EVENT", "INVALID_VERSION", "INVALID_EVENT_DATA",
              "MISSING_FIELD", "CONNECTION_ERROR"}


def check_agui_error(obj, problems):
    """True when ``obj`` is a seed-003 ERROR event (checked: the envelope, a seed code, a
    message, no null anywhere)."""
    event = obj.get("event") if isinstance(obj, dict) else None
    if not isinstance(event, dict) or event.get("type") != "ERROR":
        return False
    if set(obj) != {"version", "id", "timestamp", "event"}:
        problems.append(f"AG-UI envelope malformed: {json.dumps(obj)[:300]}")
    if event.get("code") not in AGUI_CODES:
        problems.append(f"AG-UI error code not the seed's: {json.dumps(obj)[:300]}")
    elif not isinstance(event.get("message"), str) or not event["message"]:
        problems.append(f"AG-UI error without a message: {json.dumps(obj)[:300]}")
    if "null" in json.dumps(obj):
        problems.append(f"AG-UI error with a null (optional fields are left out): "
                        f"{json.dumps(obj)[:300]}")
    return True


def check_close(code, problems, allowed=()):
    """Daphne (autobahn) sends a close code only if it is exactly an int of the right range."""
    if type(code) is not int:
        problems.append(f"close code {code!r} is a {type(code).__name__}, not int: 1011 on a "
                        "real socket")
    elif not (code == 1000 or 3000 <= code <= 4999):
        problems.append(f"close code {code} outside 1000/3000-4999")
    elif allowed is not None and code not in allowed:
        problems.append(f"socket closed with {code}")


def finite(value):
    return not isinstance(value, float) or math.isfinite(value)


class Failures:
    """Failures of one test, reported together (with the frames that caused them)."""

    def __init__(self, seed):
        self.seed = seed
        self.items = []

    def add(self, frame, problems):
        for problem in problems:
            self.items.append(f"{frame.short()}\n      -> {problem}")

    def check(self):
        if self.items:
            head = f"{len(self.items)} fuzz failure(s); replay with A2UI_FUZZ_SEED={self.seed}"
            shown = "\n  ".join(self.items[:40])
            more = f"\n  ... and {len(self.items) - 40} more" if len(self.items) > 40 else ""
            raise AssertionError(f"{head}\n  {shown}{more}")
