"""The core's session events (``a2ui.core.events``) in seed-003 AG-UI words. Sans-I/O.

Each function returns a list of AG-UI events (possibly empty: a kind the seed has no word for
is not translated; docs/protocol-agui.md lists them).

==================  ==================================================================================
session event       AG-UI event
==================  ==================================================================================
component.rendered  RENDER_REQUEST ``component_id``, ``schema {"type": component_type, ...data}``,
                    ``props`` = metadata (left out when empty)
component.updated   STATE_DELTA ``path "components.<id>.<replace|merge|append>"``, ``new_value`` = data
component.removed   STATE_DELTA ``path "components.<id>"`` with no value (removed)
request.opened      RENDER_REQUEST ``component_id`` = request_id, ``schema {"type": "input"|"confirm",
                    ...params}``
request.closed      STATE_DELTA ``path "requests.<id>.status"``, ``new_value`` = status
progress            TOOL_CALL_STATUS ``id`` = task_id, RUNNING (COMPLETED at value >= total),
                    ``progress`` 0..100 when a total is known, ``message``
notify              TEXT_MESSAGE ``sender "agent"``, ``content`` = message, ``metadata {level, title,
                    duration_ms}``
consent.required    TEXT_MESSAGE ``sender "system"``, ``metadata {"consent_required": [...]}``
message             TEXT_MESSAGE ``sender``, ``content``, ``metadata {..., role, message_id}``
tool_call           TOOL_CALL_REQUEST (requested), TOOL_CALL_STATUS (status), TOOL_CALL_RESULT
                    (result); ``id`` = call_id
state.delta         STATE_DELTA ``path``, ``old_value``, ``new_value`` (removed: no new_value)
plan                PLAN_CARD ``id`` = plan_id
resources           RESOURCE_TREE; roster: AGENT_ROSTER
artifact            ARTIFACT_OPEN (opened; title defaults to the id, content_type to "text"),
                    ARTIFACT_UPDATE (updated: ``content`` and ``change_type`` as the agent sent)
message.batch       one TEXT_MESSAGE per message, in order
surface.batch       per surface the batch touches: RENDER_REQUEST ``component_id
                    "a2ui-surface-<surfaceId>"``, ``schema {"type": "a2ui-surface", "surface_id",
                    "catalog_id"?, "a2ui_operations": [the batch's v0.9 messages of the surface],
                    "append"?: true}`` (``append`` when the operations do not start with
                    createSurface: they follow the ones shown); a surface the batch deletes (and
                    does not create again) is STATE_DELTA ``path "components.a2ui-surface-<id>"``
                    with no value, as a removed component
navigate            TEXT_MESSAGE ``sender "agent"``, ``content`` = the url, ``metadata {"navigate":
                    {url, new_tab}}`` (the seed has no navigation event: the person gets the link)
run.ended           TOOL_CALL_STATUS ``id`` = run_id, COMPLETED (finished) / CANCELLED (cancelled) /
                    FAILED, ``message``; then TOOL_CALL_RESULT ``result`` (finished with a result)
                    or ``error`` (the message or code of a run that did not finish)
==================  ==================================================================================

Every kind has a form (``NOT_TRANSLATED`` is empty). A resuming socket's state
(``session_state``) is the same words for what the session holds: each component, surface
(its whole state: ``a2ui_operations`` starting with createSurface) and open request as a
RENDER_REQUEST, then the activity (``activity_state``). Folding that state and the events
after it gives the state read later (tests/agui/test_agui_every_kind.py).
"""

from a2ui.agui import protocol as p
from a2ui.core.errors import Fault
from a2ui.core.events import Kind

NOT_TRANSLATED = frozenset()  # every kind has a seed-003 form

SURFACE = "a2ui-surface"  # the RENDER_REQUEST schema type of an A2UI v0.9 surface
OPERATIONS = "a2ui_operations"  # as AG-UI 1.0's a2ui-surface activity (@ag-ui/a2ui-middleware)


def _schema(kind, data):
    return {"type": kind, **data} if isinstance(data, dict) else {"type": kind, "data": data}


