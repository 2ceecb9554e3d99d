"""A person's messages to the agent, and the session of a v0.9 client (attach, stream checks)."""

from channels.db import database_sync_to_async

from a2ui.consent import choices as consent
from a2ui.core.content.sanitize import clean_string
from a2ui.core.errors import DomainError, Fault
from a2ui.core.surfaces import PROTOCOL_VERSION, ValidationFailed, validate_client_message
from a2ui.infra import groups, shared
from a2ui.models import A2UISessionLog, Surface
from a2ui.requests import pending
from a2ui.sessions import lifecycle as sessions
from a2ui.sessions.counters import buffer
from a2ui.surfaces.cleaning import (
    SurfaceValidationError,
    TooDeep,
    _depth_ok,
    _failed,
    clean_json,
)

MAX_CLIENT_BATCH = 50  # actions/errors per client frame
MAX_DATA_MODEL_DEPTH = 48


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


async def aclient_messages(session_id, messages, data_model=None, *, answers=None, via=None):
    """Validate a person's ``action`` / ``error`` messages and send them to the agent.

    The agent's sockets get ``a2ui.v09`` ``{"session_id", "messages", "dataModel"?}``;
    ``dataModel`` (the official client data model form) holds the model of each
    ``sendDataModel`` surface the messages concern: the client's copy when it sent one, else
    the server's. Returns the number of messages delivered.

    ``answers``: the surfaces a protocol made of the session's requests and components (the
    v0.9 socket's: ``a2ui.core.surfaces.translate.ANSWERS``), whose actions are answers, not messages
    for the agent: ``answers.owns(surface_id)``, ``answers.request_id(surface_id)`` (the
    request a surface asks, or None) and ``answers.read(action, input_type)`` ->
    ``(what, target, value)``. ``via``: the protocol of the client, for the answers' metrics
    (``pending.aanswer``).
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
    answers_of, answers = answers, []  # actions on a protocol's own surfaces: answers
    for index, message in enumerate(normalized):
        action = message.get("action")
        if action is not None and answers_of is not None and answers_of.owns(action["surfaceId"]):
            answers.append((index, action))
    if answers:
        taken = {i for i, _ in answers}
        normalized = [m for i, m in enumerate(normalized) if i not in taken]
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
    if answers or any("action" in m for m in normalized):
        await consent.aensure_session(session_id)  # user data goes to the agent: -32010 if not
    buffer.add(session_id)
    for index, action in answers:
        await _answer(session_id, index, action, answers_of, via)
    if agent_id and normalized:
        params = {"session_id": str(session_id), "messages": normalized}
        if models:
            params["dataModel"] = {"version": PROTOCOL_VERSION, "surfaces": models}
        await groups.send_group(groups.agent_group(agent_id),
                                groups.agent_event("a2ui.v09", params))
    return len(normalized) + len(answers)


async def _answer(session_id, index, action, answers, via=None):
    """A person's action on a translated surface: the answer to an open request or a form
    component's submit (seed 000's ``user.respond``), checked as every answer is
    (``a2ui.requests.pending``: unknown, closed or timed-out requests are refused)."""
    request = None
    request_id = answers.request_id(action["surfaceId"])
    if request_id is not None:
        request = await pending.aopen_request(session_id, request_id)
    input_type = (request.params or {}).get("input_type") if request is not None else None
    what, target, value = answers.read(action, input_type)
    if what == "refused":
        raise _failed(value, "/action/name", target, index)
    if what == "form":
        if not await pending.arespond(session_id, target, value, via=via):
            agent_id = await _agent_of(session_id)
            if agent_id:  # a submitted form component goes to the agent as user.respond
                await groups.send_group(groups.agent_group(agent_id), groups.agent_event(
                    "user.respond", {"session_id": str(session_id), "request_id": target,
                                     "value": value}))
        return
    await pending.aanswer(session_id, target, what, value, via=via)


async def _agent_of(session_id):
    cached = await shared.cached_session(session_id.hex)
    if cached is not None:
        return cached[0] or None
    return await database_sync_to_async(
        lambda: A2UISessionLog.objects.filter(pk=session_id).values_list(
            "agent_id", flat=True).first())()


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
