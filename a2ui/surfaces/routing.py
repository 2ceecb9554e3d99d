"""A person's messages to the agent, and the session of a v0.9 client (attach, stream checks)."""

from channels.db import database_sync_to_async

from a2ui.core.content import jsonvalue
from a2ui.core.content.sanitize import clean_string
from a2ui.core.errors import DomainError, Fault
from a2ui.core.surfaces import ValidationFailed, validate_client_message
from a2ui.infra import shared
from a2ui.models import A2UISessionLog, Surface
from a2ui.sessions import lifecycle as sessions
from a2ui.surfaces.cleaning import (
    SurfaceValidationError,
    TooDeep,
    _failed,
    clean_json,
)

MAX_CLIENT_BATCH = 50  # actions/errors per client frame
MAX_DATA_MODEL_DEPTH = 48


# Client messages back to the agent -------------------------------------------------------------


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
        if not jsonvalue.depth_ok(model, MAX_DATA_MODEL_DEPTH):
            raise _failed(f"Nested deeper than {MAX_DATA_MODEL_DEPTH} levels.",
                          f"/dataModel/surfaces/{sid}", sid)
    return data_model["surfaces"]


def read_client_messages(messages, data_model=None, answers=None):
    """A person's ``action`` / ``error`` messages, validated (sans state):
    ``(normalized messages for the agent, the client's data models by surface, [(index,
    action)] of the actions that answer a request or a form (``answers.owns``))``; a
    ``SurfaceValidationError`` naming the message otherwise."""
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
    answered = []  # actions on a protocol's own surfaces: answers
    for index, message in enumerate(normalized):
        action = message.get("action")
        if action is not None and answers is not None and answers.owns(action["surfaceId"]):
            answered.append((index, action))
    if answered:
        taken = {i for i, _ in answered}
        normalized = [m for i, m in enumerate(normalized) if i not in taken]
    return normalized, client_models, answered


def surface_ids(normalized):
    """The surfaces the client messages concern."""
    return {next(v for k, v in m.items() if k != "version")["surfaceId"] for m in normalized}


def client_targets(session_id, surface_ids):
    """``(agent id, {surface id: stored state})`` of the session."""
    agent_id = agent_of(session_id)
    states = {
        state["surfaceId"]: state
        for state in Surface.objects.filter(
            session_id=session_id, surface_id__in=surface_ids
        ).values_list("state", flat=True)
    }
    return agent_id, states


def agent_of(session_id):
    return A2UISessionLog.objects.filter(pk=session_id).values_list("agent_id", flat=True).first()


def data_models(normalized, states, client_models):
    """Each action checked against its stored surface; the data models of the
    ``sendDataModel`` surfaces they concern (the client's copy, else the server's)."""
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
    return models


# The session for a v0.9 client ----------------------------------------------------------------


def check_stream_session(token, session_id):
    """The live session ``session_id`` of the token's user and agent, or -32000."""
    sid = sessions.parse_session_id(session_id)
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
