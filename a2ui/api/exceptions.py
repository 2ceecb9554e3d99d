"""DRF exception handler: every error is a 4xx JSON body with a message, never an HTML 500 page;
a request failed by an unreachable database or Redis is 503 with a message (and ``Retry-After``).

A ProtocolError raised by the service layer becomes 400 (or 404 for an unknown session, 409 for
a component that does not exist, 429 when rate limited, 503 for a push whose outcome is unknown:
-32012, the database connection lost while storing it) with the JSON-RPC error object.

A body the JSON value policy refuses (``base.JSONValueRefused``) is 400 with that error object
(``data.path``), except on views that speak A2UI v0.9 (``v09_errors = True``): there it is 422
with the standard ``{"version": "v0.9", "error": {"code": "VALIDATION_FAILED", ...}, "index"}``.
"""

import logging

from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from a2ui.core.content import jsonvalue
from a2ui.core.errors import DomainError
from a2ui.core.surfaces import ValidationFailed
from a2ui.infra import outages
from a2ui.rpc.errors import OUTCOME_UNKNOWN, ErrorCode, ProtocolError

log = logging.getLogger("a2ui.api")

HTTP_STATUS = {
    ErrorCode.SESSION_NOT_FOUND: status.HTTP_404_NOT_FOUND,
    ErrorCode.COMPONENT_NOT_FOUND: status.HTTP_404_NOT_FOUND,
    ErrorCode.RATE_LIMITED: status.HTTP_429_TOO_MANY_REQUESTS,
    ErrorCode.PAYLOAD_TOO_LARGE: status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
    ErrorCode.AUTH_FAILED: status.HTTP_401_UNAUTHORIZED,
    ErrorCode.MAX_SESSIONS: status.HTTP_429_TOO_MANY_REQUESTS,
    ErrorCode.SESSION_EXPIRED: status.HTTP_410_GONE,
    ErrorCode.CONSENT_REQUIRED: status.HTTP_403_FORBIDDEN,
    OUTCOME_UNKNOWN: status.HTTP_503_SERVICE_UNAVAILABLE,
}


def protocol_error_response(exc):
    code = HTTP_STATUS.get(exc.code, status.HTTP_400_BAD_REQUEST)
    if exc.code == ErrorCode.INTERNAL_ERROR:
        code = status.HTTP_500_INTERNAL_SERVER_ERROR
    retry = exc.data.get("retry_after") if isinstance(exc.data, dict) else None
    headers = {"Retry-After": str(retry)} if isinstance(retry, int) else None
    return Response({"error": exc.error_object()}, status=code, headers=headers)


def v09_refusal_response(refusal):
    """A JSON value refusal in a v0.9 batch body (a JSON array) as the v0.9 422 answer."""
    path = refusal.path
    index = path[0] if path and isinstance(path[0], int) else 0
    inner = path[1:] if path and isinstance(path[0], int) else path
    body = ValidationFailed(
        f"{refusal.reason}.", jsonvalue.pointer(inner), None, index).to_error_message()
    body["index"] = index
    return Response(body, status=status.HTTP_422_UNPROCESSABLE_ENTITY)


def unavailable_response(exc):
    """503 for a request that an outage of the database or Redis failed (logged as one line
    by ``services.outages``): the client may retry."""
    response = Response(
        {"detail": f"Service unavailable ({outages.cause(exc)}); retry shortly."},
        status=status.HTTP_503_SERVICE_UNAVAILABLE, headers={"Retry-After": "2"})
    response._has_been_logged = True  # the outage's line says it: not Django's ERROR as well
    return response


def exception_handler(exc, context):
    request = context.get("request")
    if outages.report(exc, outages.http_what(request) if request else "API request"):
        return unavailable_response(exc)
    refusal = getattr(exc, "refusal", None)
    if refusal is not None and getattr(context.get("view"), "v09_errors", False):
        return v09_refusal_response(refusal)
    if isinstance(exc, DomainError):
        return protocol_error_response(ProtocolError.of(exc))
    return drf_exception_handler(exc, context)
