"""REST views. Thin: validate the request shape, call the service layer, shape the answer."""

import logging

from django.utils.translation import gettext, gettext_lazy
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from a2ui import surfaces as surface_service
from a2ui import tokens
from a2ui.api.base import A2UIAPIView, A2UIAsyncAPIView, rate_limit, session_id_query
from a2ui.api.permissions import IsAgent, IsPerson
from a2ui.api.serializers import StreamTokenRequestSerializer, StreamTokenResponseSerializer
from a2ui.compliance import audit
from a2ui.core import agentmethods, tracecontext
from a2ui.core.content import idempotency
from a2ui.core.errors import DomainError
from a2ui.infra import tracing
from a2ui.push import answers, outcome
from a2ui.push import entry as pushentry
from a2ui.requests import pending
from a2ui.sessions import lifecycle as sessions
from a2ui.sessions.agents import find_agent

log = logging.getLogger("a2ui")


def _key(request):
    """The request's ``Idempotency-Key`` header (docs/agents.md, "Retrying pushes") or None."""
    return idempotency.read(request.headers.get(idempotency.HEADER), idempotency.HEADER)


#: What a person is shown when the site has no agent to give them (the detail is logged).
NO_AGENT_FOR_PEOPLE = gettext_lazy("No assistant is available on this page yet. Please try "
                                   "again later; the site's operators have been told.")


class StreamTokenView(A2UIAPIView):
    """Issue a stream token for the signed-in person (seed 000 section 2.1)."""

    permission_classes = [IsPerson]

    @extend_schema(
        request=StreamTokenRequestSerializer,
        responses={201: StreamTokenResponseSerializer, 400: OpenApiResponse(description="Bad")},
    )
    def post(self, request):
        body = StreamTokenRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        rate_limit("stream_token", request)  # before the token is minted
        agent_id = body.validated_data.get("agent_id")
        agent = find_agent(agent_id) if agent_id else tokens.default_agent()
        if agent is None:
            if agent_id:
                raise ValidationError({"agent_id": [gettext("Unknown or inactive agent.")]})
            # The person is told what they can do; the site's operators, what to set.
            log.warning("a2ui: %s could not open a session: no default agent (several or no "
                        "active agents and no A2UI['DEFAULT_AGENT']; manage.py check "
                        "--database default names them)", request.user.get_username())
            raise ValidationError({"agent_id": [NO_AGENT_FOR_PEOPLE]})
        issued = tokens.issue_stream_token(request.user, agent, body.validated_data["token_type"])
        audit.record(
            "token.issue", actor=request.user, agent=agent, target=issued.record,
            details={"token_type": issued.token_type},
        )
        return Response(
            {
                "token": issued.token,
                "expires_at": issued.expires_at,
                "token_type": issued.token_type,
            },
            status=status.HTTP_201_CREATED,
        )


class SessionPushView(A2UIAsyncAPIView):
    """Agents push one agent method of the dispatch table (``a2ui.core.agentmethods``) to a
    session: ``POST sessions/<id>/<rest>``, one route per entry with a REST kind of its own
    (:func:`session_push_urls`).

    ``surfaces`` (``a2ui.v09``): a JSON array of A2UI v0.9 server messages, validated as a
    whole before anything is stored or sent: an invalid batch changes nothing and is answered
    422 with the standard ``{"version": "v0.9", "error": {...}}`` (plus ``index``, the position
    of the offending message).

    ``agui`` (``agui.event``): ``{"event": {...}}``, one AG-UI-native event (seed 003:
    TEXT_MESSAGE, TOOL_CALL_*, STATE_DELTA, PLAN_CARD, RESOURCE_TREE, AGENT_ROSTER,
    ARTIFACT_*), checked, then stored with the session, then delivered: a refused event (400
    with ``path`` ``event.<field>``, e.g. a STATE_DELTA whose ``old_value`` differs) changes
    nothing.
    """

    permission_classes = [IsAgent]
    method = None  # the table entry's name (set per route)

    @classmethod
    def for_entry(cls, entry):
        attrs = {"method": entry.name, **(entry.rest_options or {})}
        view = type(f"SessionPushView_{entry.rest}", (cls,), attrs)
        return view.as_view()

    @extend_schema(request=dict, responses={202: dict, 400: dict, 422: dict})
    async def post(self, request, session_id):
        entry = pushentry.entry(self.method)
        read = entry.rest_params or agentmethods.body_params
        params = read(request.data)
        if params is None:
            raise ValidationError(entry.rest_refusal or {
                "detail": "Send a JSON object: the method's params."})
        key = _key(request)
        _, params = entry.validate({**params, "session_id": str(session_id)})
        parent, state = tracecontext.from_headers(request.headers)
        try:
            with tracing.span("a2ui.rest.push", parent, state, method=entry.name,
                              session=session_id):
                result = await pushentry.apush(request.auth.id, session_id, entry.name, params,
                                              key=key, where="")
        except surface_service.SurfaceValidationError as exc:
            return Response(exc.body, status=status.HTTP_422_UNPROCESSABLE_ENTITY)
        if entry.shape != "result":
            result = outcome.answer(result)
        return Response(result, status=status.HTTP_202_ACCEPTED)


def session_push_urls(prefix="v4/sessions/<uuid:session_id>/"):
    """The REST routes of the table's session pushes (``name`` ``a2ui-session-<rest>``)."""
    from django.urls import path

    return [path(f"{prefix}{entry.rest}", SessionPushView.for_entry(entry),
                 name=f"a2ui-session-{entry.rest}")
            for entry in agentmethods.session_pushes()]


class AgentRequestsView(A2UIAPIView):
    """What waits for the calling agent: open ui.request_input / ui.confirm requests of its live
    sessions, and outcomes no agent socket has received yet (the asking process died).

    A read-only view (``?session_id=`` narrows it to one session): taking the outcomes over,
    exactly once, is ``POST /api/v4/requests/take`` (``AgentRequestsTakeView``), the agent
    WebSocket's ``a2ui.pending``, ``agents.apending`` or MCP's ``pending_requests``.
    """

    permission_classes = [IsAgent]

    @extend_schema(responses={200: dict, 400: OpenApiResponse(description="Bad session_id")})
    def get(self, request):
        session_id = session_id_query(request)
        return Response({"requests": pending.listing(request.auth.id, session_id)})


class AgentRequestsTakeView(A2UIAsyncAPIView):
    """``a2ui.pending`` over REST (``answers.apending``): what waits for the calling agent, the
    outcomes no agent received handed to this call, once; open requests listed and left where
    they are. Body ``{"session_id"?}`` (or none) narrows it to one session."""

    permission_classes = [IsAgent]

    @extend_schema(request=dict, responses={200: dict, 400: OpenApiResponse(description="Bad")})
    async def post(self, request):
        body = request.data if request.data is not None else {}
        if not isinstance(body, dict):
            raise ValidationError({"detail": "Send a JSON object: {\"session_id\"?}."})
        session_id = body.get("session_id")
        if session_id is not None:
            if not isinstance(session_id, str):
                raise ValidationError({"session_id": ["Not a session id (a UUID)."]})
            try:
                session_id = sessions.parse_session_id(session_id)
            except DomainError:
                raise ValidationError({"session_id": ["Not a session id (a UUID)."]}) from None
        items, _ = await answers.apending(request.auth.id, session_id)
        return Response({"requests": items})