def component(c):
    """A component (snapshot row or component.rendered data) as a RENDER_REQUEST."""
    return p.render_request(c["component_id"], _schema(c["component_type"], c.get("data")),
                            c.get("metadata") or None)


def request(kind, params):
    """An open request (input or confirm) as a RENDER_REQUEST keyed by its request_id."""
    params = dict(params)
    request_id = params.pop("request_id")
    return p.render_request(request_id, _schema(kind, params))


def _percent(value, total):
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    if isinstance(total, int | float) and not isinstance(total, bool) and total > 0:
        return max(0, min(100, round(100 * value / total)))
    if 0 <= value <= 100:  # a bare percentage
        return round(value)
    return None


def progress(data):
    value, total = data.get("value"), data.get("total")
    done = (isinstance(value, int | float) and isinstance(total, int | float)
            and total > 0 and value >= total)
    return p.tool_call_status(str(data["task_id"]), "COMPLETED" if done else "RUNNING",
                              _percent(value, total), data.get("message") or None)


def notify(data):
    metadata = {k: data[k] for k in ("level", "title", "duration_ms") if data.get(k) is not None}
    return p.text_message("agent", data.get("message") or data.get("title") or "",
                          metadata or None)


def consent_required(data):
    types = data.get("consent_types") or []
    return p.text_message("system", "Consent is required before answering.",
                          {"consent_required": types})


def message(data):
    metadata = {**(data.get("metadata") or {}), "role": data["role"],
                "message_id": data["message_id"]}
    return p.text_message(data["sender"], data["content"], metadata)


def tool_call(data):
    cid = data["call_id"]
    if data["phase"] == "requested":
        return p.build("TOOL_CALL_REQUEST", id=cid, tool_name=data.get("tool_name") or "",
                        parameters=data.get("parameters") or {}, agent_id=data.get("agent_id"))
    if data["phase"] == "status":
        return p.tool_call_status(cid, data["status"], data.get("progress"), data.get("message"))
    return p.build("TOOL_CALL_RESULT", id=cid, result=data.get("result"),
                    error=data.get("error"))


def delta(data):
    if data.get("removed"):
        return p.state_delta(data["path"], old_value=data.get("old_value"))
    return p.state_delta(data["path"], data.get("old_value"), data.get("new_value"))


def plan(data):
    return p.build("PLAN_CARD", id=data["plan_id"], title=data["title"],
                    content=data["content"], status=data["status"])


def artifact_open(data):
    return p.build("ARTIFACT_OPEN", id=data["artifact_id"],
                    title=data.get("title") or data["artifact_id"], content=data["content"],
                    content_type=data.get("content_type") or "text",
                    read_only=data.get("read_only"), language=data.get("language"))


def artifact(data):
    if data["phase"] == "opened":
        return artifact_open(data)
    return p.build("ARTIFACT_UPDATE", id=data["artifact_id"], content=data["content"],
                    change_type=data["change_type"])


_ACTIVITY = {
    Kind.MESSAGE: message, Kind.TOOL_CALL: tool_call, Kind.STATE_DELTA: delta, Kind.PLAN: plan,
    Kind.RESOURCES: lambda data: p.build("RESOURCE_TREE", root=data["root"]),
    Kind.ROSTER: lambda data: p.build("AGENT_ROSTER", agents=data["agents"]),
    Kind.ARTIFACT: artifact,
}


def surface_key(surface_id):
    """The RENDER_REQUEST ``component_id`` of a v0.9 surface (AG-UI 1.0's activity id too)."""
    return f"{SURFACE}-{surface_id}"


def _surface_render(surface_id, operations):
    schema = {"type": SURFACE, "surface_id": surface_id}
    create = operations[0].get("createSurface") if operations else None
    if isinstance(create, dict):
        schema["catalog_id"] = create.get("catalogId")
    else:
        schema["append"] = True
    schema[OPERATIONS] = operations
    return p.render_request(surface_key(surface_id), {k: v for k, v in schema.items()
                                                      if v is not None})


def _body(message):
    return next((v for k, v in message.items() if k != "version"), None) \
        if isinstance(message, dict) else None


