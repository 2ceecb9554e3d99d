"""A2UI v0.9 surfaces of a session: validate, store, stream, and route actions back.

One entry point per direction, shared by every adapter (agent WebSocket, REST, Python API,
the JSON-RPC user socket, /ws/v09, SSE):

* ``apush(agent_id, session_id, messages)``: an agent's batch of server messages. Validated as a
  whole by ``a2ui.v09.validate_batch`` against the stored states, with the server policy (the
  agent's registered name and icon in ``theme``, http(s)-only URLs, ``sanitize_text`` on Text)
  and the client's declared catalogs. Stored in one transaction that also advances the
  session's ``surface_seq`` by one per message, then sent once to the session group. An invalid
  batch changes nothing and raises :class:`SurfaceValidationError`.
* ``aclient_messages(session_id, messages, data_model=None)``: a person's ``action`` / ``error``
  messages, validated and sent to the agent's sockets as the ``a2ui.v09`` notification, with the
  data model of ``sendDataModel`` surfaces attached.
* ``aload`` / ``snapshot_messages``: a client's starting point, consistent with ``surface_seq``.

Data-model strings are not HTML-sanitized: they are values (form fields, labels bound with
``{"path"}``) and entities would show up literally in inputs. Like every other string in a
message they lose control characters and lone surrogates (which PostgreSQL's jsonb refuses);
renderers must treat bound strings as text (ours builds the DOM from text). Bidirectional
controls are removed from them too (they are displayed), and every value follows the JSON value
policy (``a2ui.protocol.jsonvalue``: I-JSON integers, finite numbers, no NUL in keys) even when
it did not come through a socket or REST parser (the in-process Python API).
"""

import json
from pathlib import Path

from channels.db import database_sync_to_async
from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed
from django.db import transaction
from django.utils import timezone
from django.utils.module_loading import import_string

from ..conf import a2ui_settings
from ..core import events
from ..core.errors import DomainError, Fault
from ..core.events import Kind
from ..models import A2UISessionLog, Surface
from ..protocol import jsonvalue
from ..protocol.sanitize import clean_display_string, clean_string, sanitize_markdown
from ..v09 import (
    BASIC_CATALOG_ID,
    PROTOCOL_VERSION,
    CatalogError,
    CatalogRegistry,
    ServerPolicy,
    SurfaceState,
    ValidationFailed,
    validate_batch,
    validate_client_message,
)
from . import consent, groups, sessions, shared, stream
from .metrics import buffer

MAX_BATCH = 500  # messages per agent batch
MAX_CLIENT_BATCH = 50  # actions/errors per client frame
MAX_DATA_MODEL_DEPTH = 48
#: The cleaner's cut-off, from a message's root: the one free-form limit (jsonvalue.MAX_DEPTH,
#: 32) with room for the envelope and the data model's 48 path levels above a value.
MAX_JSON_DEPTH = 2 * jsonvalue.MAX_DEPTH
MAX_SURFACE_ID = 128  # Surface.surface_id


class SurfaceValidationError(DomainError):
    """A refused batch: invalid input whose data is the standard VALIDATION_FAILED message
    (JSON-RPC -32602 over seed 000, ``a2ui.protocol.errors.ProtocolError.of``).

    ``failure`` is the :class:`a2ui.v09.ValidationFailed`; ``body`` is what REST answers (422)
    and the /ws/v09 socket sends: ``{"version": "v0.9", "error": {...}, "index": n}``.
    """

    def __init__(self, failure):
        self.failure = failure
        body = failure.to_error_message()
        body["index"] = failure.index
        self.body = body
        super().__init__(Fault.INVALID_INPUT, "A2UI v0.9 validation failed", data=body)


def _failed(message, path="", surface_id=None, index=0):
    return SurfaceValidationError(ValidationFailed(message, path, surface_id, index))


# Catalogs --------------------------------------------------------------------------------------

_registry = None


