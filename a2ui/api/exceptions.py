"""DRF exception handler: every error is a 4xx JSON body with a message, never an HTML 500 page.

A ProtocolError raised by the service layer becomes 400 (or 404 for an unknown session, 409 for
a component that does not exist, 429 when rate limited) with the JSON-RPC error object.
"""

import logging

from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from ..protocol.errors import ErrorCode, ProtocolError

log = logging.getLogger("a2ui.api")

HTTP_STATUS = {
    ErrorCode.SESSION_NOT_FOUND: status.HTTP_404_NOT_FOUND,
    ErrorCode.COMPONENT_NOT_FOUND: status.HTTP_404_NOT_FOUND,
    ErrorCode.RATE_LIMITED: status.HTTP_429_TOO_MANY_REQUESTS,
    ErrorCode.PAYLOAD_TOO_LARGE: status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
    ErrorCode.AUTH_FAILED: status.HTTP_401_UNAUTHORIZED,
    ErrorCode.MAX_SESSIONS: status.HTTP_409_CONFLICT,
    ErrorCode.SESSION_EXPIRED: status.HTTP_410_GONE,
    ErrorCode.CONSENT_REQUIRED: status.HTTP_403_FORBIDDEN,
}


def protocol_error_response(exc):
    code = HTTP_STATUS.get(exc.code, status.HTTP_400_BAD_REQUEST)
    if exc.code == ErrorCode.INTERNAL_ERROR:
        code = status.HTTP_500_INTERNAL_SERVER_ERROR
    return Response({"error": exc.error_object()}, status=code)


def exception_handler(exc, context):
    if isinstance(exc, ProtocolError):
        return protocol_error_response(exc)
    return drf_exception_handler(exc, context)