def surface_batch(data):
    """A ``surface.batch`` (validated A2UI v0.9 messages) as one event per surface touched,
    in the order the batch first touches them: RENDER_REQUEST with the surface's operations
    of the batch, or its removal when the batch ends by deleting it."""
    by_surface = {}
    for message in data.get("messages") or ():
        body = _body(message)
        if isinstance(body, dict) and isinstance(body.get("surfaceId"), str):
            by_surface.setdefault(body["surfaceId"], []).append(message)
    events = []
    for surface_id, messages in by_surface.items():
        deleted = [i for i, m in enumerate(messages) if "deleteSurface" in m]
        operations = messages[deleted[-1] + 1:] if deleted else messages
        if operations:
            events.append(_surface_render(surface_id, operations))
        else:
            events.append(p.state_delta(f"components.{surface_key(surface_id)}"))
    return events


def surface_state(messages):
    """A stored surface (``SurfaceState.snapshot_messages``: createSurface first) whole."""
    body = _body(messages[0]) if messages else None
    return _surface_render(body["surfaceId"], list(messages))


def navigate(data):
    url = data["url"]
    return p.text_message("agent", url, {"navigate": {"url": url,
                                                      "new_tab": bool(data.get("new_tab"))}})


_RUN_STATUS = {"finished": "COMPLETED", "cancelled": "CANCELLED"}


def run_ended(data):
    """The agent ended a run (AG-UI 1.0's): the run as a finished (or failed) task."""
    run_id, status = str(data["run_id"]), _RUN_STATUS.get(data.get("status"), "FAILED")
    message = data.get("message") or data.get("code")
    out = [p.tool_call_status(run_id, status, None, message if isinstance(message, str) else None)]
    if status == "COMPLETED":
        if data.get("result") is not None:
            out.append(p.build("TOOL_CALL_RESULT", id=run_id, result=data["result"]))
    elif isinstance(message, str) and message:
        out.append(p.build("TOOL_CALL_RESULT", id=run_id, error=message))
    return out


def _tool_state(call):
    events = []
    if call.get("tool_name"):
        events.append(tool_call({**call, "phase": "requested"}))
    events.append(tool_call({**call, "phase": "status"}))
    if "result" in call or "error" in call:
        events.append(tool_call({**call, "phase": "result"}))
    return events


def activity_state(activity):
    """The AG-UI events that show a session's activity (``a2ui.core.activity.to_dict``) to a
    resuming client: the transcript (TEXT_MESSAGE each), the tool calls (TOOL_CALL_REQUEST,
    their latest STATUS, and RESULT once they have one), the state document (one STATE_DELTA per top-level key),
    the plan cards, the resource tree, the roster and the open artifacts (ARTIFACT_OPEN with
    their current content)."""
    events = [message(m) for m in activity.get("transcript") or []]
    for call in activity.get("tool_calls") or []:
        events.extend(_tool_state(call))
    for key, value in (activity.get("state") or {}).items():
        events.append(p.state_delta(key, new_value=value) if value is not None
                      else p.state_delta(key))
    events.extend(plan(x) for x in activity.get("plans") or [])
    if activity.get("resources") is not None:
        events.append(_ACTIVITY[Kind.RESOURCES]({"root": activity["resources"]}))
    if activity.get("roster") is not None:
        events.append(_ACTIVITY[Kind.ROSTER]({"agents": activity["roster"]}))
    events.extend(artifact_open(a) for a in activity.get("artifacts") or [])
    return events


def session_state(components, requests, surfaces, activity):
    """The events a resuming (or resyncing) socket is sent: each component, each surface
    (``surfaces``: each one's snapshot messages) and each open request as a RENDER_REQUEST,
    then the activity (``activity_state``)."""
    events = [component(c) for c in components]
    events += [surface_state(messages) for messages in surfaces if messages]
    events += [request(r["kind"], r["params"]) for r in requests]
    return events + activity_state(activity or {})


