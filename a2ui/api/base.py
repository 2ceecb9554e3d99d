"""What every REST view of the app shares: a JSON parser that cannot be made to 500, and the
app's exception handler, so the views behave the same whatever the project's DRF settings."""

import json

from django.core.exceptions import RequestDataTooBig
from rest_framework import status
from rest_framework.exceptions import APIException, ParseError
from rest_framework.parsers import JSONParser
from rest_framework.views import APIView

from ..conf import a2ui_settings
from .exceptions import exception_handler


class PayloadTooLarge(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "Request body exceeds A2UI['MAX_PAYLOAD_SIZE']."
    default_code = "payload_too_large"


class SafeJSONParser(JSONParser):
    """JSON bodies up to MAX_PAYLOAD_SIZE; too large is 413, too deeply nested or invalid 400.

    DRF's parser lets RecursionError (``[[[[...`` a few thousand deep) escape as a 500.
    """

    def parse(self, stream, media_type=None, parser_context=None):
        limit = a2ui_settings.MAX_PAYLOAD_SIZE
        raw = stream.read(limit + 1) if stream is not None else b""
        if len(raw) > limit:
            raise PayloadTooLarge()
        encoding = (parser_context or {}).get("encoding", "utf-8")
        try:
            return json.loads(raw.decode(encoding))
        except RecursionError:
            raise ParseError("JSON parse error - nested too deeply.") from None
        except (ValueError, UnicodeDecodeError) as exc:
            raise ParseError(f"JSON parse error - {exc}") from None


class A2UIAPIView(APIView):
    parser_classes = [SafeJSONParser]

    def get_exception_handler(self):
        return exception_handler

    def handle_exception(self, exc):
        # DRF reads ``request.body`` before any JSON parser runs, and Django refuses a body past
        # DATA_UPLOAD_MAX_MEMORY_SIZE there (an HTML 400): the same 413 as MAX_PAYLOAD_SIZE.
        if isinstance(exc, RequestDataTooBig):
            exc = PayloadTooLarge()
        return super().handle_exception(exc)