def load_catalog(entry):
    """A catalog definition from a settings entry: a dict, a JSON file path or a dotted path."""
    if isinstance(entry, dict):
        return entry
    if isinstance(entry, Path) or (
        isinstance(entry, str) and (entry.endswith(".json") or "/" in entry or "\\" in entry)
    ):
        try:
            return json.loads(Path(entry).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ImproperlyConfigured(f"A2UI catalog file {str(entry)!r}: {exc}") from exc
    if not isinstance(entry, str):
        raise ImproperlyConfigured(
            f"A2UI['CATALOGS'] entries are dotted paths or JSON file paths, got {entry!r}."
        )
    try:
        obj = import_string(entry)
    except ImportError as exc:
        raise ImproperlyConfigured(f"A2UI catalog {entry!r}: {exc}") from exc
    try:
        definition = obj() if callable(obj) else obj
    except Exception as exc:
        raise ImproperlyConfigured(f"A2UI catalog {entry!r} failed to load: {exc}") from exc
    if not isinstance(definition, dict):
        raise ImproperlyConfigured(f"A2UI catalog {entry!r} is not a JSON object (dict).")
    return definition


def build_registry(entries):
    """The basic catalog plus every configured one, compiled; ImproperlyConfigured if bad."""
    registry = CatalogRegistry()
    if not isinstance(entries, list | tuple):
        raise ImproperlyConfigured("A2UI['CATALOGS'] must be a list.")
    for entry in entries:
        definition = load_catalog(entry)
        try:
            registry.register(definition)
        except CatalogError as exc:
            raise ImproperlyConfigured(f"A2UI catalog {str(entry)[:200]!r}: {exc}") from exc
    return registry


def catalog_registry():
    """The process's registry, built once from A2UI['CATALOGS'] (rebuilt when it changes)."""
    global _registry
    if _registry is None:
        _registry = build_registry(a2ui_settings.CATALOGS)
    return _registry


def _reset_registry(*, setting, **kwargs):
    global _registry
    if setting == "A2UI":
        _registry = None


setting_changed.connect(_reset_registry)


# Capabilities ----------------------------------------------------------------------------------


def client_catalog_ids(capabilities):
    """Catalog ids a client declared, or None when it did not declare A2UI v0.9 at all.

    Accepts the official ``{"v0.9": {"supportedCatalogIds": [...]}}`` and the same wrapped as
    ``{"a2uiClientCapabilities": {...}}``. A bare ``"v0.9"`` without a list means basic only.
    """
    if not isinstance(capabilities, dict):
        return None
    if isinstance(capabilities.get("a2uiClientCapabilities"), dict):
        capabilities = capabilities["a2uiClientCapabilities"]
    if "v0.9" not in capabilities:
        return None
    v09 = capabilities["v0.9"]
    if isinstance(v09, dict) and isinstance(v09.get("supportedCatalogIds"), list):
        return frozenset(c for c in v09["supportedCatalogIds"] if isinstance(c, str))
    return frozenset({BASIC_CATALOG_ID})


def parse_client_capabilities(obj):
    """The capabilities a /ws/v09 client sends first; returns the dict to store on the session.

    ``{"version": "v0.9", "capabilities": {"v0.9": {"supportedCatalogIds": [...]}}}`` (or
    ``a2uiClientCapabilities`` instead of ``capabilities``). Raises SurfaceValidationError.
    """
    if not isinstance(obj, dict) or obj.get("version") not in ("v0.9", "v0.9.1"):
        raise _failed("The first message must be {\"version\": \"v0.9\", \"capabilities\": "
                      "{\"v0.9\": {\"supportedCatalogIds\": [...]}}}.", "/version")
    key = "capabilities" if "capabilities" in obj else "a2uiClientCapabilities"
    caps = obj.get(key)
    if not isinstance(caps, dict) or not isinstance(caps.get("v0.9"), dict):
        raise _failed("Expected an object with a \"v0.9\" object.", f"/{key}")
    ids = caps["v0.9"].get("supportedCatalogIds")
    if not isinstance(ids, list) or not all(isinstance(i, str) and len(i) <= 500 for i in ids) \
            or len(ids) > 50:
        raise _failed("supportedCatalogIds must be an array of at most 50 catalog id strings.",
                      f"/{key}/v0.9/supportedCatalogIds")
    return {"v0.9": {"supportedCatalogIds": list(ids)}}


# Cleaning --------------------------------------------------------------------------------------


class TooDeep(jsonvalue.JSONValueError):
    """A value the cleaner refuses (too deep, or against the JSON value policy)."""


def clean_json(value, path=(), text=clean_display_string):
    """Strings (and keys) without control characters, bidi controls or lone surrogates;
    structure unchanged. ``text=clean_string`` keeps bidi controls (a person's own data).

    Raises TooDeep (with ``.pointer``) past MAX_JSON_DEPTH levels (before Python's recursion
    limit could), for NUL in a key, and for numbers the JSON value policy refuses.
    """
    if len(path) > MAX_JSON_DEPTH:
        raise TooDeep(f"Nested deeper than {MAX_JSON_DEPTH} levels.", path)
    kind = type(value)
    if kind is str:
        return text(value)
    if kind is dict:
        out = {}
        for k, v in value.items():
            if type(k) is str:
                if "\x00" in k:
                    raise TooDeep("NUL (\\u0000) is not accepted in object keys", (*path, k))
                k = text(k)
            out[k] = clean_json(v, (*path, k), text)
        return out
    if kind is list:
        return [clean_json(v, (*path, i), text) for i, v in enumerate(value)]
    problem = (jsonvalue.int_problem(value) if kind is int else
               jsonvalue.float_problem(value) if kind is float else None)
    if problem is not None:
        raise TooDeep(problem, path)
    return value


def _depth_ok(value, limit):
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return False
        if type(item) is dict:
            stack.extend((v, depth + 1) for v in item.values())
        elif type(item) is list:
            stack.extend((v, depth + 1) for v in item)
    return True


# Agent batches ---------------------------------------------------------------------------------


def _policy(agent):
    name = agent.label if agent is not None else None
    icon = (agent.icon_url or None) if agent is not None else None
    # Text literals are markdown to the renderer: HTML-safe, link targets vetted.
    return ServerPolicy.trusted(name, icon, sanitize_text=sanitize_markdown)


def _surface_ids(messages):
    ids = set()
    for message in messages:
        if type(message) is dict:
            for body in message.values():
                if type(body) is dict and type(body.get("surfaceId")) is str:
                    ids.add(body["surfaceId"][:MAX_SURFACE_ID])
    return ids


def _check_catalogs(messages, capabilities):
    """Refuse createSurface for a catalog the session's client did not declare."""
    catalogs = client_catalog_ids(capabilities)
    for index, message in enumerate(messages):
        create = message.get("createSurface")
        if create is None:
            continue
        if catalogs is None:
            raise _failed(
                "The session's client did not declare A2UI v0.9 support (capabilities \"v0.9\"), "
                "so it cannot show surfaces.", "/createSurface", create["surfaceId"], index)
        if create["catalogId"] not in catalogs:
            raise _failed(
                f"The session's client does not support the catalog '{create['catalogId']}' "
                f"(it declared: {', '.join(sorted(catalogs)) or 'none'}).",
                "/createSurface/catalogId", create["surfaceId"], index)


def _link_orphans(before, changes):
    """Re-send components an update made reachable but did not itself carry.

    A snapshot leaves out orphans (it must pass the strict validator). If a later update links
    an orphan by reference only, a client that started from a snapshot would never get it, so
    the last updateComponents of that surface in the batch carries it too (a client that has
    it just replaces it with the same thing).
    """
    created, sent, last = set(), {}, {}
    for i, message in enumerate(changes.messages):
        if "createSurface" in message:
            created.add(message["createSurface"]["surfaceId"])
        elif "updateComponents" in message:
            body = message["updateComponents"]
            sent.setdefault(body["surfaceId"], set()).update(c["id"] for c in body["components"])
            last[body["surfaceId"]] = i
    for sid, index in last.items():
        state = changes.states.get(sid)
        if sid in created or state is None or sid not in before:
            continue
        old = set(before[sid].reachable_ids())
        extra = [c for c in state.reachable_ids() if c not in old and c not in sent[sid]]
        if extra:
            message = changes.messages[index]
            body = message["updateComponents"]
            changes.messages[index] = {**message, "updateComponents": {
                **body, "components": list(body["components"]) + [
                    state.components[c] for c in extra]}}
    return changes.messages


def _id_with_nul(message):
    """JSON Pointer of a surfaceId or component id holding NUL (the cleaner would strip it and
    so change the id), or None."""
    for kind, body in message.items() if type(message) is dict else ():
        if type(body) is not dict:
            continue
        if "\x00" in str(body.get("surfaceId", "")):
            return f"/{kind}/surfaceId"
        components = body.get("components")
        for i, comp in enumerate(components if type(components) is list else ()):
            if type(comp) is dict and "\x00" in str(comp.get("id", "")):
                return f"/{kind}/components/{i}/id"
    return None


def _clean_batch(messages):
    out = []
    for index, message in enumerate(messages):
        nul = _id_with_nul(message)
        if nul is not None:
            raise _failed("NUL (\\u0000) is not accepted in identifiers", nul, None, index)
        try:
            message = clean_json(message)
        except TooDeep as exc:
            raise _failed(exc.reason, exc.pointer, None, index) from None
        create = message.get("createSurface") if type(message) is dict else None
        if type(create) is dict and type(create.get("surfaceId")) is str and \
                len(create["surfaceId"]) > MAX_SURFACE_ID:
            raise _failed(f"A surfaceId has at most {MAX_SURFACE_ID} characters.",
                          "/createSurface/surfaceId", create["surfaceId"][:MAX_SURFACE_ID], index)
        out.append(message)
    return out


def store_batch(session_id, messages):
    """Validate and store one batch; return (first seq, messages to forward)."""
    messages = _clean_batch(messages)
    touched = _surface_ids(messages)
    with transaction.atomic():
        session = (
            A2UISessionLog.objects.select_for_update(of=("self",))
            .select_related("agent")
            .filter(pk=session_id, state__in=A2UISessionLog.LIVE_STATES)
            .first()
        )
        if session is None:
            raise DomainError(Fault.SESSION_NOT_FOUND, data={"session_id": str(session_id)})
        rows = {
            row.surface_id: row
            for row in Surface.objects.filter(session_id=session_id, surface_id__in=touched)
        }
        registry = catalog_registry()
        before = {sid: SurfaceState.from_dict(row.state, registry) for sid, row in rows.items()}
        try:
            changes = validate_batch(before, messages, registry, policy=_policy(session.agent))
        except ValidationFailed as exc:
            raise SurfaceValidationError(exc) from None
        _check_catalogs(changes.messages, session.capabilities)
        out = _link_orphans(before, changes)
        now = timezone.now()
        if changes.deleted:
            Surface.objects.filter(session_id=session_id, surface_id__in=changes.deleted).delete()
        for sid, state in changes.states.items():
            row = rows.get(sid)
            if row is not None and sid not in changes.deleted:
                row.catalog_id, row.state, row.updated_at = state.catalog_id, state.to_dict(), now
                row.save(update_fields=["catalog_id", "state", "updated_at"])
            else:
                Surface.objects.create(session_id=session_id, surface_id=sid,
                                       catalog_id=state.catalog_id, state=state.to_dict(),
                                       created_at=now, updated_at=now)
        first = session.surface_seq + 1
        A2UISessionLog.objects.filter(pk=session_id).update(
            surface_seq=session.surface_seq + len(out)
        )
    return first, out


async def apush(agent_id, session_id, messages):
    """Deliver an agent's batch of A2UI v0.9 messages; return ``{"delivered", "seq"}``."""
    sid = await sessions.aensure_agent_session(agent_id, session_id)
    if not isinstance(messages, list) or not messages:
        raise DomainError(
            Fault.INVALID_INPUT, "messages must be a non-empty array of A2UI v0.9 messages",
            data={"path": "params.messages"},
        )
    if len(messages) > MAX_BATCH:
        raise DomainError(
            Fault.INVALID_INPUT, f"At most {MAX_BATCH} messages per batch",
            data={"path": "params.messages"},
        )
    first, out = await database_sync_to_async(store_batch)(sid, messages)
    buffer.add(sid, pushed=True)
    await stream.emit(sid, Kind.SURFACE_BATCH, batch_data(first, out))
    return {"delivered": len(out), "seq": first + len(out) - 1}


def batch_data(first_seq, messages):
    """The ``surface.batch`` event's data: message ``i`` is number ``first_seq + i`` of the
    session's surface store (``A2UISessionLog.surface_seq``; the SSE event ids)."""
    return {"first_seq": first_seq, "messages": messages}


def surfaces_event(first_seq, messages, seq=None, epoch=None):
    """A ``surface.batch`` channel-layer message (tests; ``apush`` numbers its own)."""
    return events.to_message(Kind.SURFACE_BATCH, batch_data(first_seq, messages), seq, epoch)


def tracked(data):
    """The ``Tracker`` view of a ``surface.batch`` event's data."""
    return {"seq": data["first_seq"], "messages": data["messages"]}


# What a client starts from ---------------------------------------------------------------------


def load(session_id):
    """(surface_seq, [SurfaceState]) read consistently (the session row is locked briefly)."""
    with transaction.atomic():
        seq = (
            A2UISessionLog.objects.select_for_update()
            .filter(pk=session_id)
            .values_list("surface_seq", flat=True)
            .first()
        )
        rows = list(
            Surface.objects.filter(session_id=session_id)
            .order_by("created_at", "id")
            .values_list("state", flat=True)
        )
    return seq or 0, [SurfaceState.from_dict(state, catalog_registry()) for state in rows]


aload = database_sync_to_async(load)


def snapshot_messages(states, catalogs=None):
    """createSurface, updateComponents (reachable from root), updateDataModel for each state.

    ``catalogs``: ids the client supports; surfaces of other catalogs are left out.
    """
    return [
        message
        for state in states
        if catalogs is None or state.catalog_id in catalogs
        for message in state.snapshot_messages()
    ]


class Tracker:
    """What one client socket has been sent: the last sequence number and its surfaces.

    ``accept(event)`` returns the messages to send: [] for a stale event, or None when a gap
    shows that something was lost (the caller resyncs with ``resync``).
    """

    def __init__(self, catalogs=None):
        self.seq = 0
        self.surfaces = {}  # surface id -> catalog id, as the client knows them
        self.catalogs = catalogs

    def _wanted(self, message):
        if self.catalogs is None:
            return True
        create = message.get("createSurface")
        if create is not None:
            return create["catalogId"] in self.catalogs
        body = next(iter(v for k, v in message.items() if k != "version"), None)
        return isinstance(body, dict) and body.get("surfaceId") in self.surfaces

    def _track(self, message):
        if "createSurface" in message:
            body = message["createSurface"]
            self.surfaces[body["surfaceId"]] = body["catalogId"]
        elif "deleteSurface" in message:
            self.surfaces.pop(message["deleteSurface"]["surfaceId"], None)

    def accept(self, event):
        numbered = self.accept_numbered(event)
        return None if numbered is None else [message for _, message in numbered]

    def accept_numbered(self, event):
        """Like ``accept``, with each message's sequence number: [(seq, message)]."""
        first, messages = event["seq"], event["messages"]
        last = first + len(messages) - 1
        if last <= self.seq:
            return []
        if first > self.seq + 1:
            return None
        out = []
        for i, message in enumerate(messages):
            if first + i <= self.seq or not self._wanted(message):
                continue
            self._track(message)
            out.append((first + i, message))
        self.seq = last
        return out

    def resync(self, seq, states):
        """Messages taking the client from what it has to ``states``: delete, then snapshot."""
        out = [{"version": PROTOCOL_VERSION, "deleteSurface": {"surfaceId": sid}}
               for sid in self.surfaces]
        self.surfaces = {}
        snap = snapshot_messages(states, self.catalogs)
        for message in snap:
            self._track(message)
        self.seq = seq
        return out + snap


# Client messages back to the agent -------------------------------------------------------------


def _client_targets(session_id, surface_ids):
    agent_id = (
        A2UISessionLog.objects.filter(pk=session_id).values_list("agent_id", flat=True).first()
    )
    states = {
        state["surfaceId"]: state
        for state in Surface.objects.filter(
            session_id=session_id, surface_id__in=surface_ids
        ).values_list("state", flat=True)
    }
    return agent_id, states


def _check_data_model(data_model):
    """The optional client data model ``{"version": "v0.9", "surfaces": {id: {...}}}``."""
    if data_model is None:
        return {}
    if not isinstance(data_model, dict) or set(data_model) - {"version", "surfaces"} or \
            data_model.get("version") not in ("v0.9", "v0.9.1") or \
            not isinstance(data_model.get("surfaces"), dict):
        raise _failed("The client data model must be {\"version\": \"v0.9\", \"surfaces\": "
                      "{surfaceId: {...}}}.", "/dataModel")
    for sid, model in data_model["surfaces"].items():
        if not isinstance(model, dict):
            raise _failed("Expected an object.", f"/dataModel/surfaces/{sid}", sid)
        if not _depth_ok(model, MAX_DATA_MODEL_DEPTH):
            raise _failed(f"Nested deeper than {MAX_DATA_MODEL_DEPTH} levels.",
                          f"/dataModel/surfaces/{sid}", sid)
    return data_model["surfaces"]


async def aclient_messages(session_id, messages, data_model=None):
    """Validate a person's ``action`` / ``error`` messages and send them to the agent.

    The agent's sockets get ``a2ui.v09`` ``{"session_id", "messages", "dataModel"?}``;
    ``dataModel`` (the official client data model form) holds the model of each
    ``sendDataModel`` surface the messages concern: the client's copy when it sent one, else
    the server's. Returns the number of messages delivered.
    """
    if not isinstance(messages, list) or not messages:
        raise _failed("messages must be a non-empty array of A2UI v0.9 client messages.",
                      "/messages")
    if len(messages) > MAX_CLIENT_BATCH:
        raise _failed(f"At most {MAX_CLIENT_BATCH} messages at once.", "/messages")
    normalized = []
    for index, message in enumerate(messages):
        try:
            normalized.append(validate_client_message(clean_json(message, text=clean_string)))
        except ValidationFailed as exc:
            exc.index = index
            raise SurfaceValidationError(exc) from None
        except TooDeep as exc:
            raise _failed(exc.reason, exc.pointer, None, index) from None
    try:
        client_models = _check_data_model(clean_json(data_model, text=clean_string))
    except TooDeep as exc:
        raise _failed(exc.reason, "/dataModel" + exc.pointer) from None
    wanted = {next(v for k, v in m.items() if k != "version")["surfaceId"] for m in normalized}
    agent_id, states = await database_sync_to_async(_client_targets)(session_id, wanted)
    models = {}
    for index, message in enumerate(normalized):
        action = message.get("action")
        if action is None:
            continue
        state = states.get(action["surfaceId"])
        if state is None:
            raise _failed(f"Unknown surface '{action['surfaceId']}'.", "/action/surfaceId",
                          action["surfaceId"], index)
        if action["sourceComponentId"] not in state.get("components", {}):
            raise _failed(
                f"Surface '{action['surfaceId']}' has no component "
                f"'{action['sourceComponentId']}'.", "/action/sourceComponentId",
                action["surfaceId"], index)
        if state.get("sendDataModel"):
            sid = action["surfaceId"]
            models[sid] = client_models.get(sid, state.get("dataModel", {}))
    if any("action" in m for m in normalized):
        await consent.aensure_session(session_id)  # user data goes to the agent: -32010 if not
    buffer.add(session_id)
    if agent_id:
        params = {"session_id": str(session_id), "messages": normalized}
        if models:
            params["dataModel"] = {"version": PROTOCOL_VERSION, "surfaces": models}
        await groups.send_group(groups.agent_group(agent_id),
                                groups.agent_event("a2ui.v09", params))
    return len(normalized)


# The session for a v0.9 client ----------------------------------------------------------------


async def aattach(token, session_id, capabilities):
    """Open a session (like a2ui.init) or resume one for a /ws/v09 or SSE client."""
    if session_id:
        session = await sessions.aresume_session(token, session_id)
        return session, True
    session = await sessions.aopen_session(token, {"name": "a2ui-v0.9"}, capabilities)
    return session, False


def check_stream_session(token, session_id):
    """The live session ``session_id`` of the token's user and agent, or -32000."""
    sid = sessions._parse_uuid(session_id)
    session = A2UISessionLog.objects.filter(
        pk=sid, user_id=token.user_id, agent_id=token.agent_id,
        state__in=A2UISessionLog.LIVE_STATES,
    ).first()
    if session is None:
        raise DomainError(Fault.SESSION_NOT_FOUND, data={"session_id": str(sid)})
    return session


acheck_stream_session = database_sync_to_async(check_stream_session)


async def aremember(session):
    await shared.cache_session(session.session_id.hex, session.agent_id, session.user_id)