def translate(kind, data):
    """AG-UI events for one session event (``kind`` an ``a2ui.core.events.Kind``)."""
    if kind is Kind.COMPONENT_RENDERED:
        return [component(data)]
    if kind is Kind.COMPONENT_UPDATED:
        return [p.state_delta(f"components.{data['component_id']}.{data['operation']}",
                              new_value=data.get("data"))]
    if kind is Kind.COMPONENT_REMOVED:
        return [p.state_delta(f"components.{data['component_id']}")]
    if kind is Kind.REQUEST_OPENED:
        return [request(data["kind"], data["params"])]
    if kind is Kind.REQUEST_CLOSED:
        return [p.state_delta(f"requests.{data['request_id']}.status",
                              new_value=data["status"])]
    if kind is Kind.PROGRESS:
        return [progress(data)]
    if kind is Kind.NOTIFY:
        return [notify(data)]
    if kind is Kind.CONSENT_REQUIRED:
        return [consent_required(data)]
    if kind in _ACTIVITY:
        return [_ACTIVITY[kind](data)]
    if kind is Kind.MESSAGE_BATCH:
        return [message(m) for m in data["messages"]]
    if kind is Kind.SURFACE_BATCH:
        return surface_batch(data)
    if kind is Kind.NAVIGATE:
        return [navigate(data)]
    if kind is Kind.RUN_ENDED:
        return run_ended(data)
    return []  # a kind this version does not know


# Domain errors (a2ui.core.errors) in the seed's codes -----------------------------------------

_CODE_BY_FAULT = {
    Fault.PARSE: p.PARSE_ERROR,
    Fault.INVALID_REQUEST: p.INVALID_EVENT,
    Fault.UNKNOWN_OPERATION: p.INVALID_EVENT,
    Fault.INVALID_INPUT: p.INVALID_EVENT_DATA,
    Fault.PAYLOAD_TOO_LARGE: p.INVALID_EVENT_DATA,
    Fault.COMPONENT_NOT_FOUND: p.INVALID_EVENT_DATA,
    Fault.REQUEST_TIMEOUT: p.INVALID_EVENT_DATA,
    Fault.REQUEST_TAKEN_OVER: p.INVALID_EVENT_DATA,
    Fault.CONSENT_REQUIRED: p.INVALID_EVENT,
}  # the rest (session, auth, rate limit, internal) are CONNECTION_ERROR


def fault_error(fault, message=None, data=None):
    """An ERROR event for a domain error: the seed's code, ``details.reason`` the fault and
    ``details.field`` the offending field when the service named one."""
    code = _CODE_BY_FAULT.get(fault, p.CONNECTION_ERROR)
    details = {"reason": str(fault)}
    if isinstance(data, dict):
        details.update({k: v for k, v in data.items() if k != "path"})
        if isinstance(data.get("path"), str):
            details["field"] = data["path"]
            if data.get("reason"):
                details["reason"] = data["reason"]
    return p.error(code, message or str(fault).replace("_", " ").capitalize() + ".", details)


_MAX_CACHED = 2048
_cache = {}


def encoded_cached(session_hex, kind, message):
    """The encoded AG-UI events (``protocol.encode_event``) of one session event, translated
    and encoded once per (session, epoch, seq) and process, whatever the number of sockets;
    each socket then only wraps them in its own envelope (``protocol.frame``). An event that
    cannot be encoded is left out (and logged once by the caller's policy: None in the list)."""
    seq = message.get("seq")
    key = None if seq is None else (session_hex, message.get("epoch"), seq)
    texts = _cache.get(key) if key is not None else None
    if texts is None:
        texts = []
        for event in translate(kind, message["data"]):
            try:
                texts.append(p.encode_event(event))
            except (p.AguiError, ValueError, TypeError):
                texts.append(None)
        if key is not None:
            if len(_cache) >= _MAX_CACHED:
                for old in list(_cache)[: _MAX_CACHED // 4]:
                    del _cache[old]
            _cache[key] = texts
    return texts


def clear_cache():
    """Forget every cached translation (``Adapter.caches``: ``a2ui.infra.memory`` empties
    it once sockets have closed)."""
    _cache.clear()
