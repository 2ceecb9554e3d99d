"""Seed 000's REST message endpoint: ``POST /api/v4/sessions/<id>/messages`` takes JSON-RPC
notifications (seed 000's agent methods: ``ui.render``, ``ui.update``, ...) for a session, one
or a list, all or nothing. An async DRF view on the REST kit (``a2ui.api``)."""

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from a2ui.api.base import A2UIAsyncAPIView
from a2ui.api.permissions import IsAgent
from a2ui.api.views import _key
from a2ui.core import agentmethods, tracecontext
from a2ui.core.errors import DomainError
from a2ui.infra import tracing
from a2ui.push import entry as pushentry
from a2ui.push import outcome
from a2ui.rpc.errors import ErrorCode, ProtocolError


class SessionMessagesView(A2UIAsyncAPIView):
    """Agents push fire-and-forget JSON-RPC notifications (one object or a list) to a session.

    The whole list is validated before anything is delivered, and applied in one transaction:
    a bad item, or one the stored state refuses (``ui.update`` of an unknown component),
    changes nothing and is answered with its ``index``.
    ui.request_input and ui.confirm need an answer, so they go over the agent WebSocket or the
    Python API instead. An ``Idempotency-Key`` header makes a retry safe: the same key for the
    same session is answered with the original outcome (``"replayed": true``), nothing stored
    or shown twice.
    """

    permission_classes = [IsAgent]

    @extend_schema(request=dict, responses={202: dict})
    async def post(self, request, session_id):
        items = request.data if isinstance(request.data, list) else [request.data]
        if not items:
            raise ValidationError({"detail": "Send one JSON-RPC notification or a non-empty list."})
        if len(items) > 100:
            raise ValidationError({"detail": "At most 100 messages per request."})
        key = _key(request)
        batch = [self._validate(i, item, session_id) for i, item in enumerate(items)]
        parent, state = tracecontext.from_headers(request.headers)
        with tracing.span("a2ui.rest.messages", parent, state, session=session_id):
            seqs = await pushentry.apush_batch(request.auth.id, session_id, batch, key)
        delivered = [{"method": m, "seq": None if isinstance(seq, outcome.Pushed) else seq}
                     for (m, _), seq in zip(batch, seqs, strict=True)]
        return Response(outcome.flag({"delivered": delivered}, *seqs),
                        status=status.HTTP_202_ACCEPTED)

    def _validate(self, index, item, session_id):
        try:
            if not isinstance(item, dict) or item.get("jsonrpc") != "2.0":
                raise ProtocolError(ErrorCode.INVALID_REQUEST, data={"index": index})
            method = item.get("method")
            if not isinstance(method, str) or not method:
                raise ProtocolError(ErrorCode.INVALID_REQUEST, data={
                    "index": index, "reason": "method must be a non-empty string"})
            # The dispatch table's entries posted here: rest "messages" (seed 000's pushes).
            entry = agentmethods.get(method)
            if entry is not None and entry.awaits:
                raise ProtocolError(
                    ErrorCode.INVALID_PARAMS,
                    f"{method} awaits the user's answer: use the agent WebSocket or Python API",
                    data={"index": index},
                )
            params = item.get("params")
            if not isinstance(params, dict):
                raise ProtocolError(ErrorCode.INVALID_PARAMS, data={"path": "params"})
            if entry is None or entry.rest != "messages":
                raise ProtocolError(ErrorCode.METHOD_NOT_FOUND, data={"method": method[:100]})
            _, params = pushentry.validate(method, {**params, "session_id": str(session_id)})
            return method, params
        except DomainError as exc:
            exc = ProtocolError.of(exc)
            if isinstance(exc.data, dict):
                exc.data.setdefault("index", index)
            raise exc from None
